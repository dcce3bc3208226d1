import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { type Address, createPublicClient, http } from "viem"
import { afterAll, describe, expect, it } from "vitest"
import { holdsUsdcProxy } from "../../infra/chain/deployUsdc"
import { fiatTokenAbi as abi } from "../../infra/contracts/FiatToken"
import { spawnService, environmentWithout } from "../support/Process"

const dataDir = mkdtempSync(join(tmpdir(), "deposits-embedded-"))
// Nothing configured: no DATABASE_URL, no NATS_URL, no CHAIN_RPC_URL.
const env = { DATA_DIR: dataDir, DATABASE_URL: "", NATS_URL: "", CHAIN_RPC_URL: "" }
const bare = environmentWithout(["DATABASE_URL", "NATS_URL", "CHAIN_RPC_URL"])

afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const PAYER = "0x52908400098527886E0F7030069857D2E4169EE7"
const readChain = () =>
  JSON.parse(readFileSync(join(dataDir, "chain", "node.json"), "utf8")) as {
    rpc_url: string
    token_address: Address
  }
const clientOf = (chain: { rpc_url: string }) =>
  createPublicClient({ transport: http(chain.rpc_url, { retryCount: 0 }) })
const balanceOf = (chain: { rpc_url: string; token_address: Address }) =>
  clientOf(chain).readContract({
    address: chain.token_address,
    abi,
    functionName: "balanceOf",
    args: [PAYER]
  })

const cli = (args: Array<string>) =>
  promisify(execFile)(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], {
    env: { ...bare, DATA_DIR: dataDir }
  })

describe("npm start on embedded defaults", () => {
  it("runs with no services, serves health, OpenAPI and docs, lets the CLI in, and keeps data across a restart", async () => {
    const first = await spawnService({ ...bare, ...env })
    let apiKey: string
    try {
      expect(first.output()).toMatch(/embedded PostgreSQL/)
      const health = (await (await fetch(`${first.baseUrl}/v1/health`)).json()) as { environment: string }
      expect(health.environment).toBe("sandbox")
      expect((await fetch(`${first.baseUrl}/openapi.json`)).status).toBe(200)
      expect((await fetch(`${first.baseUrl}/docs`)).status).toBe(200)

      // The service owns PGlite; the CLI goes through its socket.
      const { stdout } = await cli(["sandbox", "--json"])
      const out = JSON.parse(stdout) as { account_id: string; api_key: string }
      apiKey = out.api_key
      const res = await fetch(`${first.baseUrl}/v1/account`, {
        headers: { authorization: `Bearer ${apiKey}` }
      })
      expect(res.status).toBe(200)

      // The embedded chain runs Circle's FiatToken v2.2 behind its proxy; the faucet mints on it through the CLI.
      expect(first.output()).toMatch(/chain: http:\/\/127\.0\.0\.1:\d+ \(embedded\)/)
      const chain = readChain()
      expect(await holdsUsdcProxy(clientOf(chain), chain.token_address)).toBe(true)
      const funded = await cli(["devnet", "fund", "--address", PAYER, "--amount", "12.500000", "--json"])
      expect(JSON.parse(funded.stdout)).toMatchObject({ amount_base_units: "12500000" })
      expect(await balanceOf(readChain())).toBe(12_500_000n)
    } finally {
      await first.stop()
    }
    // Stopped with the service: nothing advertises a chain that is gone.
    expect(existsSync(join(dataDir, "chain", "node.json"))).toBe(false)

    const second = await spawnService({ ...bare, ...env })
    try {
      const res = await fetch(`${second.baseUrl}/v1/account`, {
        headers: { authorization: `Bearer ${apiKey}` }
      })
      expect(res.status).toBe(200)
      // The chain kept its state (and the token its address) across the restart.
      expect(await balanceOf(readChain())).toBe(12_500_000n)
    } finally {
      await second.stop()
    }
    // Two cold starts of the whole sandbox (PGlite, anvil) and two CLI runs through tsx: ~32 s alone, over 60 s
    // beside the other test process on a busy 2-core machine.
  }, 150_000)

  it("stops on bad configuration with one line naming the setting", async () => {
    const run = promisify(execFile)(process.execPath, ["--import", "tsx", "src/app/main.ts"], {
      env: { ...bare, DATA_DIR: dataDir, PORT: "not-a-port" }
    })
    await expect(run).rejects.toMatchObject({
      code: 78,
      stderr: expect.stringMatching(/^invalid configuration: PORT: /)
    })
  })
})
