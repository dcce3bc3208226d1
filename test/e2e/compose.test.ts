import { type ChildProcess, execFile, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { parse } from "yaml"
import { createTestDatabase } from "../support/Database"
import { createMerchant } from "../support/Merchant"
import { freePort } from "../support/Process"

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
let chainPort: number
const output = new Map<string, string>()

/** Runs one compose service's command with its environment, hostnames rewritten for this machine. */
const start = (name: string, overrides: Record<string, string> = {}) => {
  const service = compose.services[name]!
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(service.environment ?? {}))
    env[key] = String(value)
      .replace("postgres://postgres@postgres:5432/deposits", database.url)
      .replace("nats://nats:4222", "nats://127.0.0.1:4222")
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

beforeAll(async () => {
  await run(process.execPath, ["infra/tooling/build.mjs"])
  database = await createTestDatabase()
  chainPort = await freePort()
}, 60_000)
afterAll(async () => {
  for (const child of children) child.kill("SIGTERM")
  await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once("exit", r)) : null)))
  await database?.drop()
  rmSync(scratch, { recursive: true, force: true })
})

describe("the compose stack", () => {
  it("is a file docker compose accepts", async () => {
    await expect(run("docker-compose", ["-f", "docker-compose.yml", "config", "-q"])).resolves.toBeDefined()
  })

  it("runs from its own scripts: a chain, the init that deploys the token, and two replicas sharing the stores", async () => {
    start("chain", { ANVIL_HOST: "127.0.0.1", ANVIL_PORT: String(chainPort) })
    const [portA, portB] = [await freePort(), await freePort()]
    start("service-a", { PORT: String(portA) })
    start("service-b", { PORT: String(portB) })
    const init = start("init")
    const initExit = await new Promise<number | null>((r) => init.once("exit", r))
    expect(initExit).toBe(0)
    const token = readFileSync(join(scratch, "token-address"), "utf8").trim()
    expect(token).toMatch(/^0x[0-9a-fA-F]{40}$/)

    await Promise.all([healthy(portA), healthy(portB)])
    for (const replica of ["service-a", "service-b"]) expect(output.get(replica)).toContain(`token ${token}`)

    // One store: a request made through one replica is read through the other.
    const merchant = await createMerchant(database.url)
    const call = (port: number, method: string, path: string, body?: unknown) =>
      fetch(`http://127.0.0.1:${port}${path}`, {
        method,
        headers: merchant.headers("api_key", {
          "content-type": "application/json",
          "idempotency-key": `compose-${path}-${method}`
        }),
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { id: string } }))
    const issuer = await call(portA, "POST", "/v1/issuers", { display_name: "Compose Ltd" })
    const payout = await call(portA, "POST", "/v1/payout-addresses", {
      address: "0x52908400098527886e0f7030069857d2e4169ee7"
    })
    const made = await call(portA, "POST", "/v1/deposit-requests", {
      amount: "2.000000",
      issuer_id: issuer.body.id,
      payout_address_id: payout.body.id
    })
    expect(made.status).toBe(201)
    const read = await call(portB, "GET", `/v1/deposit-requests/${made.body.id}`)
    expect(read.status).toBe(200)
    expect(read.body.id).toBe(made.body.id)
  })
})
