import { Option, Redacted } from "effect"
import { createHash, randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import S3rver from "s3rver"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { AppConfigShape } from "../../../src/Config"
import { type MerchantClient, merchantClient } from "../../support/Api"
import { createMerchant } from "../../support/Merchant"
import { type RunningService, startService } from "../../support/Service"

/**
 * Issue 17: attachments through presigned uploads, against the embedded store (bytes in PostgreSQL, this
 * service's HMAC-signed upload endpoint) and against a real S3-protocol server (s3rver, through the AWS SDK v3).
 * Uploads are plain HTTP `PUT`s to the URL the service hands out, with the headers it names.
 */
const pdf = (text: string) => Buffer.from(`%PDF-1.7\n% ${text}\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n`)
const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex")

interface Upload {
  readonly url: string
  readonly method: string
  readonly headers: Record<string, string>
  readonly expires_in_minutes: number
}
interface AttachmentWire {
  readonly id: string
  readonly status: string
  readonly sha256: string | null
  readonly rejection_reason: string | null
  readonly upload: Upload | null
}

const UPLOAD_SECONDS = 4

const suite = (
  name: string,
  store: () => Promise<{ config: Partial<AppConfigShape>; stop: () => Promise<void> }>
) =>
  describe(`attachments on the ${name}`, () => {
    let service: RunningService
    let api: MerchantClient
    let other: MerchantClient
    let stopStore: () => Promise<void>

    beforeAll(async () => {
      const made = await store()
      stopStore = made.stop
      service = await startService({
        config: { rateLimitCapacity: 10_000, attachmentUploadSeconds: UPLOAD_SECONDS, ...made.config }
      })
      api = merchantClient(service, await createMerchant(service.databaseUrl))
      other = merchantClient(service, await createMerchant(service.databaseUrl))
    }, 60_000)
    afterAll(async () => {
      await service?.stop()
      await stopStore?.()
    })

    const declare = async (bytes: Buffer, extra: Record<string, unknown> = {}) => {
      const made = await api.call<AttachmentWire>("POST", "/v1/attachments", {
        file_name: "invoice 42 — März.pdf",
        size_bytes: bytes.length,
        ...extra
      })
      expect(made.status).toBe(201)
      return made.body
    }
    const put = (
      upload: Upload,
      body: Buffer,
      headers: Record<string, string> = upload.headers,
      url = upload.url
    ) => fetch(url, { method: upload.method, headers, body })
    const read = (id: string, client = api) =>
      client.call<AttachmentWire & { error?: { code: string } }>("GET", `/v1/attachments/${id}`)

    /** A request whose payer can read it (the merchant-session policy, exchanged for a payer token). */
    const requestWith = async (attachmentIds: ReadonlyArray<string>) => {
      const refs = await api.setup()
      const made = await api.call<{ id: string }>(
        "POST",
        "/v1/deposit-requests",
        { amount: "3.000000", issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId },
        { "idempotency-key": randomUUID() }
      )
      const set = await api.call<{ attachments: Array<{ id: string }> }>(
        "PUT",
        `/v1/deposit-requests/${made.body.id}/attachments`,
        { attachment_ids: attachmentIds }
      )
      return { id: made.body.id, set }
    }

    it("declares a PDF, takes the bytes at the presigned URL, and marks it uploaded once checked", async () => {
      const bytes = pdf("the invoice")
      const declared = await declare(bytes, { sha256: sha256(bytes) })
      expect(declared.id).toMatch(/^att_/)
      expect(declared.status).toBe("pending")
      expect(declared.upload?.method).toBe("PUT")
      expect(declared.upload?.headers["content-type"]).toBe("application/pdf")
      expect(declared.upload?.expires_in_minutes).toBe(1)
      // The bytes never go to /v1.
      expect(new URL(declared.upload!.url).pathname.startsWith("/v1")).toBe(false)
      expect((await put(declared.upload!, bytes)).status).toBe(200)
      const uploaded = await read(declared.id)
      expect(uploaded.body.status).toBe("uploaded")
      expect(uploaded.body.sha256).toBe(sha256(bytes))
      expect(uploaded.body.upload).toBeNull()
      const listed = await api.call<{ attachments: Array<{ id: string }>; next_cursor: string | null }>(
        "GET",
        "/v1/attachments?limit=1"
      )
      expect(listed.body.attachments[0]?.id).toBe(declared.id)
    })

    it.each([
      ["bigger than declared", (b: Buffer) => ({ body: Buffer.concat([b, Buffer.from("extra bytes")]) })],
      ["of another content type", (b: Buffer) => ({ body: b, headers: { "content-type": "text/html" } })],
      ["not a PDF", (b: Buffer) => ({ body: Buffer.from(`<html>${"x".repeat(b.length - 6)}`) })],
      [
        "not the SHA-256 declared",
        (b: Buffer) => ({ body: Buffer.from(b).fill(0x41, 20, 24), sha: sha256(b) })
      ]
    ])("refuses an upload %s, and nothing can be attached", async (_what, make) => {
      const bytes = pdf(`refused ${randomUUID()}`)
      const { body, headers, sha } = make(bytes) as {
        body: Buffer
        headers?: Record<string, string>
        sha?: string
      }
      const declared = await declare(bytes, sha === undefined ? {} : { sha256: sha })
      const sent = await put(declared.upload!, body, { ...declared.upload!.headers, ...headers })
      const after = await read(declared.id)
      // The embedded endpoint refuses a body over the declared size or of another type at the door (nothing is
      // stored; the link stays usable until it expires) and checks the rest at once (422, rejected). An S3 store
      // that takes the bytes (s3rver does not check signed headers) leaves them to the check, which rejects them.
      if (sent.status === 200) expect(name).toBe("S3-protocol server")
      else expect(name).toBe("embedded store")
      const atTheDoor = sent.status === 413 || sent.status === 403
      expect(after.body.status).toBe(atTheDoor ? "pending" : "rejected")
      if (!atTheDoor) expect(after.body.rejection_reason).toBeTruthy()
      else expect([413, 403]).toContain(sent.status)
      const { set } = await requestWith([declared.id])
      expect(set.status).toBe(400)
    })

    it("refuses an expired upload URL and expires the attachment", async () => {
      const bytes = pdf("too late")
      const declared = await declare(bytes)
      await new Promise((r) => setTimeout(r, UPLOAD_SECONDS * 1000 + 1500))
      const sent = await put(declared.upload!, bytes)
      expect(sent.status).toBe(403)
      expect((await read(declared.id)).body.status).toBe("expired")
    }, 20_000)

    it("keeps the checked bytes when the URL is used again after completion", async () => {
      const bytes = pdf("first")
      const declared = await declare(bytes)
      expect((await put(declared.upload!, bytes)).status).toBe(200)
      expect((await read(declared.id)).body.status).toBe("uploaded")
      const again = await put(declared.upload!, pdf("a forged second one"))
      if (name === "embedded store") expect(again.status).toBe(409)
      const after = await read(declared.id)
      expect(after.body.status).toBe("uploaded")
      expect(after.body.sha256).toBe(sha256(bytes))
      const { id } = await requestWith([declared.id])
      const payerView = await payerRead(id)
      const got = await fetch(payerView.attachments[0]!.download_url)
      expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true)
    })

    /** The payer's read (the request's default policy needs no proof to read it). */
    const payerRead = async (id: string) => {
      const res = await service.request(`/v1/payer/deposit-requests/${id}`)
      expect(res.status).toBe(200)
      return (await res.json()) as {
        attachments: Array<{
          id: string
          file_name: string
          size_bytes: number
          download_url: string
          expires_at: string
        }>
      }
    }

    it("shows a request's attachments to its payer as short-lived links that download the exact bytes, safely", async () => {
      const first = pdf("invoice")
      const second = pdf("terms")
      const a = await declare(first)
      const b = await declare(second)
      await put(a.upload!, first)
      await put(b.upload!, second)
      expect((await read(a.id)).body.status).toBe("uploaded")
      expect((await read(b.id)).body.status).toBe("uploaded")
      const { id, set } = await requestWith([b.id, a.id])
      expect(set.status).toBe(200)
      expect(set.body.attachments.map((x) => x.id)).toEqual([b.id, a.id])
      const view = await payerRead(id)
      expect(view.attachments.map((x) => x.id)).toEqual([b.id, a.id])
      expect(view.attachments[0]?.file_name).toBe("invoice 42 — März.pdf")
      const res = await fetch(view.attachments[1]!.download_url)
      expect(res.status).toBe(200)
      expect(Buffer.from(await res.arrayBuffer()).equals(first)).toBe(true)
      expect(res.headers.get("content-type")).toBe("application/pdf")
      expect(res.headers.get("content-disposition")).toMatch(
        /^attachment; filename=".*"; filename\*=UTF-8''invoice%2042/
      )
      expect(res.headers.get("x-content-type-options")).toBe("nosniff")
      expect(res.headers.get("content-security-policy")).toContain("sandbox")
      // A link whose token was changed is refused.
      const tampered = view.attachments[1]!.download_url.replace(/.$/, (c) => (c === "A" ? "B" : "A"))
      expect((await fetch(tampered)).status).toBe(403)
      // Deleted: gone from reads and from the payer's view.
      expect((await api.call("DELETE", `/v1/attachments/${a.id}`)).status).toBe(204)
      expect((await read(a.id)).status).toBe(404)
      expect((await payerRead(id)).attachments.map((x) => x.id)).toEqual([b.id])
    })

    it("answers 404 for another account's attachment on every route", async () => {
      const bytes = pdf("private")
      const declared = await declare(bytes)
      await put(declared.upload!, bytes)
      const theirs = await read(declared.id, other)
      expect(theirs.status).toBe(404)
      expect(theirs.body.error?.code).toBe("attachment_not_found")
      expect((await other.call("DELETE", `/v1/attachments/${declared.id}`)).status).toBe(404)
      const refs = await other.setup()
      const made = await other.call<{ id: string }>(
        "POST",
        "/v1/deposit-requests",
        { amount: "1.000000", issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId },
        { "idempotency-key": randomUUID() }
      )
      const attach = await other.call<{ error: { code: string } }>(
        "PUT",
        `/v1/deposit-requests/${made.body.id}/attachments`,
        { attachment_ids: [declared.id] }
      )
      expect(attach.status).toBe(404)
      expect(attach.body.error.code).toBe("attachment_not_found")
      // And a merchant cannot set attachments on another account's request.
      const mine = await requestWith([])
      const onTheirs = await other.call<{ error: { code: string } }>(
        "PUT",
        `/v1/deposit-requests/${mine.id}/attachments`,
        { attachment_ids: [] }
      )
      expect(onTheirs.status).toBe(404)
      expect(onTheirs.body.error.code).toBe("deposit_request_not_found")
      expect((await read(declared.id)).body.status).toBe("uploaded")
    })

    it("refuses declarations it cannot take: too big, a bad name or digest, unknown fields", async () => {
      for (const body of [
        { file_name: "a.pdf", size_bytes: 10 * 1024 * 1024 + 1 },
        { file_name: "a.pdf", size_bytes: 0 },
        { file_name: "../a.pdf", size_bytes: 10 },
        { file_name: "a.pdf", size_bytes: 10, sha256: "abc" },
        { file_name: "a.pdf", size_bytes: 10, content: "JVBERi0=" }
      ]) {
        const refused = await api.call<{ error: { code: string } }>("POST", "/v1/attachments", body)
        expect(refused.status).toBe(400)
        expect(refused.body.error.code).toBe("invalid_request")
      }
    })

    if (name === "embedded store") {
      it("refuses an upload URL whose signature was tampered with", async () => {
        const bytes = pdf("tampered")
        const declared = await declare(bytes)
        const url = declared.upload!.url
        const tampered = url.replace(/.$/, (c) => (c === "A" ? "B" : "A"))
        expect((await put(declared.upload!, bytes, declared.upload!.headers, tampered)).status).toBe(403)
        // Another key in the payload, signature kept: refused too.
        const link = new URL(url)
        const [payload = "", signature = ""] = (link.searchParams.get("token") ?? "").split(".")
        const fields = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"))
        const forged = Buffer.from(
          JSON.stringify({ ...fields, key: `uploads/${randomUUID()}.pdf` })
        ).toString("base64url")
        link.searchParams.set("token", `${forged}.${signature}`)
        const reused = link.toString()
        expect((await put(declared.upload!, bytes, declared.upload!.headers, reused)).status).toBe(403)
        expect((await read(declared.id)).body.status).toBe("pending")
      })
    }
  })

suite("embedded store", async () => ({ config: {}, stop: async () => undefined }))

suite("S3-protocol server", async () => {
  const directory = mkdtempSync(join(tmpdir(), "deposits-s3rver-"))
  const server = new S3rver({
    port: 0,
    address: "127.0.0.1",
    silent: true,
    directory,
    configureBuckets: [{ name: "deposits-attachments", configs: [] }]
  })
  const { port } = (await server.run()) as unknown as { port: number }
  return {
    config: {
      s3Bucket: Option.some("deposits-attachments"),
      s3Endpoint: Option.some(`http://127.0.0.1:${port}`),
      s3ForcePathStyle: true,
      s3AccessKeyId: Option.some("S3RVER"),
      s3SecretAccessKey: Option.some(Redacted.make("S3RVER"))
    },
    stop: async () => {
      await server.close()
      rmSync(directory, { recursive: true, force: true })
    }
  }
})
