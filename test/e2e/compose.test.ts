import { type ChildProcess, execFile, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { CREDIT_PARTITIONS } from "../../infra/jetstream/Streams"
import pg from "pg"
import { getAddress } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { jetstreamManager } from "@nats-io/jetstream"
import { connect } from "@nats-io/transport-node"
import { parse, stringify } from "yaml"
import { anvilDevAccount } from "../../infra/chain/Anvil"
import { formatAmount } from "../../services/domain/Amount"
import { merchantClient } from "../support/Api"
import { createTestDatabase } from "../support/Database"
import { createMerchant } from "../support/Merchant"
import { localChainClients } from "../support/LocalChain"
import { readyRequest } from "../support/Payer"
import { natsCluster } from "../support/NatsCluster"
import { freePort } from "../support/Process"
import { httpTarget } from "../support/Service"

// The compose stack without a Docker engine: each service's command is a script of the project, run here as a
// plain process with the compose file's own environment; only the hostnames of the other services become
// loopback addresses (the machine's PostgreSQL and NATS stand in for those two services).

const run = promisify(execFile)
interface ComposeService {
  readonly command: ReadonlyArray<string>
  readonly environment?: Record<string, string>
}
const compose = parse(readFileSync("docker-compose.yml", "utf8"), { merge: true }) as {
  services: Record<string, ComposeService>
}

const scratch = mkdtempSync(join(tmpdir(), "deposits-compose-"))
const children: Array<ChildProcess> = []
let database: { url: string; drop: () => Promise<void> }
let nats: Awaited<ReturnType<typeof natsCluster>>
let chainPort: number
let db: pg.Client | undefined
const output = new Map<string, string>()

/** Runs one compose service's command with its environment, hostnames rewritten for this machine. */
const start = (name: string, overrides: Record<string, string> = {}) => {
  const service = compose.services[name]!
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(service.environment ?? {}))
    env[key] = String(value)
      .replace("postgres://postgres@postgres:5432/deposits", database.url)
      .replace("nats://nats-1:4222,nats://nats-2:4222,nats://nats-3:4222", nats.urls.join(","))
      .replace("http://chain:8545", `http://127.0.0.1:${chainPort}`)
      .replace("/shared/token-address", join(scratch, "token-address"))
      .replace(/^0\.0\.0\.0$/, "127.0.0.1")
  const [command, ...args] = service.command
  const child = spawn(command!, args, {
    env: { ...process.env, DATA_DIR: join(scratch, name), ...env, ...overrides },
    stdio: ["ignore", "pipe", "pipe"]
  })
  output.set(name, "")
  const keep = (d: Buffer) => output.set(name, `${output.get(name)}${d}`)
  child.stdout?.on("data", keep)
  child.stderr?.on("data", keep)
  children.push(child)
  return child
}

const healthy = async (port: number) => {
  for (let i = 0; i < 240; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/v1/health`).then(
      (r) => r.ok,
      () => false
    )
    if (ok) return
    await new Promise((r) => setTimeout(r, 500))
  }
  throw new Error(`no health on ${port}: ${[...output].join("\n")}`)
}

/**
 * The compose file's Prometheus (Debian's binary, as CI installs it for promtool) with its own configuration, only
 * the replicas' addresses and the rules' path rewritten: it scrapes both replicas and loads every rule.
 */
const scrapedByPrometheus = async (metricsPorts: ReadonlyArray<number>) => {
  const config = parse(readFileSync("infra/monitoring/prometheus.yml", "utf8")) as {
    global: Record<string, string>
    rule_files: Array<string>
    scrape_configs: Array<{ static_configs: Array<{ targets: Array<string> }> }>
  }
  expect(config.scrape_configs[0]!.static_configs[0]!.targets).toEqual(["service-a:9464", "service-b:9464"])
  config.global.scrape_interval = "1s"
  config.global.evaluation_interval = "1s"
  config.rule_files = config.rule_files.map((f) => join(process.cwd(), "infra/monitoring", f))
  config.scrape_configs[0]!.static_configs[0]!.targets = metricsPorts.map((p) => `127.0.0.1:${p}`)
  const file = join(scratch, "prometheus.yml")
  writeFileSync(file, stringify(config))
  const port = await freePort()
  const prometheus = spawn(
    "prometheus",
    [
      `--config.file=${file}`,
      `--storage.tsdb.path=${join(scratch, "prometheus")}`,
      `--web.listen-address=127.0.0.1:${port}`
    ],
    { stdio: "ignore" }
  )
  children.push(prometheus)
  const api = async <A>(path: string): Promise<A | undefined> =>
    fetch(`http://127.0.0.1:${port}${path}`).then(
      async (r) => (r.ok ? ((await r.json()) as { data: A }).data : undefined),
      () => undefined
    )
  let ready: Array<{ value: [number, string] }> = []
  for (let i = 0; i < 120 && ready.length < metricsPorts.length; i++) {
    await new Promise((r) => setTimeout(r, 500))
    const answer = await api<{ result: Array<{ value: [number, string] }> }>(
      `/api/v1/query?query=${encodeURIComponent('deposits_chain_ready{job="deposits"} == 1')}`
    )
    ready = answer?.result ?? []
  }
  expect(ready).toHaveLength(metricsPorts.length)
  const rules = await api<{ groups: Array<{ rules: Array<{ type: string; health: string }> }> }>(
    "/api/v1/rules"
  )
  const loaded = rules?.groups.flatMap((g) => g.rules) ?? []
  expect(loaded.filter((r) => r.type === "alerting").length).toBeGreaterThanOrEqual(13)
  expect(loaded.filter((r) => r.type === "recording").length).toBeGreaterThanOrEqual(7)
}

beforeAll(async () => {
  await run(process.execPath, ["infra/tooling/build.mjs"])
  ;[database, nats] = await Promise.all([createTestDatabase(), natsCluster()])
  chainPort = await freePort()
}, 90_000)
afterAll(async () => {
  for (const child of children) child.kill("SIGTERM")
  await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once("exit", r)) : null)))
  await db?.end()
  await Promise.all([database?.drop(), nats?.stop()])
  rmSync(scratch, { recursive: true, force: true })
})

describe("the compose stack", () => {
  it("is a file docker compose accepts", async () => {
    await expect(run("docker-compose", ["-f", "docker-compose.yml", "config", "-q"])).resolves.toBeDefined()
  })

  it("runs from its own scripts: two replicas settle payments, and a SIGTERMed one hands its leases over at once", async () => {
    start("chain", { ANVIL_HOST: "127.0.0.1", ANVIL_PORT: String(chainPort) })
    const [portA, portB] = [await freePort(), await freePort()]
    const [metricsA, metricsB] = [await freePort(), await freePort()]
    const replicaA = start("service-a", { PORT: String(portA), METRICS_PORT: String(metricsA) })
    const init = start("init")
    expect(await new Promise<number | null>((r) => init.once("exit", r))).toBe(0)
    const written = readFileSync(join(scratch, "token-address"), "utf8").trim()
    const token = getAddress(written)
    await healthy(portA)
    // A holds every singleton lease before B starts, so the handover below is A's.
    const client = new pg.Client({ connectionString: database.url })
    db = client
    await client.connect()
    const leases = async () =>
      (await client.query<{ name: string; holder: string }>("select name, holder from leases order by name"))
        .rows
    // Every singleton worker (the scheduler, outbox relay, chain watcher, credit relay, treasury, attachment
    // sweeper, step history sweeper, audit log sweeper and member notices) and the credit partitions, each consumed
    // by one instance at a time.
    const SINGLETONS = 9 + CREDIT_PARTITIONS
    let holderA = ""
    for (let i = 0; i < 100 && holderA === ""; i++) {
      const rows = await leases()
      if (rows.length === SINGLETONS && new Set(rows.map((r) => r.holder)).size === 1)
        holderA = rows[0]!.holder
      else await new Promise((r) => setTimeout(r, 200))
    }
    expect(holderA).not.toBe("")
    start("service-b", { PORT: String(portB), METRICS_PORT: String(metricsB) })
    await healthy(portB)
    for (const replica of ["service-a", "service-b"]) {
      expect(output.get(replica)).toContain(`token ${written}`)
      expect(output.get(replica)).toContain("(stream replicas 3)")
    }
    // The three NATS servers hold every stream three times.
    const nc = await connect({ servers: nats.urls })
    const streams = await (await jetstreamManager(nc)).streams.list().next()
    await nc.close()
    expect(streams.length).toBeGreaterThan(0)
    for (const stream of streams) {
      expect(stream.config.num_replicas, stream.config.name).toBe(3)
      expect(stream.cluster?.replicas?.length, stream.config.name).toBe(2)
    }
    await scrapedByPrometheus([metricsA, metricsB])

    const merchant = await createMerchant(database.url)
    const over = (port: number) => {
      const service = httpTarget(`http://127.0.0.1:${port}`)
      return { service, api: merchantClient(service, merchant) }
    }
    const { mint, pay, balanceOf } = localChainClients(
      { chainId: 10143, rpcUrl: `http://127.0.0.1:${chainPort}` },
      token
    )
    const payer = anvilDevAccount(5)
    /** A request made through one replica and paid exactly; returns its id and payout address. */
    const paid = async (port: number, amount: bigint) => {
      const payout = privateKeyToAccount(generatePrivateKey()).address
      const { id, address } = await readyRequest({ ...over(port), payer }, formatAmount(amount), payout)
      await mint(payer.address, amount)
      await pay(payer, address, amount)
      return { id, payout }
    }
    const settledThrough = async (port: number, id: string) => {
      for (let i = 0; i < 240; i++) {
        const view = await over(port).api.call<{ status: string }>("GET", `/v1/deposit-requests/${id}`)
        if (view.body.status === "settled") return
        await new Promise((r) => setTimeout(r, 250))
      }
      throw new Error(`${id} not settled`)
    }
    // A payment made through A, read settled through B: one store, one chain, one bus.
    const first = await paid(portA, 2_000_000n)
    await settledThrough(portB, first.id)
    expect(await balanceOf(first.payout)).toBe(2_000_000n)

    // Mid-flow: a second payment lands, then A (holding every lease) gets SIGTERM; B finishes it, once.
    const second = await paid(portB, 3_000_000n)
    const stoppedAt = Date.now()
    replicaA.kill("SIGTERM")
    let handoverMs = -1
    for (let i = 0; i < 200 && handoverMs < 0; i++) {
      const rows = await leases()
      if (rows.length === SINGLETONS && rows.every((r) => r.holder !== holderA))
        handoverMs = Date.now() - stoppedAt
      else await new Promise((r) => setTimeout(r, 25))
    }
    process.stdout.write(`lease handover after SIGTERM: ${handoverMs} ms (target < 1000 ms)\n`)
    expect(handoverMs).toBeGreaterThanOrEqual(0)
    expect(handoverMs).toBeLessThan(1000)
    expect(
      await new Promise<number | null>((r) =>
        replicaA.exitCode === null ? replicaA.once("exit", r) : r(replicaA.exitCode)
      )
    ).toBe(0)
    await settledThrough(portB, second.id)
    expect(await balanceOf(second.payout)).toBe(3_000_000n)
    const settlements = await client.query<{ n: string }>(
      "select count(*)::text n from transfers where deposit_request_id = $1 and kind = 'settle'",
      [second.id.slice(3)]
    )
    expect(settlements.rows[0]?.n).toBe("1")
  })
})
