import { execFileSync } from "node:child_process"
import { Effect, Layer } from "effect"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:https"
import type { IncomingHttpHeaders } from "node:http"
import { isIP } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { WebhookTrust } from "../../services/webhooks/HttpsWebhookSender"
import { WebhookResolver } from "../../services/webhooks/WebhookUrlRules"

export interface Received {
  /** The request's path (and query). */
  readonly url: string
  readonly headers: IncomingHttpHeaders
  readonly body: Buffer
  readonly at: number
}

/**
 * A throwaway CA and a leaf certificate for `hostname` (and any `alsoFor` names; an IP address is named as one),
 * made with the openssl CLI.
 */
export const makeCertificates = (hostname: string, ...alsoFor: Array<string>) => {
  const dir = mkdtempSync(join(tmpdir(), "webhook-certs-"))
  const run = (...args: Array<string>) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" })
  run(
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "ca.key",
    "-out",
    "ca.crt",
    "-days",
    "2",
    "-subj",
    "/CN=Test CA"
  )
  run(
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "leaf.key",
    "-out",
    "leaf.csr",
    "-subj",
    `/CN=${hostname}`
  )
  const ext = join(dir, "ext.cnf")
  execFileSync("sh", [
    "-c",
    `printf 'subjectAltName=${[hostname, ...alsoFor].map((name) => `${isIP(name) === 0 ? "DNS" : "IP"}:${name}`).join(",")}\\n' > ${ext}`
  ])
  run(
    "x509",
    "-req",
    "-in",
    "leaf.csr",
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "leaf.crt",
    "-days",
    "2",
    "-extfile",
    ext
  )
  const read = (f: string) => readFileSync(join(dir, f))
  const out = { ca: read("ca.crt"), key: read("leaf.key"), cert: read("leaf.crt") }
  rmSync(dir, { recursive: true, force: true })
  return out
}

/**
 * A local HTTPS merchant receiver that records every request and answers with the status `respond` picks, and the
 * body `answer` picks (by default `ok`, or `nope` when not 2xx).
 */
export const startReceiver = async (
  tls: { key: Buffer; cert: Buffer },
  respond: (n: number) => number = () => 200,
  answer?: (url: string, status: number) => string | undefined
) => {
  const received: Array<Received> = []
  const server: Server = createServer(tls, (req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      received.push({ url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks), at: Date.now() })
      const status = respond(received.length)
      res.writeHead(status, status >= 300 && status < 400 ? { location: "https://127.0.0.1/elsewhere" } : {})
      res.end(answer?.(req.url ?? "", status) ?? (status >= 200 && status < 300 ? "ok" : "nope"))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as { port: number }).port
  return { port, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

/** A public address for the URL rules: the test network routes it to the local receiver. */
const PUBLIC_STAND_IN = "93.184.216.34"

/**
 * The network a test service delivers webhooks over: `host` resolves to a public address, so the production URL
 * rules apply unchanged, and connections to it go to the local receiver, trusting only the throwaway CA.
 */
export const localReceiverNetwork = (host: string, ca: Buffer | string) =>
  Layer.mergeAll(
    Layer.succeed(WebhookResolver, {
      resolve: (name) =>
        name === host
          ? Effect.succeed([{ address: PUBLIC_STAND_IN, family: 4 as const }])
          : Effect.fail("no such name")
    }),
    Layer.succeed(WebhookTrust, {
      ca,
      route: (a) => (a.address === PUBLIC_STAND_IN ? { address: "127.0.0.1", family: 4 } : a)
    })
  )
