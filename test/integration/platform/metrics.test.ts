import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { anvilDevAccount } from "../../../infra/chain/Anvil"
import { readyRequest } from "../../support/Payer"
import { freePort } from "../../support/Process"
import { ChainServiceFixture, chainServiceLayer } from "../../support/scopedChainService"

// The operator's Prometheus endpoint after a real payment flow: the counters moved, the gauges are there, and the
// endpoint is on its own port (the API's origin has no /metrics).

/** The port the service serves its metrics on. */
class MetricsPort extends Context.Tag("test/MetricsPort")<MetricsPort, number>() {}

const MetricsLive = Layer.unwrapEffect(
  Effect.map(MetricsPort, (port) =>
    chainServiceLayer({ blockTime: 0.2 }, { config: { metricsPort: Option.some(port) } })
  )
).pipe(Layer.provideMerge(Layer.effect(MetricsPort, Effect.promise(freePort))))

const payer = anvilDevAccount(6)

const scrape = Effect.gen(function* () {
  const port = yield* MetricsPort
  const answer = yield* Effect.promise(() => fetch(`http://127.0.0.1:${port}/metrics`))
  assert.strictEqual(answer.status, 200)
  assert.match(answer.headers.get("content-type") ?? "", /^text\/plain/)
  return yield* Effect.promise(() => answer.text())
})

/** The value of one sample line (`name{labels} value`), or NaN when absent (so no comparison holds for it). */
const sample = (text: string, line: string) => {
  const found = text.split("\n").find((l) => l.startsWith(`${line} `))
  return found === undefined ? Number.NaN : Number(found.slice(line.length + 1))
}

layer(MetricsLive, { timeout: 60_000 })("the metrics endpoint", (it) => {
  it.effect("counts a paid and settled request's HTTP calls, actor steps and gauges", () =>
    Effect.gen(function* () {
      const { local, service, api } = yield* ChainServiceFixture
      const payout = privateKeyToAccount(generatePrivateKey()).address
      const { id, address } = yield* Effect.promise(() =>
        readyRequest({ service, api, payer }, "4.000000", payout)
      )
      yield* Effect.promise(() => local.mint(payer.address, 4_000_000n))
      yield* Effect.promise(() => local.pay(payer, address, 4_000_000n))
      yield* Effect.promise(() =>
        local.mineUntil(async () => {
          const view = await api.call<{ status: string }>("GET", `/v1/deposit-requests/${id}`)
          return view.body.status === "settled" ? true : undefined
        })
      )

      const text = yield* scrape
      assert.strictEqual(
        sample(
          text,
          'deposits_http_request_duration_seconds_count{method="POST",route="/v1/deposit-requests",status="201"}'
        ),
        1
      )
      assert.isAtLeast(
        sample(
          text,
          'deposits_http_request_duration_seconds_count{method="GET",route="/v1/deposit-requests/:id",status="200"}'
        ),
        1
      )
      for (const event of ["payer.wallet_attested", "deposit.credited", "settlement.confirmed"])
        assert.isAtLeast(sample(text, `deposits_actor_steps_total{event="${event}"}`), 1, event)
      assert.isAtLeast(sample(text, "deposits_chain_watcher_lag_blocks"), 0)
      assert.isAbove(sample(text, "deposits_treasury_gas_gwei"), 0)
      assert.strictEqual(sample(text, "deposits_transfers_pending"), 0)
      assert.strictEqual(sample(text, "deposits_transfers_oldest_pending_seconds"), 0)
      assert.isAtLeast(sample(text, "deposits_webhook_jobs_pending"), 0)
      assert.isAbove(sample(text, "deposits_treasury_gas_warn_gwei"), 0)
      // The one RPC endpoint, by its place and host, never its URL.
      const rpcPort = new URL(local.node.rpcUrl).port
      assert.strictEqual(
        sample(text, `deposits_chain_rpc_endpoint_up{endpoint="1",host="127.0.0.1:${rpcPort}"}`),
        1
      )
      assert.strictEqual(
        sample(text, `deposits_chain_rpc_endpoint_failures{endpoint="1",host="127.0.0.1:${rpcPort}"}`),
        0
      )
      assert.notInclude(text, "deposits_requests_needing_attention{")
    })
  )

  it.effect("counts the paused requests by attention code, read from the database at each scrape", () =>
    Effect.gen(function* () {
      const { local, service, api } = yield* ChainServiceFixture
      const payout = privateKeyToAccount(generatePrivateKey()).address
      const { id, address } = yield* Effect.promise(() =>
        readyRequest({ service, api, payer }, "3.000000", payout)
      )
      yield* Effect.promise(() => local.controls.blacklist(payout))
      yield* Effect.promise(() => local.mint(payer.address, 3_000_000n))
      yield* Effect.promise(() => local.pay(payer, address, 3_000_000n))
      yield* Effect.promise(() =>
        local.mineUntil(async () => {
          const view = await api.call<{ status: string }>("GET", `/v1/deposit-requests/${id}`)
          return view.body.status === "needs_attention" ? true : undefined
        })
      )
      const text = yield* scrape
      assert.strictEqual(
        sample(text, 'deposits_requests_needing_attention{code="payout_address_blocked"}'),
        1
      )
      assert.isAtLeast(sample(text, 'deposits_transfers_held_total{code="payout_address_blocked"}'), 1)
      yield* Effect.promise(() => local.controls.unBlacklist(payout))
    })
  )

  it.effect("is not served on the API's port", () =>
    Effect.gen(function* () {
      const { service } = yield* ChainServiceFixture
      const answer = yield* Effect.promise(() => service.request("/metrics"))
      assert.strictEqual(answer.status, 404)
    })
  )
})
