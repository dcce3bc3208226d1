import { createHash, randomUUID } from "node:crypto"
import { createServer, request as httpRequest } from "node:http"
import type { AddressInfo } from "node:net"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted, type Scope } from "effect"
import S3rver from "s3rver"
import type { AppConfigShape } from "../../../src/app/Config"
import type { MerchantClient } from "../../support/Api"
import { pause } from "../../support/eventually"
import type { RunningService } from "../../support/Service"
import { newMerchantClient, scopedService } from "../../support/scopedResources"

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
interface PayerView {
  readonly attachments: Array<{
    id: string
    file_name: string
    size_bytes: number
    download_url: string
    expires_at: string
  }>
}

const UPLOAD_SECONDS = 4

/** The service on one store, with two merchant accounts: the one under test and a stranger. */
class Fixture extends Context.Tag("test/AttachmentsFixture")<
  Fixture,
  { readonly service: RunningService; readonly api: MerchantClient; readonly other: MerchantClient }
>() {}

const fixtureOn = (store: Effect.Effect<Partial<AppConfigShape>, never, Scope.Scope>) =>
  Layer.scoped(
    Fixture,
    Effect.gen(function* () {
      const config = yield* store
      const service = yield* scopedService({
        config: { rateLimitCapacity: 10_000, attachmentUploadSeconds: UPLOAD_SECONDS, ...config }
      })
      return { service, api: yield* newMerchantClient(service), other: yield* newMerchantClient(service) }
    })
  )

const call = <T>(...args: Parameters<MerchantClient["call"]>) =>
  Effect.flatMap(Fixture, ({ api }) => Effect.promise(() => api.call<T>(...args)))
const declare = (bytes: Buffer, extra: Record<string, unknown> = {}) =>
  Effect.gen(function* () {
    const made = yield* call<AttachmentWire>("POST", "/v1/attachments", {
      file_name: "invoice 42 — März.pdf",
      size_bytes: bytes.length,
      ...extra
    })
    assert.strictEqual(made.status, 201)
    return made.body
  })
const put = (
  upload: Upload,
  body: Buffer,
  headers: Record<string, string> = upload.headers,
  url = upload.url
) => Effect.promise(() => fetch(url, { method: upload.method, headers, body }))
const download = (url: string) => Effect.promise(() => fetch(url))
const bytesOf = (res: Response) => Effect.promise(async () => Buffer.from(await res.arrayBuffer()))
const read = (id: string, as: "api" | "other" = "api") =>
  Effect.flatMap(Fixture, (fixture) =>
    Effect.promise(() =>
      fixture[as].call<AttachmentWire & { error?: { code: string } }>("GET", `/v1/attachments/${id}`)
    )
  )

/** A request whose payer can read it (the merchant-session policy, exchanged for a payer token). */
const requestWith = (attachmentIds: ReadonlyArray<string>) =>
  Effect.flatMap(Fixture, ({ api }) =>
    Effect.promise(async () => {
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
    })
  )

/** The payer's read (the request's default policy needs no proof to read it). */
const payerRead = (id: string) =>
  Effect.gen(function* () {
    const { service } = yield* Fixture
    const res = yield* Effect.promise(() => service.request(`/v1/payer/deposit-requests/${id}`))
    assert.strictEqual(res.status, 200)
    return yield* Effect.promise(() => res.json() as Promise<PayerView>)
  })

const suite = (name: string, store: Effect.Effect<Partial<AppConfigShape>, never, Scope.Scope>) =>
  layer(fixtureOn(store), { timeout: 60_000 })(`attachments on the ${name}`, (it) => {
    it.effect(
      "declares a PDF, takes the bytes at the presigned URL, and marks it uploaded once checked",
      () =>
        Effect.gen(function* () {
          const bytes = pdf("the invoice")
          const declared = yield* declare(bytes, { sha256: sha256(bytes) })
          assert.match(declared.id, /^att_/)
          assert.strictEqual(declared.status, "pending")
          assert.strictEqual(declared.upload?.method, "PUT")
          assert.strictEqual(declared.upload?.headers["content-type"], "application/pdf")
          assert.strictEqual(declared.upload?.expires_in_minutes, 1)
          // The bytes never go to /v1.
          assert.isFalse(new URL(declared.upload!.url).pathname.startsWith("/v1"))
          assert.strictEqual((yield* put(declared.upload!, bytes)).status, 200)
          const uploaded = yield* read(declared.id)
          assert.strictEqual(uploaded.body.status, "uploaded")
          assert.strictEqual(uploaded.body.sha256, sha256(bytes))
          assert.isNull(uploaded.body.upload)
          const listed = yield* call<{ attachments: Array<{ id: string }>; next_cursor: string | null }>(
            "GET",
            "/v1/attachments?limit=1"
          )
          assert.strictEqual(listed.body.attachments[0]?.id, declared.id)
        })
    )

    it.effect.each([
      ["bigger than declared", (b: Buffer) => ({ body: Buffer.concat([b, Buffer.from("extra bytes")]) })],
      ["of another content type", (b: Buffer) => ({ body: b, headers: { "content-type": "text/html" } })],
      ["not a PDF", (b: Buffer) => ({ body: Buffer.from(`<html>${"x".repeat(b.length - 6)}`) })],
      [
        "not the SHA-256 declared",
        (b: Buffer) => ({ body: Buffer.from(b).fill(0x41, 20, 24), sha: sha256(b) })
      ]
    ] as const)("refuses an upload %s, and nothing can be attached", ([_what, make]) =>
      Effect.gen(function* () {
        const bytes = pdf(`refused ${randomUUID()}`)
        const { body, headers, sha } = make(bytes) as {
          body: Buffer
          headers?: Record<string, string>
          sha?: string
        }
        const declared = yield* declare(bytes, sha === undefined ? {} : { sha256: sha })
        const sent = yield* put(declared.upload!, body, { ...declared.upload!.headers, ...headers })
        const after = yield* read(declared.id)
        // The embedded endpoint refuses a body over the declared size or of another type at the door (nothing is
        // stored; the link stays usable until it expires) and checks the rest at once (422, rejected). An S3 store
        // that takes the bytes (s3rver does not check signed headers) leaves them to the check, which rejects them.
        if (sent.status === 200) assert.strictEqual(name, "S3-protocol server")
        else assert.strictEqual(name, "embedded store")
        const atTheDoor = sent.status === 413 || sent.status === 403
        assert.strictEqual(after.body.status, atTheDoor ? "pending" : "rejected")
        if (!atTheDoor) assert.ok(after.body.rejection_reason)
        else assert.include([413, 403], sent.status)
        // Its status forbids it (a shape would be 400): the same answer as a download link of it.
        const { set } = yield* requestWith([declared.id])
        assert.strictEqual(set.status, 409)
      })
    )

    it.effect(
      "refuses an expired upload URL and expires the attachment",
      () =>
        Effect.gen(function* () {
          const bytes = pdf("too late")
          const declared = yield* declare(bytes)
          yield* pause(UPLOAD_SECONDS * 1000 + 1500)
          const sent = yield* put(declared.upload!, bytes)
          assert.strictEqual(sent.status, 403)
          assert.strictEqual((yield* read(declared.id)).body.status, "expired")
        }),
      20_000
    )

    it.effect("keeps the checked bytes when the URL is used again after completion", () =>
      Effect.gen(function* () {
        const bytes = pdf("first")
        const declared = yield* declare(bytes)
        assert.strictEqual((yield* put(declared.upload!, bytes)).status, 200)
        assert.strictEqual((yield* read(declared.id)).body.status, "uploaded")
        const again = yield* put(declared.upload!, pdf("a forged second one"))
        if (name === "embedded store") assert.strictEqual(again.status, 409)
        const after = yield* read(declared.id)
        assert.strictEqual(after.body.status, "uploaded")
        assert.strictEqual(after.body.sha256, sha256(bytes))
        const { id } = yield* requestWith([declared.id])
        const payerView = yield* payerRead(id)
        const got = yield* download(payerView.attachments[0]!.download_url)
        assert.isTrue((yield* bytesOf(got)).equals(bytes))
      })
    )

    it.effect(
      "shows a request's attachments to its payer as short-lived links that download the exact bytes, safely",
      () =>
        Effect.gen(function* () {
          const first = pdf("invoice")
          const second = pdf("terms")
          const a = yield* declare(first)
          const b = yield* declare(second)
          yield* put(a.upload!, first)
          yield* put(b.upload!, second)
          assert.strictEqual((yield* read(a.id)).body.status, "uploaded")
          assert.strictEqual((yield* read(b.id)).body.status, "uploaded")
          const { id, set } = yield* requestWith([b.id, a.id])
          assert.strictEqual(set.status, 200)
          assert.deepStrictEqual(
            set.body.attachments.map((x) => x.id),
            [b.id, a.id]
          )
          const view = yield* payerRead(id)
          assert.deepStrictEqual(
            view.attachments.map((x) => x.id),
            [b.id, a.id]
          )
          assert.strictEqual(view.attachments[0]?.file_name, "invoice 42 — März.pdf")
          const res = yield* download(view.attachments[1]!.download_url)
          assert.strictEqual(res.status, 200)
          assert.isTrue((yield* bytesOf(res)).equals(first))
          assert.strictEqual(res.headers.get("content-type"), "application/pdf")
          assert.match(
            res.headers.get("content-disposition") ?? "",
            /^attachment; filename=".*"; filename\*=UTF-8''invoice%2042/
          )
          assert.strictEqual(res.headers.get("x-content-type-options"), "nosniff")
          assert.include(res.headers.get("content-security-policy") ?? "", "sandbox")
          // A link whose token was changed is refused.
          const tampered = view.attachments[1]!.download_url.replace(/.$/, (c) => (c === "A" ? "B" : "A"))
          assert.strictEqual((yield* download(tampered)).status, 403)
          // Deleted: gone from reads and from the payer's view.
          assert.strictEqual((yield* call("DELETE", `/v1/attachments/${a.id}`)).status, 204)
          assert.strictEqual((yield* read(a.id)).status, 404)
          assert.deepStrictEqual(
            (yield* payerRead(id)).attachments.map((x) => x.id),
            [b.id]
          )
        })
    )

    it.effect("gives the merchant a short-lived link to an uploaded attachment, and none before", () =>
      Effect.gen(function* () {
        const { other } = yield* Fixture
        const bytes = pdf("for the merchant")
        const declared = yield* declare(bytes)
        const early = yield* call<{ error: { code: string; message: string } }>(
          "GET",
          `/v1/attachments/${declared.id}/download-link`
        )
        assert.strictEqual(early.status, 409)
        assert.strictEqual(early.body.error.code, "invalid_state")
        assert.include(early.body.error.message, "pending")
        assert.strictEqual((yield* put(declared.upload!, bytes)).status, 200)
        const link = yield* call<{ download_url: string; expires_at: string }>(
          "GET",
          `/v1/attachments/${declared.id}/download-link`
        )
        assert.strictEqual(link.status, 200)
        assert.isAbove(Date.parse(link.body.expires_at), Date.now())
        const got = yield* download(link.body.download_url)
        assert.strictEqual(got.status, 200)
        assert.isTrue((yield* bytesOf(got)).equals(bytes))
        const theirs = yield* Effect.promise(() =>
          other.call<{ error: { code: string } }>("GET", `/v1/attachments/${declared.id}/download-link`)
        )
        assert.strictEqual(theirs.status, 404)
        assert.strictEqual(theirs.body.error.code, "attachment_not_found")
      })
    )

    it.effect("answers 404 for another account's attachment on every route", () =>
      Effect.gen(function* () {
        const { other } = yield* Fixture
        const bytes = pdf("private")
        const declared = yield* declare(bytes)
        yield* put(declared.upload!, bytes)
        const theirs = yield* read(declared.id, "other")
        assert.strictEqual(theirs.status, 404)
        assert.strictEqual(theirs.body.error?.code, "attachment_not_found")
        assert.strictEqual(
          (yield* Effect.promise(() => other.call("DELETE", `/v1/attachments/${declared.id}`))).status,
          404
        )
        const attach = yield* Effect.promise(async () => {
          const refs = await other.setup()
          const made = await other.call<{ id: string }>(
            "POST",
            "/v1/deposit-requests",
            { amount: "1.000000", issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId },
            { "idempotency-key": randomUUID() }
          )
          return other.call<{ error: { code: string } }>(
            "PUT",
            `/v1/deposit-requests/${made.body.id}/attachments`,
            { attachment_ids: [declared.id] }
          )
        })
        assert.strictEqual(attach.status, 404)
        assert.strictEqual(attach.body.error.code, "attachment_not_found")
        // And a merchant cannot set attachments on another account's request.
        const mine = yield* requestWith([])
        const onTheirs = yield* Effect.promise(() =>
          other.call<{ error: { code: string } }>("PUT", `/v1/deposit-requests/${mine.id}/attachments`, {
            attachment_ids: []
          })
        )
        assert.strictEqual(onTheirs.status, 404)
        assert.strictEqual(onTheirs.body.error.code, "deposit_request_not_found")
        assert.strictEqual((yield* read(declared.id)).body.status, "uploaded")
      })
    )

    it.effect("refuses declarations it cannot take: too big, a bad name or digest, unknown fields", () =>
      Effect.gen(function* () {
        for (const body of [
          { file_name: "a.pdf", size_bytes: 10 * 1024 * 1024 + 1 },
          { file_name: "a.pdf", size_bytes: 0 },
          { file_name: "../a.pdf", size_bytes: 10 },
          { file_name: "a.pdf", size_bytes: 10, sha256: "abc" },
          { file_name: "a.pdf", size_bytes: 10, content: "JVBERi0=" }
        ]) {
          const refused = yield* call<{ error: { code: string } }>("POST", "/v1/attachments", body)
          assert.strictEqual(refused.status, 400)
          assert.strictEqual(refused.body.error.code, "invalid_request")
        }
      })
    )

    if (name === "embedded store") {
      it.effect("refuses an upload URL whose signature was tampered with", () =>
        Effect.gen(function* () {
          const bytes = pdf("tampered")
          const declared = yield* declare(bytes)
          const url = declared.upload!.url
          const tampered = url.replace(/.$/, (c) => (c === "A" ? "B" : "A"))
          assert.strictEqual(
            (yield* put(declared.upload!, bytes, declared.upload!.headers, tampered)).status,
            403
          )
          // Another key in the payload, signature kept: refused too.
          const link = new URL(url)
          const [payload = "", signature = ""] = (link.searchParams.get("token") ?? "").split(".")
          const fields = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"))
          const forged = Buffer.from(
            JSON.stringify({ ...fields, key: `uploads/${randomUUID()}.pdf` })
          ).toString("base64url")
          link.searchParams.set("token", `${forged}.${signature}`)
          const reused = link.toString()
          assert.strictEqual(
            (yield* put(declared.upload!, bytes, declared.upload!.headers, reused)).status,
            403
          )
          assert.strictEqual((yield* read(declared.id)).body.status, "pending")
        })
      )
    }
  })

suite("embedded store", Effect.succeed({}))

/** s3rver on a free port over a temporary directory, with the bucket the service is told to use. */
const s3rverStore = Effect.acquireRelease(
  Effect.promise(async () => {
    const directory = mkdtempSync(join(tmpdir(), "deposits-s3rver-"))
    const server = new S3rver({
      port: 0,
      address: "127.0.0.1",
      silent: true,
      directory,
      configureBuckets: [{ name: "deposits-attachments", configs: [] }]
    })
    const { port } = (await server.run()) as unknown as { port: number }
    return { server, directory, port }
  }),
  ({ server, directory }) =>
    Effect.promise(async () => {
      await server.close()
      rmSync(directory, { recursive: true, force: true })
    })
).pipe(
  Effect.map(
    ({ port }): Partial<AppConfigShape> => ({
      s3Bucket: Option.some("deposits-attachments"),
      s3Endpoint: Option.some(`http://127.0.0.1:${port}`),
      s3ForcePathStyle: true,
      s3AccessKeyId: Option.some("S3RVER"),
      s3SecretAccessKey: Option.some(Redacted.make("S3RVER"))
    })
  )
)

suite("S3-protocol server", s3rverStore)

/**
 * A proxy in front of s3rver that holds the second look at an upload (a HEAD or a GET, as the test asks) long enough
 * for the first reader to decide the attachment and remove the upload: two checks of one attachment at once, the
 * sweep's and a merchant's read, made to interleave every time instead of now and then.
 */
const interleavingProxy = (upstream: number) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const seen = new Map<string, number>()
      const state = { hold: "HEAD" as "HEAD" | "GET", held: 0 }
      const server = createServer((req, res) => {
        const look = `${req.method} ${req.url?.split("?")[0]}`
        const count = (seen.get(look) ?? 0) + 1
        seen.set(look, count)
        const holds = req.method === state.hold && (req.url ?? "").includes("/uploads/") && count >= 2
        if (holds) state.held++
        setTimeout(
          () => {
            const forward = httpRequest(
              { host: "127.0.0.1", port: upstream, method: req.method, path: req.url, headers: req.headers },
              (answer) => {
                res.writeHead(answer.statusCode ?? 502, answer.headers)
                answer.pipe(res)
              }
            )
            forward.on("error", () => res.destroy())
            req.pipe(forward)
          },
          holds ? 700 : 0
        )
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      return { server, state, port: (server.address() as AddressInfo).port }
    }),
    ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
  )

class Interleaving extends Context.Tag("test/Interleaving")<
  Interleaving,
  { readonly state: { hold: "HEAD" | "GET"; held: number } }
>() {}

const interleavingStore = Effect.gen(function* () {
  const upstream = yield* s3rverStore
  const port = Number(new URL(Option.getOrThrow(upstream.s3Endpoint!)).port)
  const proxy = yield* interleavingProxy(port)
  return {
    config: { ...upstream, s3Endpoint: Option.some(`http://127.0.0.1:${proxy.port}`) },
    state: proxy.state
  }
})

layer(
  Layer.unwrapScoped(
    Effect.map(interleavingStore, ({ config, state }) =>
      Layer.merge(fixtureOn(Effect.succeed(config)), Layer.succeed(Interleaving, { state }))
    )
  ),
  { timeout: 60_000 }
)("attachments checked by two readers at once", (it) => {
  it.effect.each(["HEAD", "GET"] as const)(
    "answers uploaded to the reader whose %s came after the other reader removed the upload",
    (hold) =>
      Effect.gen(function* () {
        const { state } = yield* Interleaving
        state.hold = hold
        const heldBefore = state.held
        const bytes = pdf(`two readers ${randomUUID()}`)
        const declared = yield* declare(bytes)
        assert.strictEqual((yield* put(declared.upload!, bytes)).status, 200)
        const reads = yield* Effect.all([read(declared.id), read(declared.id)], { concurrency: "unbounded" })
        assert.isAbove(state.held, heldBefore, "a second look was held")
        assert.deepStrictEqual(
          reads.map((r) => [r.status, r.body.status]),
          [
            [200, "uploaded"],
            [200, "uploaded"]
          ]
        )
      })
  )
})
