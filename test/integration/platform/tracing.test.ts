import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { randomBytes, randomUUID } from "node:crypto"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { anvilDevAccount } from "../../../infra/chain/Anvil"
import type { ChainService } from "../../support/ChainService"
import { localReceiverNetwork, makeCertificates, startReceiver } from "../../support/HttpsReceiver"
import type { LocalChain } from "../../support/LocalChain"
import { readyRequest } from "../../support/Payer"
import { scopedChainService, scopedLocalChain } from "../../support/scopedChainService"
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

/** A local chain, a merchant's webhook receiver, and the service on them exporting its spans to `exporter`. */
class Traced extends Context.Tag("test/Traced")<
  Traced,
  {
    readonly local: LocalChain
    readonly receiver: Awaited<ReturnType<typeof startReceiver>>
    readonly running: ChainService
  }
>() {}

const TracedLive = Layer.scoped(
  Traced,
  Effect.gen(function* () {
    const local = yield* scopedLocalChain()
    const receiver = yield* Effect.acquireRelease(
      Effect.promise(() => startReceiver(tls)),
      (r) => Effect.promise(() => r.close())
    )
    const running = yield* scopedChainService(local, {
      mineWhileWaiting: true,
      service: {
        spanProcessor: new SimpleSpanProcessor(exporter),
        webhookNetwork: localReceiverNetwork(HOST, tls.ca)
      }
    })
    return { local, receiver, running }
  })
)

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

/** The first answer of `read` that is not undefined, a block mined between tries; the test fails after `ms`. */
const waitFor = <A, R>(what: string, read: Effect.Effect<A | undefined, never, R>, ms = 30_000) =>
  Effect.gen(function* () {
    const { local } = yield* Traced
    const until = Date.now() + ms
    while (Date.now() < until) {
      const value = yield* read
      if (value !== undefined) return value
      yield* Effect.promise(() => local.chain.mine({ blocks: 1 }))
      yield* Effect.sleep("100 millis")
    }
    return yield* Effect.dieMessage(`timed out waiting for ${what}`)
  })

// Real time throughout: the service and the chain run on the wall clock, so the tests do too.
layer(TracedLive, { timeout: 60_000, excludeTestServices: true })("traces", (it) => {
  it.effect(
    "runs one trace from a create's HTTP request, continuing the caller's traceparent, through the first step and its commit",
    () =>
      Effect.gen(function* () {
        const { running } = yield* Traced
        const refs = yield* Effect.promise(() => running.api.setup())
        const traceId = randomBytes(16).toString("hex")
        const callerSpan = randomBytes(8).toString("hex")
        const res = yield* Effect.promise(() =>
          running.service.request("/v1/deposit-requests", {
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
        )
        assert.strictEqual(res.status, 201)
        const server = yield* waitFor(
          "the server span",
          Effect.sync(() =>
            spans().find((s) => s.spanContext().traceId === traceId && s.name.startsWith("http.server"))
          )
        )
        assert.strictEqual(parentOf(server), callerSpan)
        const inTrace = (name: string) =>
          spans().find((s) => s.spanContext().traceId === traceId && s.name === name)
        const step = inTrace("DepositRequest.step")
        const commit = inTrace("DepositRequests.commit")
        assert.strictEqual(step?.attributes["event.type"], "start")
        assert.isTrue(step !== undefined && isUnder(step, server))
        assert.isTrue(commit !== undefined && isUnder(commit, server))
        console.log(`span tree of a create:\n${treeOf(traceId).join("\n")}`)
      })
  )

  it.effect(
    "links the settlement's treasury work and webhook delivery back to the commit that caused them",
    () =>
      Effect.gen(function* () {
        const { local, receiver, running } = yield* Traced
        const hook = yield* Effect.promise(() =>
          running.api.call<{ id: string }>("POST", "/v1/webhooks", {
            url: `https://${HOST}:${receiver.port}/hooks`
          })
        )
        assert.strictEqual(hook.status, 201)
        const payer = anvilDevAccount(5)
        const { id, address } = yield* Effect.promise(() => readyRequest({ ...running, payer }, "2.000000"))
        yield* Effect.promise(() => local.mint(payer.address, 2_000_000n))
        yield* Effect.promise(() => local.pay(payer, address, 2_000_000n))
        yield* waitFor(
          "settled",
          Effect.promise(async () => {
            const view = await running.api.call<{ status: string }>("GET", `/v1/deposit-requests/${id}`)
            return view.body.status === "settled" ? true : undefined
          })
        )
        const commits = new Map(
          spans()
            .filter((s) => s.name === "ActorHost.commit")
            .map((s) => [idOf(s), s])
        )
        const linkedCommit = (s: ReadableSpan) => commits.get(s.links[0]?.context.spanId ?? "")
        // The credit's commit (under the watcher's pass) left the settle command; signing it links back to it.
        const sign = yield* waitFor(
          "the signing span",
          Effect.sync(() =>
            spans().find((s) => s.name === "Treasury.sign" && s.attributes["transfer.kind"] === "settle")
          )
        )
        const creditCommit = linkedCommit(sign)
        assert.isDefined(creditCommit)
        const creditTrace = creditCommit!.spanContext().traceId
        assert.isTrue(
          spans().some((s) => s.spanContext().traceId === creditTrace && s.name === "CreditConsumer.apply")
        )
        assert.isTrue(
          spans().some(
            (s) =>
              s.spanContext().traceId === creditTrace &&
              s.name === "DepositRequest.step" &&
              s.attributes["event.type"] === "deposit.credited"
          )
        )
        // The broadcast and receipt-following of that transfer link to the same commit; so does the commit it
        // makes when final, whose lifecycle event's delivery links to it in turn.
        const follows = spans().filter(
          (s) =>
            s.name === "Treasury.follow" &&
            s.attributes["transfer.command_id"] === sign.attributes["transfer.command_id"]
        )
        assert.isAbove(follows.length, 0)
        for (const f of follows) assert.strictEqual(linkedCommit(f), creditCommit)
        const deliveries = yield* waitFor(
          "deliveries",
          Effect.sync(() => {
            const found = spans().filter((s) => s.name === "Webhook.deliver")
            return found.some((d) => d.attributes["webhook.event_type"] === "deposit_request.settled")
              ? found
              : undefined
          })
        )
        for (const d of deliveries) {
          const cause = linkedCommit(d)
          assert.isDefined(cause)
          assert.notStrictEqual(d.spanContext().traceId, cause!.spanContext().traceId)
        }
        const settledDelivery = deliveries.find(
          (d) => d.attributes["webhook.event_type"] === "deposit_request.settled"
        )!
        const settledCommit = linkedCommit(settledDelivery)!
        assert.isTrue(follows.some((f) => isUnder(settledCommit, f)))
        console.log(
          `span tree of a settlement — the credit:\n${treeOf(creditTrace).join("\n")}\n` +
            `the broadcast that confirmed it (linked to the credit's commit):\n${treeOf(settledCommit.spanContext().traceId).join("\n")}\n` +
            `the settled webhook's delivery (linked to that confirmation's commit):\n${treeOf(settledDelivery.spanContext().traceId).join("\n")}`
        )
      }),
    60_000
  )

  it.effect(
    "exports over OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT, flushing what is left when the service stops",
    () =>
      Effect.gen(function* () {
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
        // The service stops (flushing its spans) before the collector closes, and both before the posts are read.
        yield* Effect.scoped(
          Effect.gen(function* () {
            yield* Effect.acquireRelease(
              Effect.promise(() => new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve))),
              () => Effect.promise(() => new Promise<void>((resolve) => collector.close(() => resolve())))
            )
            const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`
            const service = yield* Effect.acquireRelease(
              Effect.promise(() =>
                startService({
                  config: {
                    otelExporterOtlpEndpoint: Option.some(endpoint),
                    otelServiceName: "deposits-under-test"
                  }
                })
              ),
              (s) => Effect.promise(() => s.stop())
            )
            const health = yield* Effect.promise(() => service.request("/v1/health"))
            assert.strictEqual(health.status, 200)
          })
        )
        assert.isAbove(posts.length, 0)
        assert.isTrue(posts.every((p) => p.path === "/v1/traces"))
        const exported = posts.map((p) => p.body).join("\n")
        assert.include(exported, "deposits-under-test")
        assert.include(exported, "http.server GET")
      })
  )
})
