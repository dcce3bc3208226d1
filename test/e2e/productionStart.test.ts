import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { toHex } from "viem"
import { english, generateMnemonic, generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { anvilDevAccount } from "../../infra/chain/Anvil"
import { merchantClient } from "../support/Api"
import { createTestDatabase } from "../support/Database"
import { createMerchant } from "../support/Merchant"
import { type LocalChain, startLocalChain } from "../support/LocalChain"
import { readyRequest } from "../support/Payer"
import { spawnService, environmentWithout } from "../support/Process"
import { httpTarget } from "../support/Service"

// `npm start` in production refuses to run on anything unsafe, with one line naming every setting at fault,
// and starts when everything is real: PostgreSQL, NATS, a chain-143 node and a USDC-like token (6 decimals,
// EIP-3009), its own seed and a treasury key. A sandbox pointed at a chain checks it the same way.

const dataDir = mkdtempSync(join(tmpdir(), "deposits-production-"))
const inherited = environmentWithout([
  "DATABASE_URL",
  "NATS_URL",
  "CHAIN_RPC_URL",
  "CHAIN_RPC_URLS",
  "TOKEN_ADDRESS",
  "TREASURY_PRIVATE_KEY",
  "DEPOSIT_KEY_MNEMONIC",
  "SERVICE_ENV"
])

const start = (env: Record<string, string>) =>
  promisify(execFile)(process.execPath, ["--import", "tsx", "src/app/main.ts"], {
    env: { ...inherited, DATA_DIR: dataDir, PORT: "0", ...env }
  })

/** The one line a refused start prints, and its exit code. */
const refusal = async (env: Record<string, string>) => {
  const outcome = await start(env).then(
    () => ({ code: 0, stderr: "" }),
    (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr })
  )
  expect(outcome.code).toBe(78)
  const lines = outcome.stderr.trim().split("\n")
  expect(lines).toHaveLength(1)
  return lines[0]!
}

let mainnet: LocalChain
let testnet: LocalChain
let database: { url: string; drop: () => Promise<void> }
const own = {
  DEPOSIT_KEY_MNEMONIC: generateMnemonic(english),
  // A funded account of the local chain pays the gas (any key will do; this one has ETH on every anvil).
  TREASURY_PRIVATE_KEY: toHex(anvilDevAccount(2).getHdKey().privateKey!),
  NATS_URL: "nats://127.0.0.1:4222"
}

beforeAll(async () => {
  ;[mainnet, testnet, database] = await Promise.all([
    startLocalChain({ chainId: 143 }),
    startLocalChain(),
    createTestDatabase()
  ])
}, 120_000)
afterAll(async () => {
  await Promise.all([mainnet?.node.stop(), testnet?.node.stop(), database?.drop()])
  rmSync(dataDir, { recursive: true, force: true })
})

const production = () => ({
  SERVICE_ENV: "production",
  DATABASE_URL: database.url,
  CHAIN_RPC_URL: mainnet.node.rpcUrl,
  TOKEN_ADDRESS: mainnet.token,
  ...own
})

describe("a production start", () => {
  it("with only a published mnemonic names every missing part and the seed on one line, exit 78", async () => {
    const line = await refusal({
      SERVICE_ENV: "production",
      DEPOSIT_KEY_MNEMONIC: "test test test test test test test test test test test junk"
    })
    expect(line).toMatch(/^refusing to start: /)
    for (const setting of [
      "DATABASE_URL",
      "NATS_URL",
      "CHAIN_RPC_URL",
      "TOKEN_ADDRESS",
      "TREASURY_PRIVATE_KEY",
      "DEPOSIT_KEY_MNEMONIC: a published test mnemonic"
    ])
      expect(line).toContain(setting)
  })

  it("refuses the sandbox's chain and a token address with no contract", async () => {
    expect(
      await refusal({ ...production(), CHAIN_RPC_URL: testnet.node.rpcUrl, TOKEN_ADDRESS: testnet.token })
    ).toBe("refusing to start: CHAIN_RPC_URL: the node serves chain 10143, this environment needs chain 143")
    const nobody = anvilDevAccount(7).address
    expect(await refusal({ ...production(), TOKEN_ADDRESS: nobody })).toBe(
      `refusing to start: TOKEN_ADDRESS: no contract at ${nobody} on chain 143`
    )
    // A node that does not answer is not refused: the instance starts unready (test/e2e/chainDownAtStart.test.ts).
    // Every fallback endpoint must serve the same chain: one of another chain is named by its place in the list.
    expect(
      await refusal({ ...production(), CHAIN_RPC_URLS: `${mainnet.node.rpcUrl},${testnet.node.rpcUrl}` })
    ).toBe(
      "refusing to start: CHAIN_RPC_URLS (endpoint 2): the node serves chain 10143, this environment needs chain 143"
    )
  })

  it("refuses a token that is not USDC-like (a contract without 6 decimals or EIP-3009)", async () => {
    // Code that reverts every call (PUSH1 0, PUSH1 0, REVERT): a contract, but no token.
    const notAToken = anvilDevAccount(8).address
    await mainnet.chain.setCode({ address: notAToken, bytecode: "0x60006000fd" })
    const line = await refusal({ ...production(), TOKEN_ADDRESS: notAToken })
    expect(line).toContain(`TOKEN_ADDRESS: ${notAToken} must have 6 decimals like USDC`)
    expect(line).toContain(`TOKEN_ADDRESS: ${notAToken} does not implement EIP-3009`)
  })

  it("starts on real parts with its own keys, says it is production, and settles a payment", async () => {
    // This story pays a new payout address at once; production's day-long hold on one is
    // test/integration/merchants/payoutAddressHold.test.ts's.
    const service = await spawnService({ ...production(), PAYOUT_ADDRESS_HOLD_SECONDS: "0" })
    try {
      const health = (await (await fetch(`${service.baseUrl}/v1/health`)).json()) as {
        environment: string
        chain_id: number
      }
      expect(health).toMatchObject({ environment: "production", chain_id: 143 })
      // The checkout's sandbox helpers (faucet, pay buttons) do not exist in production.
      for (const path of ["/checkout/sandbox/fund", "/checkout/sandbox/pay"]) {
        const res = await fetch(`${service.baseUrl}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ address: "0x0000000000000000000000000000000000000001", mode: "exact" })
        })
        expect(res.status).toBe(404)
      }

      // A live merchant, a payer signing for chain 143, and the production treasury settling on it.
      const merchant = await createMerchant(database.url, { serviceEnv: "production" })
      expect(merchant.apiKey).toMatch(/^service_live_/)
      const running = httpTarget(service.baseUrl)
      const api = merchantClient(running, merchant)
      const payer = anvilDevAccount(5)
      const payout = privateKeyToAccount(generatePrivateKey()).address
      const { id, address } = await readyRequest({ service: running, api, payer }, "6.000000", payout, 143)
      await mainnet.mint(payer.address, 6_000_000n)
      await mainnet.pay(payer, address, 6_000_000n)
      await mainnet.mineUntil(async () => {
        const view = await api.call<{ status: string }>("GET", `/v1/deposit-requests/${id}`)
        return view.body.status === "settled" ? true : undefined
      }, 60_000)
      expect(await mainnet.balanceOf(payout)).toBe(6_000_000n)
      expect(await mainnet.balanceOf(address)).toBe(0n)

      // Issue 35: production prints no sandbox hints, no lifecycle lines, and its home page has no first steps.
      expect(service.output()).toMatch(/Listening on/)
      expect(service.output()).not.toMatch(
        /the sandbox is ready|npm run cli|WEBHOOKS_ALLOW_PRIVATE|lifecycle dr_/
      )
      const home = await fetch(`${service.baseUrl}/`)
      expect(home.status).toBe(200)
      const page = await home.text()
      expect(page).toContain('href="/docs"')
      expect(page).toContain('href="/dashboard/"')
      expect(page).not.toMatch(/sandbox|npm run cli/)
    } finally {
      await service.stop()
    }
  }, 120_000)
})

describe("a sandbox start with a configured chain", () => {
  it("refuses a node of another chain", async () => {
    expect(await refusal({ CHAIN_RPC_URL: mainnet.node.rpcUrl, TOKEN_ADDRESS: mainnet.token })).toBe(
      "refusing to start: CHAIN_RPC_URL: the node serves chain 143, this environment needs chain 10143"
    )
  })
})
