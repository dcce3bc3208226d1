import { Effect, Layer, ManagedRuntime, Option } from "effect"
import { request as httpsRequest, Agent } from "node:https"
import { ActorHost } from "../../services/actors/ActorHost"
import { signPayload } from "../../services/webhooks/WebhookSignature"
import { DISPATCH_CONCURRENCY, DISPATCH_PER_ENDPOINT } from "../../services/webhooks/WebhookDispatcher"
import { WebhookSender } from "../../services/webhooks/WebhookSender"
import { WebhookSenderLive } from "../../services/webhooks/HttpsWebhookSender"
import { WebhookUrlCheck } from "../../services/webhooks/WebhookUrlRules"
import { merchantClient } from "../support/Api"
import { recordFigure } from "./harness"
import { localReceiverNetwork, makeCertificates, startReceiver } from "../support/HttpsReceiver"
import { createMerchant } from "../support/Merchant"
import { seedDepositRequest } from "../support/seedDepositRequest"
import { startService } from "../support/Service"

/**
 * Issue 7: webhook deliveries to a local HTTPS receiver, through the whole path (state change → outbox row in the
 * same commit → relay into delivery jobs → dispatcher → signed HTTPS POST), with NATS carrying the wake-ups.
 * (a) Deliveries per second draining a burst of events, beside a bare `https.request` loop posting the same signed
 *     bodies to the same receiver with the same concurrency (the dispatcher's), in the same run.
 * (b) Time from a state change's commit to its first delivery attempt arriving, p50/p99 (target p99 < 200 ms).
 */
const BURST = Number(process.env.BENCH_WEBHOOKS ?? 2000)
const SAMPLES = Number(process.env.BENCH_WEBHOOK_SAMPLES ?? 300)
const HOST = "hooks.bench.test"
/** The bare loop's requests in flight: the baseline of issue 19 (16, the dispatcher's worker count when it was filed). */
const BARE_IN_FLIGHT = 16

const pct = (xs: ReadonlyArray<number>, q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))] ?? 0

export async function run(): Promise<void> {
  process.stdout.write(
    `\n== webhooks: ${BURST} deliveries in a burst; ${SAMPLES} commit → first attempt samples\n`
  )
  const tls = makeCertificates(HOST)
  const receiver = await startReceiver(tls, () => 200)
  const network = localReceiverNetwork(HOST, tls.ca)
  const service = await startService({
    webhookNetwork: network,
    config: { natsUrl: Option.some("nats://127.0.0.1:4222"), rateLimitCapacity: 1_000_000 }
  })
  try {
    const merchant = await createMerchant(service.databaseUrl)
    const api = merchantClient(service, merchant)
    await api.call("POST", "/v1/webhooks", { url: `https://${HOST}:${receiver.port}/hooks` })
    const accountUuid = merchant.accountId.slice(5)
    const ids = await service.runtime.runPromise(
      Effect.all(
        Array.from({ length: BURST + SAMPLES }, () => seedDepositRequest(accountUuid)),
        { concurrency: 8 }
      )
    )
    const attested = (uuid: string) => ({
      type: "payer.wallet_attested" as const,
      at: new Date().toISOString(),
      wallet: "0x1111111111111111111111111111111111111111",
      address: `0x${uuid.replaceAll("-", "").padEnd(40, "0")}`
    })
    const makeReady = (uuid: string) =>
      Effect.flatMap(ActorHost, (host) => host.apply(uuid, `bench-attest-${uuid}`, attested(uuid)))

    // (a) A burst of state changes committed at once (batches of 250 in one transaction each), so the
    // deliveries drain at the relay's and the dispatcher's pace, not at the pace the changes were made.
    const burst = ids.slice(0, BURST)
    const started = performance.now()
    for (let i = 0; i < burst.length; i += 250) {
      const chunk = burst.slice(i, i + 250)
      await service.runtime.runPromise(
        Effect.flatMap(ActorHost, (host) =>
          host.applyMany(
            chunk.map((uuid) => ({
              depositRequestId: uuid,
              eventId: `bench-attest-${uuid}`,
              event: attested(uuid)
            }))
          )
        )
      )
    }
    const committedMs = performance.now() - started
    const until = Date.now() + 120_000
    while (receiver.received.length < BURST && Date.now() < until) await new Promise((r) => setTimeout(r, 20))
    const drained = receiver.received.length
    const firstAt = Math.min(...receiver.received.map((r) => r.at))
    const lastAt = Math.max(...receiver.received.map((r) => r.at))
    const servicePerSecond = (drained / Math.max(1, lastAt - firstAt)) * 1000

    // Baseline: the same bodies, signed, posted by a bare loop with the dispatcher's concurrency.
    const bodies = receiver.received.slice(0, BURST).map((r) => r.body.toString("utf8"))
    const fresh = new Agent({ ca: tls.ca, keepAlive: false, servername: HOST })
    const kept = new Agent({ ca: tls.ca, keepAlive: true, servername: HOST })
    const post = (agent: Agent, body: string) =>
      new Promise<void>((resolve, reject) => {
        const req = httpsRequest(
          {
            host: "127.0.0.1",
            port: receiver.port,
            path: "/hooks",
            method: "POST",
            agent,
            servername: HOST,
            headers: {
              "content-type": "application/json",
              "service-signature": signPayload("whsec_bench", Math.floor(Date.now() / 1000), body)
            }
          },
          (res) => {
            res.resume()
            res.on("end", () => resolve())
          }
        )
        req.on("error", reject)
        req.end(body)
      })
    const bareLoop = async (agent: Agent) => {
      receiver.received.length = 0
      let next = 0
      const bareStarted = performance.now()
      await Promise.all(
        Array.from({ length: BARE_IN_FLIGHT }, async () => {
          while (next < bodies.length) await post(agent, bodies[next++]!)
        })
      )
      return (bodies.length / (performance.now() - bareStarted)) * 1000
    }
    // Both connection policies: a new TLS connection per POST (the baseline of the issue) and kept-alive ones
    // (the wire's best, the same policy as the service's now).
    const barePerSecond = await bareLoop(fresh)
    const keptPerSecond = await bareLoop(kept)
    kept.destroy()
    // The transport alone (URL rules, pinned address, kept connections), without the dispatcher's claim and
    // record around each attempt: at the dispatcher's per-endpoint cap and at its worker count.
    const transport = ManagedRuntime.make(
      WebhookSenderLive.pipe(Layer.provideMerge(WebhookUrlCheck.Default), Layer.provideMerge(network))
    )
    const senderLoop = async (inFlight: number) => {
      let next = 0
      const started = performance.now()
      await transport.runPromise(
        Effect.flatMap(WebhookSender, (sender) =>
          Effect.all(
            Array.from({ length: inFlight }, () =>
              Effect.gen(function* () {
                while (next < bodies.length) {
                  const body = bodies[next++]!
                  const outcome = yield* sender.send({
                    url: `https://${HOST}:${receiver.port}/hooks`,
                    body,
                    headers: { "content-type": "application/json" }
                  })
                  if (!outcome.ok) throw new Error(`transport bench: ${outcome.errorMessage}`)
                }
              })
            ),
            { concurrency: "unbounded", discard: true }
          )
        )
      )
      return (bodies.length / (performance.now() - started)) * 1000
    }
    const senderPerEndpoint = await senderLoop(DISPATCH_PER_ENDPOINT)
    const senderAll = await senderLoop(DISPATCH_CONCURRENCY)
    await transport.dispose()

    // (b) One change at a time, at a modest pace: commit → the first attempt at the receiver.
    receiver.received.length = 0
    const latencies: Array<number> = []
    for (const uuid of ids.slice(BURST)) {
      const before = receiver.received.length
      await service.runtime.runPromise(makeReady(uuid))
      const committedAt = Date.now()
      const deadline = committedAt + 10_000
      while (receiver.received.length === before && Date.now() < deadline)
        await new Promise((r) => setImmediate(r))
      const arrived = receiver.received[before]
      if (arrived !== undefined) latencies.push(arrived.at - committedAt)
      await new Promise((r) => setTimeout(r, 20))
    }

    process.stdout.write(
      [
        `state changes committed: ${BURST} in ${committedMs.toFixed(0)} ms`,
        `service deliveries: ${drained}/${BURST} delivered, ${servicePerSecond.toFixed(0)}/s (first → last arrival)`,
        `bare https.request loop, ${BARE_IN_FLIGHT} in flight, same bodies: ${barePerSecond.toFixed(0)}/s`,
        `ratio service/bare: ${(servicePerSecond / barePerSecond).toFixed(2)}`,
        `bare loop with kept-alive connections, same bodies: ${keptPerSecond.toFixed(0)}/s; ratio service/kept-alive bare: ${(servicePerSecond / keptPerSecond).toFixed(2)}`,
        `transport alone (WebhookSender, kept connections): ${senderPerEndpoint.toFixed(0)}/s with ${DISPATCH_PER_ENDPOINT} in flight (the dispatcher's per-endpoint cap), ${senderAll.toFixed(0)}/s with ${DISPATCH_CONCURRENCY} (${(senderAll / keptPerSecond).toFixed(2)}× the kept-alive bare loop)`,
        `commit → first attempt (${latencies.length}/${SAMPLES} samples): p50 ${pct(latencies, 0.5).toFixed(0)} ms, p99 ${pct(latencies, 0.99).toFixed(0)} ms (target p99 < 200 ms: ${pct(latencies, 0.99) < 200 ? "met" : "NOT met"})`,
        ""
      ].join("\n")
    )
    recordFigure({
      figure: `webhook deliveries, a burst of ${BURST} to one endpoint`,
      value: servicePerSecond,
      unit: "/s",
      target: "≥ 0.7× baseline",
      met: servicePerSecond / barePerSecond >= 0.7,
      baseline: {
        name: `bare https.request loop, a new TLS connection a POST, ${BARE_IN_FLIGHT} in flight`,
        value: barePerSecond,
        unit: "/s"
      }
    })
    recordFigure({
      figure: "commit → first delivery attempt, p99",
      value: pct(latencies, 0.99),
      unit: "ms",
      target: "< 200 ms",
      met: pct(latencies, 0.99) < 200
    })
  } finally {
    await service.stop()
    await receiver.close()
  }
}
