import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Option } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { anvilDevAccount } from "../../../infra/chain/Anvil"
import { type ChainService, startChainService } from "../../support/ChainService"
import { type LocalChain, startLocalChain } from "../../support/LocalChain"
import { readyRequest } from "../../support/Payer"
import { freePort } from "../../support/Process"

// The operator's Prometheus endpoint after a real payment flow: the counters moved, the gauges are there, and the
// endpoint is on its own port (the API's origin has no /metrics).

let local: LocalChain
let running: ChainService
let metricsPort: number
const payer = anvilDevAccount(6)

beforeAll(async () => {
  local = await startLocalChain({ blockTime: 0.2 })
  metricsPort = await freePort()
  running = await startChainService(local, { config: { metricsPort: Option.some(metricsPort) } })
}, 60_000)
afterAll(async () => {
  await running?.stop()
  await local?.node.stop()
})

const scrape = async () => {
  const answer = await fetch(`http://127.0.0.1:${metricsPort}/metrics`)
  expect(answer.status).toBe(200)
  expect(answer.headers.get("content-type")).toMatch(/^text\/plain/)
  return answer.text()
}

/** The value of one sample line (`name{labels} value`), or undefined when absent. */
const sample = (text: string, line: string) => {
  const found = text.split("\n").find((l) => l.startsWith(`${line} `))
  return found === undefined ? undefined : Number(found.slice(line.length + 1))
}

describe("the metrics endpoint", () => {
  it("counts a paid and settled request's HTTP calls, actor steps and gauges", async () => {
    const { service, api } = running
    const payout = privateKeyToAccount(generatePrivateKey()).address
    const { id, address } = await readyRequest({ service, api, payer }, "4.000000", payout)
    await local.mint(payer.address, 4_000_000n)
    await local.pay(payer, address, 4_000_000n)
    await local.mineUntil(async () => {
      const view = await api.call<{ status: string }>("GET", `/v1/deposit-requests/${id}`)
      return view.body.status === "settled" ? true : undefined
    })

    const text = await scrape()
    expect(
      sample(
        text,
        'deposits_http_request_duration_seconds_count{method="POST",route="/v1/deposit-requests",status="201"}'
      )
    ).toBe(1)
    expect(
      sample(
        text,
        'deposits_http_request_duration_seconds_count{method="GET",route="/v1/deposit-requests/:id",status="200"}'
      )
    ).toBeGreaterThanOrEqual(1)
    for (const event of ["payer.wallet_attested", "deposit.credited", "settlement.confirmed"])
      expect(sample(text, `deposits_actor_steps_total{event="${event}"}`)).toBeGreaterThanOrEqual(1)
    expect(sample(text, "deposits_chain_watcher_lag_blocks")).toBeGreaterThanOrEqual(0)
    expect(sample(text, "deposits_treasury_gas_gwei")).toBeGreaterThan(0)
    expect(sample(text, "deposits_transfers_pending")).toBe(0)
    expect(sample(text, "deposits_transfers_oldest_pending_seconds")).toBe(0)
    expect(sample(text, "deposits_webhook_jobs_pending")).toBeGreaterThanOrEqual(0)
  })

  it("is not served on the API's port", async () => {
    const answer = await running.service.request("/metrics")
    expect(answer.status).toBe(404)
  })
})
