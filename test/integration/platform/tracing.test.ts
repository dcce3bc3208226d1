import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { randomBytes, randomUUID } from "node:crypto"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { anvilDevAccount } from "../../../infra/chain/Anvil"
import { type ChainService, startChainService } from "../../support/ChainService"
import { localReceiverNetwork, makeCertificates, startReceiver } from "../../support/HttpsReceiver"
import { type LocalChain, startLocalChain } from "../../support/LocalChain"
import { readyRequest } from "../../support/Payer"
import { startService } from "../../support/Service"

/**
 * Issue 16, item 5: traces through Effect's OpenTelemetry integration, caught by an in-memory span exporter. A
 * create is one trace from the HTTP request (continuing the caller's `traceparent`) through the actor's first
 * step and its commit; a settlement's work (treasury signing and broadcast, the webhook delivery) runs in traces
 * of its own that link back to the commit that caused it.
 */
const HOST = "hooks.tracing.test"
const tls = makeCertificates(HOST)
const exporter = new InMemorySpanExporter()
let local: LocalChain
let running: ChainService
let receiver: Awaited<ReturnType<typeof startReceiver>>

beforeAll(async () => {
  local = await startLocalChain()
  receiver = await startReceiver(tls)
  running = await startChainService(local, {
    mineWhileWaiting: true,
    service: {
      spanProcessor: new SimpleSpanProcessor(exporter),
      webhookNetwork: localReceiverNetwork(HOST, tls.ca)
    }
  })
}, 60_000)
afterAll(async () => {
  await running?.stop()
  await receiver?.close()
  await local?.node.stop()
})

const spans = () => exporter.getFinishedSpans()
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId
const idOf = (s: ReadableSpan) => s.spanContext().spanId

/** The spans of one trace as an indented tree (named spans only: SQL statements are left out of the picture). */
const treeOf = (traceId: string, keep: (s: ReadableSpan) => boolean = (s) => !s.name.startsWith("sql.")) => {
  const all = spans().filter((s) => s.spanContext().traceId === traceId)
  const lines: Array<string> = []
  const walk = (parent: string | undefined, depth: number) => {
    for (const s of all
      .filter((x) => parentOf(x) === parent)
      .sort((a, b) => (a.startTime[1] < b.startTime[1] ? -1 : 1))) {
      if (keep(s)) lines.push(`${"  ".repeat(depth)}${s.name}`)
      walk(idOf(s), keep(s) ? depth + 1 : depth)
    }
  }
  const roots = all.filter((s) => !all.some((p) => idOf(p) === parentOf(s)))
  for (const root of roots) {
    lines.push(root.name)
    walk(idOf(root), 1)
  }
  return lines
}

/** Whether `descendant` sits under `ancestor` in its trace. */
const isUnder = (descendant: ReadableSpan, ancestor: ReadableSpan) => {
  const byId = new Map(spans().map((s) => [idOf(s), s]))
  let at: ReadableSpan | undefined = descendant
  while (at !== undefined) {
    if (parentOf(at) === idOf(ancestor)) return true
    at = parentOf(at) === undefined ? undefined : byId.get(parentOf(at)!)
  }
  return false
}

const waitFor = async <A>(what: string, read: () => A | undefined | Promise<A | undefined>, ms = 30_000) => {
  const until = Date.now() + ms
  while (Date.now() < until) {
    const value = await read()
    if (value !== undefined) return value
    await local.chain.mine({ blocks: 1 })
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`timed out waiting for ${what}`)
}

describe("traces", () => {
  it("runs one trace from a create's HTTP request, continuing the caller's traceparent, through the first step and its commit", async () => {
    const refs = await running.api.setup()
    const traceId = randomBytes(16).toString("hex")
    const callerSpan = randomBytes(8).toString("hex")
    const res = await running.service.request("/v1/deposit-requests", {
      method: "POST",
      headers: {
        authorization: `Bearer ${running.merchant.apiKey}`,
        "content-type": "application/json",
        "idempotency-key": randomUUID(),
        traceparent: `00-${traceId}-${callerSpan}-01`
      },
      body: JSON.stringify({
        amount: "1.000000",
        issuer_id: refs.issuerId,
        payout_address_id: refs.payoutAddressId
      })
    })
    expect(res.status).toBe(201)
    const server = await waitFor("the server span", () =>
      spans().find((s) => s.spanContext().traceId === traceId && s.name.startsWith("http.server"))
    )
    expect(parentOf(server)).toBe(callerSpan)
    const inTrace = (name: string) =>
      spans().find((s) => s.spanContext().traceId === traceId && s.name === name)
    const step = inTrace("DepositRequest.step")
    const commit = inTrace("DepositRequests.commit")
    expect(step?.attributes["event.type"]).toBe("start")
    expect(step && isUnder(step, server)).toBe(true)
    expect(commit && isUnder(commit, server)).toBe(true)
    console.log(`span tree of a create:\n${treeOf(traceId).join("\n")}`)
  })

  it("links the settlement's treasury work and webhook delivery back to the commit that caused them", async () => {
    const hook = await running.api.call<{ id: string }>("POST", "/v1/webhooks", {
      url: `https://${HOST}:${receiver.port}/hooks`
    })
    expect(hook.status).toBe(201)
    const payer = anvilDevAccount(5)
    const { id, address } = await readyRequest({ ...running, payer }, "2.000000")
    await local.mint(payer.address, 2_000_000n)
    await local.pay(payer, address, 2_000_000n)
    await waitFor("settled", async () => {
      const view = await running.api.call<{ status: string }>("GET", `/v1/deposit-requests/${id}`)
      return view.body.status === "settled" ? true : undefined
    })
    const commits = new Map(
      spans()
        .filter((s) => s.name === "ActorHost.commit")
        .map((s) => [idOf(s), s])
    )
    const linkedCommit = (s: ReadableSpan) => commits.get(s.links[0]?.context.spanId ?? "")
    // The credit's commit (under the watcher's pass) left the settle command; signing it links back to it.
    const sign = await waitFor("the signing span", () =>
      spans().find((s) => s.name === "Treasury.sign" && s.attributes["transfer.kind"] === "settle")
    )
    const creditCommit = linkedCommit(sign)
    expect(creditCommit).toBeDefined()
    const creditTrace = creditCommit!.spanContext().traceId
    expect(
      spans().some((s) => s.spanContext().traceId === creditTrace && s.name === "CreditConsumer.apply")
    ).toBe(true)
    expect(
      spans().some(
        (s) =>
          s.spanContext().traceId === creditTrace &&
          s.name === "DepositRequest.step" &&
          s.attributes["event.type"] === "deposit.credited"
      )
    ).toBe(true)
    // The broadcast and receipt-following of that transfer link to the same commit; so does the commit it makes
    // when final, whose lifecycle event's delivery links to it in turn.
    const follows = spans().filter(
      (s) =>
        s.name === "Treasury.follow" &&
        s.attributes["transfer.command_id"] === sign.attributes["transfer.command_id"]
    )
    expect(follows.length).toBeGreaterThan(0)
    for (const f of follows) expect(linkedCommit(f)).toBe(creditCommit)
    const deliveries = await waitFor("deliveries", () => {
      const found = spans().filter((s) => s.name === "Webhook.deliver")
      return found.some((d) => d.attributes["webhook.event_type"] === "deposit_request.settled")
        ? found
        : undefined
    })
    for (const d of deliveries) {
      const cause = linkedCommit(d)
      expect(cause).toBeDefined()
      expect(d.spanContext().traceId).not.toBe(cause!.spanContext().traceId)
    }
    const settledDelivery = deliveries.find(
      (d) => d.attributes["webhook.event_type"] === "deposit_request.settled"
    )!
    const settledCommit = linkedCommit(settledDelivery)!
    expect(follows.some((f) => isUnder(settledCommit, f))).toBe(true)
    console.log(
      `span tree of a settlement — the credit:\n${treeOf(creditTrace).join("\n")}\n` +
        `the broadcast that confirmed it (linked to the credit's commit):\n${treeOf(settledCommit.spanContext().traceId).join("\n")}\n` +
        `the settled webhook's delivery (linked to that confirmation's commit):\n${treeOf(settledDelivery.spanContext().traceId).join("\n")}`
    )
  }, 60_000)

  it("exports over OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT, flushing what is left when the service stops", async () => {
    const posts: Array<{ path: string; body: string }> = []
    const collector = createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        posts.push({ path: req.url ?? "", body: Buffer.concat(chunks).toString("utf8") })
        res.writeHead(200, { "content-type": "application/json" })
        res.end("{}")
      })
    })
    await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve))
    const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`
    const service = await startService({
      config: { otelExporterOtlpEndpoint: Option.some(endpoint), otelServiceName: "deposits-under-test" }
    })
    try {
      expect((await service.request("/v1/health")).status).toBe(200)
    } finally {
      await service.stop()
      await new Promise<void>((resolve) => collector.close(() => resolve()))
    }
    expect(posts.length).toBeGreaterThan(0)
    expect(posts.every((p) => p.path === "/v1/traces")).toBe(true)
    const exported = posts.map((p) => p.body).join("\n")
    expect(exported).toContain("deposits-under-test")
    expect(exported).toContain("http.server GET")
  })
})
