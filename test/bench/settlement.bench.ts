import { Effect, Fiber, Layer, ManagedRuntime, Redacted } from "effect"
import pg from "pg"
import { type Address, encodeFunctionData, getAddress, type Hex, toHex } from "viem"
import { type AnvilHandle, anvilDevAccount, startAnvil } from "../../infra/chain/Anvil"
import { deployUsdc, mintUsdc } from "../../infra/chain/deployUsdc"
import { fiatTokenAbi as abi } from "../../infra/contracts/FiatToken"
import { CREDIT_PARTITIONS } from "../../infra/jetstream/Streams"
import { makeCreditConsumer } from "../../services/chain/CreditConsumer"
import { makeChainWatcher } from "../../services/chain/ChainWatcher"
import { makeCreditRelayWorker } from "../../services/chain/CreditRelay"
import { chainSettings } from "../../services/chain/ChainSettings"
import { CreditsRecorded } from "../../services/chain/CreditsRecorded"
import { chainIdOf } from "../../services/domain/Environment"
import { KeyVault, makeKeyVault, SANDBOX_DEPOSIT_MNEMONIC } from "../../services/chain/KeyVault"
import { TRANSFER_TOPIC } from "../../services/chain/TransferLog"
import { readTokenDomain, signTransferAuthorization } from "../../services/chain/Usdc"
import { makeTreasury } from "../../services/treasury/Treasury"
import { actorHostLayer } from "../support/ActorHostRuntime"
import { createTestDatabase } from "../support/Database"
import { chainAccessOf, localChainClients } from "../support/LocalChain"
import { createMerchant } from "../support/Merchant"
import { seedReadyRequests } from "../support/seedReadyRequests"
import { recordFigure } from "./harness"
import { jsonRpc } from "./jsonRpc"

/** The watcher and its relay, wired as their worker layers wire them: the relay hears what the watcher records. */
const chainWorkers = (chain: Parameters<typeof makeChainWatcher>[0], token: Address) =>
  Effect.gen(function* () {
    const recorded = yield* CreditsRecorded
    const watcher = yield* makeChainWatcher(
      chain,
      token,
      Effect.suspend(() => recorded.notify())
    )
    const relay = yield* makeCreditRelayWorker(chainIdOf((yield* chainSettings).serviceEnv))
    return { watcher, relay }
  }).pipe(Effect.provide(CreditsRecorded.Default))

/**
 * Issue 19: a burst of payments settled. N requests (default 1,000; BENCH_SETTLEMENT_REQUESTS) are paid in ONE
 * block of a local anvil with `finalized` 2S = 4 blocks behind `latest` (--slots-in-an-epoch 2). Issue 44: the
 * burst runs once per block time in BENCH_SETTLEMENT_BLOCK_MS (comma-separated milliseconds, default "1000,400":
 * the embedded chain's default cadence and Monad's), each on a fresh node and database.
 * Every fifth request is overpaid, so its excess is returned. The watcher and the treasury run in this process, as
 * in the service, on real PostgreSQL; the bench itself only polls.
 *
 * t0 = the payment block becomes final (the node's `finalized` reaches it, polled every 20 ms). Printed: time to
 * the last request `settled` (and to the last return confirmed), the most transfers in flight (recorded and not
 * final, and the most in the node's pool), the blocks the transfers landed in, gas per settlement and per return
 * (from the receipts), and a check that every payout and every return was made exactly once (Transfer logs).
 * The chain's own floor for comparison, in the same run: a settlement sent the instant the credit is final still
 * waits for a block to hold it and then for 2S more blocks until that block is final, so the last settlement can
 * be final no sooner than (B + 2S) block times after t0, B being the blocks the settlements' gas needs at the gas
 * limit (from the receipts; 1 for 1,000 settlements). The ratio is measured ÷ floor.
 *
 * The block gas limit is raised to 100M (as in watcher.bench): N plain token payments do not fit in one block
 * of anvil's default 30M. The deposit keys are derived while seeding, as the service derives them when it makes
 * the requests, so the treasury finds them cached.
 */
const N = Math.max(10, Number(process.env.BENCH_SETTLEMENT_REQUESTS ?? 1_000))
const SLOTS_IN_AN_EPOCH = 2
/** Block times to run the burst at, as `CHAIN_BLOCK_MS` takes them (whole ms, 100–60000). */
const blockTimes = (): ReadonlyArray<number> => {
  const raw = process.env.BENCH_SETTLEMENT_BLOCK_MS ?? "1000,400"
  const list = raw.split(",").map((x) => x.trim())
  if (list.some((x) => !/^\d+$/.test(x) || Number(x) < 100 || Number(x) > 60_000))
    throw new Error(
      `BENCH_SETTLEMENT_BLOCK_MS must be whole milliseconds from 100 to 60000, comma-separated: ${raw}`
    )
  return list.map(Number)
}
const AMOUNT = 1_000_000n
const EXCESS = 250_000n
const overpaid = (i: number) => i % 5 === 0
const TARGET_MS = 15_000
const GAS_LIMIT = 100_000_000
const log = (message: string) => process.stderr.write(`${message}\n`)

const { rpc, call } = jsonRpc()
const batch = async <A>(url: string, calls: ReadonlyArray<{ method: string; params: Array<unknown> }>) => {
  const out: Array<A> = []
  for (let i = 0; i < calls.length; i += 500) {
    const answers = await rpc<Array<{ id: number; result?: A; error?: unknown }>>(
      url,
      calls.slice(i, i + 500).map((c, id) => ({ jsonrpc: "2.0", id, ...c }))
    )
    for (const a of answers.sort((x, y) => x.id - y.id)) {
      if (a.error !== undefined) throw new Error(JSON.stringify(a.error))
      out.push(a.result as A)
    }
  }
  return out
}

const byValue = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0)

const randomAddress = (): Address =>
  getAddress(`0x${Buffer.from(crypto.getRandomValues(new Uint8Array(20))).toString("hex")}`)

/**
 * One block holding a token transfer to each deposit address (overpaid ones get the excess too). The node keeps
 * its cadence (`evm_setIntervalMining` takes whole seconds only, so pausing it would lose a 400 ms interval): every
 * payment but the first is sent with the nonces after it and waits in the pool as queued; the first then makes
 * them all ready at once, and the next block takes them all.
 */
const payInOneBlock = async (
  node: AnvilHandle,
  token: Address,
  payer: Address,
  deposits: ReadonlyArray<Address>
) => {
  const first = Number(await call<Hex>(node.rpcUrl, "eth_getTransactionCount", [payer, "pending"]))
  const payment = (i: number) => ({
    method: "eth_sendTransaction",
    params: [
      {
        from: payer,
        to: token,
        gas: toHex(100_000),
        nonce: toHex(first + i),
        data: encodeFunctionData({
          abi,
          functionName: "transfer",
          args: [deposits[i]!, overpaid(i) ? AMOUNT + EXCESS : AMOUNT]
        })
      }
    ]
  })
  await batch(
    node.rpcUrl,
    deposits.slice(1).map((_, i) => payment(i + 1))
  )
  const [hash] = await batch<Hex>(node.rpcUrl, [payment(0)])
  let minedIn: Hex | undefined
  while (minedIn === undefined) {
    const receipt = await call<{ blockNumber: Hex } | null>(node.rpcUrl, "eth_getTransactionReceipt", [hash])
    if (receipt === null) await new Promise((r) => setTimeout(r, 20))
    else minedIn = receipt.blockNumber
  }
  const block = await call<{ number: Hex; transactions: Array<unknown> }>(
    node.rpcUrl,
    "eth_getBlockByNumber",
    [minedIn, false]
  )
  if (block.transactions.length !== deposits.length)
    throw new Error(
      `the payment block holds ${block.transactions.length} transactions, not ${deposits.length}`
    )
  return BigInt(block.number)
}

const finalizedNumber = async (url: string) =>
  BigInt((await call<{ number: Hex }>(url, "eth_getBlockByNumber", ["finalized", false])).number)

export async function run() {
  const bursts: Array<{ blockMs: number; settled: number; floor: number }> = []
  for (const [i, blockMs] of blockTimes().entries()) bursts.push(await burst(blockMs, { recordGas: i === 0 }))
  log(`\nsettlement burst, finality → last settled, beside the chain's floor (same run):`)
  for (const b of bursts)
    log(
      `  ${b.blockMs} ms blocks: ${b.settled.toFixed(2)} s against ${b.floor.toFixed(2)} s (${(b.settled / b.floor).toFixed(2)}×)`
    )

  const b = await evaluateBatching()
  const saved = Number(b.single - b.batched) / Number(b.single)
  log(
    `\nbatching evaluation (a BatchRelay contract, each authorization in its own try/catch; settlements to fresh payouts):`
  )
  log(`  one by one: ${b.single} gas per settlement; ${b.k} in one transaction: ${b.batched} gas each`)
  log(
    `  saved ${(saved * 100).toFixed(1)}% (build it at ≥ 33.3%); the intrinsic 21,000 alone is ${((21_000 / Number(b.single)) * 100).toFixed(1)}% of a settlement`
  )
  log(`  a batch with one replayed authorization: ${b.mixedPaid} of ${b.mixedOf} paid`)
  recordFigure({
    figure: `gas per settlement, ${b.k} authorizations in one BatchRelay transaction (evaluated, not built)`,
    value: Number(b.batched),
    unit: "gas",
    target: "≤ 0.67× baseline to build it",
    met: saved >= 1 / 3,
    baseline: { name: "one settlement a transaction", value: Number(b.single), unit: "gas" }
  })
}

/** One burst on a fresh node mining a block every `blockMs`: seconds from finality to the last settled, and floor. */
const burst = async (blockMs: number, options: { readonly recordGas: boolean }) => {
  const blockSeconds = blockMs / 1000
  const lag = 2 * SLOTS_IN_AN_EPOCH
  const db = await createTestDatabase()
  const node = await startAnvil({
    blockTime: blockSeconds,
    slotsInAnEpoch: SLOTS_IN_AN_EPOCH,
    extraArgs: ["--gas-limit", String(GAS_LIMIT)]
  })
  const vault = makeKeyVault(Redacted.make(SANDBOX_DEPOSIT_MNEMONIC))
  const runtime = ManagedRuntime.make(
    Layer.merge(actorHostLayer(db.url), Layer.succeed(KeyVault, KeyVault.make(vault)))
  )
  const check = new pg.Client({ connectionString: db.url })
  try {
    const deployer = localChainClients(node, "0x0000000000000000000000000000000000000000")
    const token = (await deployUsdc(deployer.faucet)).address
    const payer = anvilDevAccount(2).address
    const treasuryKey = toHex(anvilDevAccount(1).getHdKey().privateKey!)
    await mintUsdc(deployer.faucet, { token, to: payer, amount: (AMOUNT + EXCESS) * BigInt(N) })

    const accountId = (await createMerchant(db.url)).accountId.slice(5)
    await runtime.runPromise(Effect.void) // migrations
    const seedStart = performance.now()
    const deposits = Array.from({ length: N }, (_, i) => vault.depositAddress(i))
    const payouts = Array.from({ length: N }, randomAddress)
    await seedReadyRequests(db.url, { accountId, wallet: payer, deposits, payouts, amount: AMOUNT })
    log(
      `seeded ${N} ready requests (deposit keys derived) in ${(performance.now() - seedStart).toFixed(0)} ms`
    )
    await check.connect()

    const chainAccess = chainAccessOf(node.rpcUrl)
    const { watcher, relay } = await runtime.runPromise(chainWorkers(chainAccess, token))
    const treasury = await runtime.runPromise(makeTreasury(chainAccess, token, treasuryKey))
    const watching = runtime.runFork(
      Effect.all([watcher.run, relay.run], { concurrency: "unbounded", discard: true })
    )
    // Credits reach their requests through the credits stream (the embedded one here): the partitions' consumers.
    const consumer = await runtime.runPromise(makeCreditConsumer)
    const consuming = Array.from({ length: CREDIT_PARTITIONS }, (_, p) =>
      runtime.runFork(consumer.consumePartition(p))
    )
    const settling = runtime.runFork(treasury.run)
    // The watcher places its cursor at the first final block it sees: wait for it before paying.
    while ((await check.query("select 1 from chain_cursors")).rowCount === 0)
      await new Promise((r) => setTimeout(r, 100))

    const paidBlock = await payInOneBlock(node, token, payer, deposits)
    log(`paid ${N} requests (${N / 5} overpaid) in block ${paidBlock}`)
    let finalAt = 0
    let finalWall = 0
    while (finalAt === 0) {
      if ((await finalizedNumber(node.rpcUrl)) >= paidBlock) {
        finalAt = performance.now()
        finalWall = Date.now()
      } else await new Promise((r) => setTimeout(r, 20))
    }

    let maxRecordedOpen = 0
    let maxPool = 0
    let depositedAt = 0
    let firstSignedAt = 0
    let allSignedAt = 0
    let settledAt = 0
    let returnsAt = 0
    const returns = N / 5
    const deadline = finalAt + 120_000
    while (performance.now() < deadline) {
      const [row] = (
        await check.query<{
          deposited: number
          settled: number
          signed: number
          open: number
          returned: number
        }>(
          `select (select count(*)::int from lifecycle_events where type = 'deposit_request.deposited') as deposited,
                  (select count(*)::int from deposit_requests where status = 'settled') as settled,
                  (select count(*)::int from transfers) as signed,
                  (select count(*)::int from transfers where state = 'signed') as open,
                  (select count(*)::int from transfers where kind = 'return' and state = 'confirmed') as returned`
        )
      ).rows
      const pool = await call<{ pending: Hex; queued: Hex }>(node.rpcUrl, "txpool_status")
      const t = performance.now()
      maxRecordedOpen = Math.max(maxRecordedOpen, row!.open)
      maxPool = Math.max(maxPool, Number(pool.pending) + Number(pool.queued))
      if (depositedAt === 0 && row!.deposited >= N) depositedAt = t
      if (firstSignedAt === 0 && row!.signed > 0) firstSignedAt = t
      if (allSignedAt === 0 && row!.signed >= N + returns) allSignedAt = t
      if (settledAt === 0 && row!.settled >= N) settledAt = t
      if (returnsAt === 0 && row!.returned >= returns) returnsAt = t
      if (settledAt !== 0 && returnsAt !== 0) break
      await new Promise((r) => setTimeout(r, 100))
    }
    await runtime.runPromise(Fiber.interrupt(settling))
    await runtime.runPromise(Fiber.interrupt(watching))
    await runtime.runPromise(Fiber.interruptAll(consuming))
    const since = (t: number) => (t === 0 ? "never" : `${((t - finalAt) / 1000).toFixed(2)} s`)

    // Gas, from every transfer's receipt; where each landed.
    const transfers = (
      await check.query<{ kind: string; tx_hash: Hex; signed_at: Date; confirmed_at: Date }>(
        "select kind, tx_hash, signed_at, confirmed_at from transfers where state = 'confirmed' order by tx_nonce"
      )
    ).rows
    const receipts = await batch<{ gasUsed: Hex; blockNumber: Hex }>(
      node.rpcUrl,
      transfers.map((t) => ({ method: "eth_getTransactionReceipt", params: [t.tx_hash] }))
    )
    const gas = { settle: [] as Array<bigint>, return: [] as Array<bigint> }
    const blocks = new Set<bigint>()
    transfers.forEach((t, i) => {
      gas[t.kind as "settle" | "return"].push(BigInt(receipts[i]!.gasUsed))
      blocks.add(BigInt(receipts[i]!.blockNumber))
    })
    // Where the time went: per block the transfers landed in, how many and when they were signed and confirmed.
    const perBlock = new Map<bigint, { n: number; signed: number; confirmed: number }>()
    transfers.forEach((t, i) => {
      const b = BigInt(receipts[i]!.blockNumber)
      const e = perBlock.get(b) ?? { n: 0, signed: 0, confirmed: 0 }
      e.n++
      e.signed = Math.max(e.signed, t.signed_at.getTime() - finalWall)
      e.confirmed = Math.max(e.confirmed, t.confirmed_at.getTime() - finalWall)
      perBlock.set(b, e)
    })
    for (const [b, e] of [...perBlock].sort((x, y) => (x[0] < y[0] ? -1 : 1)))
      log(
        `  block ${b}: ${e.n} transfers, last signed ${(e.signed / 1000).toFixed(2)} s, last confirmed ${(e.confirmed / 1000).toFixed(2)} s`
      )
    const mean = (xs: ReadonlyArray<bigint>) =>
      xs.length === 0 ? "n/a" : `${(xs.reduce((a, b) => a + b, 0n) / BigInt(xs.length)).toString()} gas`
    const range = (xs: ReadonlyArray<bigint>) =>
      xs.length === 0 ? "" : ` (min ${[...xs].sort(byValue)[0]}, max ${[...xs].sort(byValue).at(-1)})`

    // Exactly once: the Transfer logs out of the deposit addresses since the payment block.
    const logs = await call<Array<{ topics: Array<Hex>; data: Hex }>>(node.rpcUrl, "eth_getLogs", [
      { address: token, fromBlock: toHex(paidBlock + 1n), toBlock: "latest", topics: [TRANSFER_TOPIC] }
    ])
    const depositSet = new Set(deposits.map((a) => a.toLowerCase()))
    const outOfDeposits = logs.filter((l) => depositSet.has(`0x${l.topics[1]!.slice(26)}`))
    const perPayout = new Map<string, number>()
    for (const l of outOfDeposits) {
      const to = `0x${l.topics[2]!.slice(26)}`
      perPayout.set(to, (perPayout.get(to) ?? 0) + 1)
    }
    const payoutsOnce = payouts.every((p) => perPayout.get(p.toLowerCase()) === 1)
    const returnLogs = perPayout.get(payer.toLowerCase()) ?? 0
    const sortedBlocks = [...blocks].sort((a, b) => (a < b ? -1 : 1))
    const mineBlocks = Math.max(1, Math.ceil(Number(gas.settle.reduce((a, b) => a + b, 0n)) / GAS_LIMIT))
    const floorSeconds = (mineBlocks + lag) * blockSeconds
    const settledSeconds = (settledAt - finalAt) / 1000

    log(
      `\nsettlement burst: ${N} requests paid in block ${paidBlock}, ${returns} overpaid (${blockMs} ms blocks, final ${lag} behind)`
    )
    log(`  from the payment block's finality:`)
    log(`    all deposited          ${since(depositedAt)}`)
    log(`    first transfer signed  ${since(firstSignedAt)}`)
    log(`    all ${N + returns} transfers signed+recorded ${since(allSignedAt)}`)
    log(
      `    last request settled   ${since(settledAt)}   (target ≤ ${TARGET_MS / 1000} s; chain floor ${floorSeconds.toFixed(2)} s, ` +
        `${(settledSeconds / floorSeconds).toFixed(2)}× it)`
    )
    log(`    last return confirmed  ${since(returnsAt)}`)
    log(
      `  transactions in flight: max ${maxRecordedOpen} recorded and not final; max ${maxPool} in the node's pool`
    )
    log(
      `  transfers mined in ${blocks.size} blocks (${sortedBlocks[0]}..${sortedBlocks.at(-1)}), ` +
        `the first ${sortedBlocks[0] === undefined ? "?" : sortedBlocks[0] - paidBlock} blocks after the payment block`
    )
    log(
      `  chain floor: (${mineBlocks} block(s) to mine the settlements at a ${GAS_LIMIT / 1e6}M gas limit + ${lag} blocks ` +
        `to their finality) × ${blockMs} ms = ${floorSeconds.toFixed(2)} s`
    )
    log(`  gas per settlement: ${mean(gas.settle)}${range(gas.settle)}`)
    log(`  gas per return:     ${mean(gas.return)}${range(gas.return)}`)
    log(
      `  exactly once: ${outOfDeposits.length} Transfer logs out of deposit addresses for ${N + returns} transfers; ` +
        `every payout paid once: ${payoutsOnce}; returns to the payer: ${returnLogs}`
    )
    const ok =
      settledAt !== 0 &&
      returnsAt !== 0 &&
      payoutsOnce &&
      returnLogs === returns &&
      outOfDeposits.length === N + returns
    if (!ok) throw new Error("settlement burst: not every request settled exactly once")
    if (settledAt - finalAt > TARGET_MS)
      log(`  MISSED: last settled later than ${TARGET_MS / 1000} s after finality`)
    recordFigure({
      figure: `${N} requests paid in one block (${returns} overpaid), ${blockMs} ms blocks: last settled after the block is final`,
      value: settledSeconds,
      unit: "s",
      target: `≤ ${TARGET_MS / 1000} s`,
      met: settledAt - finalAt <= TARGET_MS,
      baseline: {
        name: `chain floor: (${mineBlocks} block${mineBlocks === 1 ? "" : "s"} to mine + ${lag} to finality) × ${blockMs} ms`,
        value: floorSeconds,
        unit: "s"
      }
    })
    recordFigure({
      figure: `last return confirmed after the block is final, ${blockMs} ms blocks`,
      value: (returnsAt - finalAt) / 1000,
      unit: "s",
      target: "—"
    })
    if (options.recordGas) {
      const meanGas = (xs: ReadonlyArray<bigint>) =>
        Number(xs.reduce((a, b) => a + b, 0n)) / Math.max(1, xs.length)
      recordFigure({ figure: "gas per settlement", value: meanGas(gas.settle), unit: "gas", target: "—" })
      recordFigure({ figure: "gas per return", value: meanGas(gas.return), unit: "gas", target: "—" })
    }
    return { blockMs, settled: settledSeconds, floor: floorSeconds }
  } finally {
    await check.end().catch(() => undefined)
    await runtime.dispose()
    await node.stop()
    await db.drop()
  }
}

// ---------- the batching evaluation ----------

/** Several EIP-3009 authorizations in one transaction, each in its own try/catch (evaluated, not deployed). */
const BATCH_RELAY_SOURCE = `// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;
interface IEip3009 {
  function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter,
    uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s) external;
}
contract BatchRelay {
  struct Authorization { address from; address to; uint256 value; uint256 validAfter; uint256 validBefore;
    bytes32 nonce; uint8 v; bytes32 r; bytes32 s; }
  event Failed(uint256 index);
  function relay(IEip3009 token, Authorization[] calldata a) external {
    for (uint256 i = 0; i < a.length; i++) {
      Authorization calldata x = a[i];
      try token.transferWithAuthorization(x.from, x.to, x.value, x.validAfter, x.validBefore, x.nonce, x.v, x.r, x.s) {
      } catch { emit Failed(i); }
    }
  }
}`

const authorizationComponents = [
  { name: "from", type: "address" },
  { name: "to", type: "address" },
  { name: "value", type: "uint256" },
  { name: "validAfter", type: "uint256" },
  { name: "validBefore", type: "uint256" },
  { name: "nonce", type: "bytes32" },
  { name: "v", type: "uint8" },
  { name: "r", type: "bytes32" },
  { name: "s", type: "bytes32" }
] as const
const relayAbi = [
  {
    type: "function",
    name: "relay",
    stateMutability: "nonpayable",
    inputs: [
      { name: "token", type: "address" },
      { name: "a", type: "tuple[]", components: authorizationComponents }
    ],
    outputs: []
  }
] as const

/**
 * Gas of K settlements sent one by one against the same K in one batch transaction, each from a funded deposit
 * address to a fresh payout (as a settlement), on a fresh node; then a batch with one authorization replayed, to
 * show the others still go through.
 */
export const evaluateBatching = async (k = 10) => {
  const { default: solc } = await import("solc")
  const output = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: "Solidity",
        sources: { "BatchRelay.sol": { content: BATCH_RELAY_SOURCE } },
        settings: {
          evmVersion: "cancun",
          optimizer: { enabled: true, runs: 200 },
          outputSelection: { "*": { "*": ["evm.bytecode.object"] } }
        }
      })
    )
  ) as { contracts: Record<string, Record<string, { evm: { bytecode: { object: string } } }>> }
  const bytecode = `0x${output.contracts["BatchRelay.sol"]!.BatchRelay!.evm.bytecode.object}` as Hex
  const node = await startAnvil({})
  try {
    const { faucet } = localChainClients(node, "0x0000000000000000000000000000000000000000")
    const token = (await deployUsdc(faucet)).address
    const relayHash = await faucet.deployContract({ abi: relayAbi, bytecode, chain: null })
    const relay = (await faucet.waitForTransactionReceipt({ hash: relayHash })).contractAddress!
    const vault = makeKeyVault(Redacted.make(SANDBOX_DEPOSIT_MNEMONIC))
    let nextIndex = 100_000
    const authorize = async () => {
      const deposit = vault.depositAccount(nextIndex++)
      await mintUsdc(faucet, { token, to: deposit.address, amount: AMOUNT })
      const message = {
        from: deposit.address,
        to: randomAddress(),
        value: AMOUNT,
        validAfter: 0n,
        validBefore: 2n ** 48n,
        nonce: toHex(crypto.getRandomValues(new Uint8Array(32)))
      }
      return signTransferAuthorization(deposit, await readTokenDomain(faucet, token, node.chainId), message)
    }
    const gasOf = async (hash: Hex) => (await faucet.waitForTransactionReceipt({ hash })).gasUsed
    let single = 0n
    for (let i = 0; i < k; i++) {
      const a = await authorize()
      single += await gasOf(
        await faucet.writeContract({
          address: token,
          abi,
          functionName: "transferWithAuthorization",
          args: [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, a.v, a.r, a.s],
          chain: null
        })
      )
    }
    const batch: Array<Awaited<ReturnType<typeof authorize>>> = []
    for (let i = 0; i < k; i++) batch.push(await authorize())
    const batched = await gasOf(
      await faucet.writeContract({
        address: relay,
        abi: relayAbi,
        functionName: "relay",
        args: [token, batch],
        chain: null
      })
    )
    // One authorization already used (replayed) among fresh ones: its call fails inside, the others pay.
    const mixed = [batch[0]!, await authorize(), await authorize()]
    const mixedHash = await faucet.writeContract({
      address: relay,
      abi: relayAbi,
      functionName: "relay",
      args: [token, mixed],
      chain: null
    })
    const mixedReceipt = await faucet.waitForTransactionReceipt({ hash: mixedHash })
    const paid = mixedReceipt.logs.filter((l) => l.topics[0] === TRANSFER_TOPIC).length
    return {
      k,
      single: single / BigInt(k),
      batched: batched / BigInt(k),
      mixedPaid: paid,
      mixedOf: mixed.length
    }
  } finally {
    await node.stop()
  }
}
