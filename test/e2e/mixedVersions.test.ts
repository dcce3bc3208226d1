import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { anvilDevAccount } from "../../infra/chain/Anvil"
import { formatAmount } from "../../services/domain/Amount"
import { buildRelease, currentBuild, previousRelease } from "../chaos/Release"
import { merchantClient } from "../support/Api"
import { createTestDatabase } from "../support/Database"
import { type LocalChain, startLocalChain } from "../support/LocalChain"
import { createMerchant } from "../support/Merchant"
import { readyRequest } from "../support/Payer"
import { chainServiceEnv, type ServiceProcess, spawnService } from "../support/Process"
import { httpTarget } from "../support/Service"

/**
 * Issue 47, decision 0100: the previous release and this checkout on one database, as during a rolling upgrade, each
 * reading the snapshots the other wrote. The previous release starts first and migrates; this checkout then applies
 * its migrations under it. One request is created by each version and its payer's wallet attested through the other;
 * both are paid and settle, whoever steps them. The step history (instances named by version) shows each snapshot read
 * across versions, both ways.
 */
const previous = previousRelease()
const OLD = "old@" + previous.version
const NEW = "new@" + currentBuild().version

let chain: LocalChain
let database: { url: string; drop: () => Promise<void> }
let dataDir: string
const services: Array<ServiceProcess> = []

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "deposits-mixed-versions-"))
  ;[chain, database] = await Promise.all([
    startLocalChain({ blockTime: 1, mixedMining: true, slotsInAnEpoch: 1 }),
    createTestDatabase()
  ])
}, 180_000)
afterAll(async () => {
  for (const service of services) await service.stop().catch(() => undefined)
  await Promise.all([chain?.node.stop(), database?.drop()])
  rmSync(dataDir, { recursive: true, force: true })
}, 60_000)

describe(`${previous.version} and ${currentBuild().version} side by side`, () => {
  it("each version steps requests the other created, and both settle", async () => {
    const env = (instance: string) => ({
      ...chainServiceEnv({
        databaseUrl: database.url,
        rpcUrl: chain.node.rpcUrl,
        token: chain.token,
        dataDir: join(dataDir, instance)
      }),
      SERVICE_ENV: "sandbox",
      INSTANCE_ID: instance
    })
    const old = buildRelease(previous.ref)
    services.push(await spawnService(env(OLD), 120_000, old.entry, 200, old.cwd))
    services.push(await spawnService(env(NEW), 120_000))
    const [oldService, newService] = services.map((s) => httpTarget(s.baseUrl)) as [
      ReturnType<typeof httpTarget>,
      ReturnType<typeof httpTarget>
    ]
    const merchant = await createMerchant(database.url)
    const payer = anvilDevAccount(7)
    const payout = () => privateKeyToAccount(generatePrivateKey()).address
    // Created by the new version, the payer's wallet attested through the old one; and the other way round.
    const byNew = await readyRequest(
      { service: oldService, api: merchantClient(newService, merchant), payer },
      formatAmount(1_000_000n),
      payout()
    )
    const byOld = await readyRequest(
      { service: newService, api: merchantClient(oldService, merchant), payer },
      formatAmount(2_000_000n),
      payout()
    )
    await chain.mint(payer.address, 3_000_000n)
    await chain.pay(payer, byNew.address, 1_000_000n)
    await chain.pay(payer, byOld.address, 2_000_000n)

    const db = new pg.Client({ connectionString: database.url })
    await db.connect()
    try {
      const until = Date.now() + 90_000
      const statusOf = async (id: string) =>
        (
          await db.query<{ status: string }>("select status from deposit_requests where id = $1", [
            id.slice(3)
          ])
        ).rows[0]!.status
      while ((await statusOf(byNew.id)) !== "settled" || (await statusOf(byOld.id)) !== "settled") {
        if (Date.now() > until)
          throw new Error(
            `not settled: ${await statusOf(byNew.id)}, ${await statusOf(byOld.id)}\n${services.map((s) => s.output().slice(-3_000)).join("\n")}`
          )
        await new Promise((resolve) => setTimeout(resolve, 250))
      }
      const stepsOf = async (id: string) =>
        (
          await db.query<{ instance: string; type: string }>(
            "select instance, event->>'type' as type from deposit_request_steps where deposit_request_id = $1 order by version",
            [id.slice(3)]
          )
        ).rows
      const first = await stepsOf(byNew.id)
      const second = await stepsOf(byOld.id)
      // The create by one version, the wallet's attestation (reading that snapshot) by the other.
      expect(first.slice(0, 2)).toEqual([
        { instance: NEW, type: "xstate.init" },
        { instance: OLD, type: "payer.wallet_attested" }
      ])
      expect(second.slice(0, 2)).toEqual([
        { instance: OLD, type: "xstate.init" },
        { instance: NEW, type: "payer.wallet_attested" }
      ])
      for (const steps of [first, second]) expect(steps.at(-1)?.type).toBe("settlement.confirmed")
      expect(await chain.balanceOf(payer.address)).toBe(0n)
    } finally {
      await db.end()
    }
  }, 240_000)
})
