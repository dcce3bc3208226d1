import { writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { keccak256, parseEther } from "viem"
import { anvilDevAccount, DEV_ACCOUNT } from "../../infra/chain/Anvil"
import type { Fault } from "../support/RpcFaultProxy"
import { type History, type Prng, prng } from "./History"
import type { Instance } from "./Parts"
import { type ChaosMerchant, type Client, sleep, type WorkloadContext } from "./Workload"

/** How long a stopped instance may take to exit (an orchestrator's grace period), before it is killed. */
const STOP_WITHIN_MS = Number(process.env.CHAOS_STOP_WITHIN_MS ?? 30_000)
/** Where an instance that outlives its grace period writes its diagnostic report. */
export const REPORTS = join(tmpdir(), "chaos-reports")

export type FaultKind =
  | "instance-sigkill"
  | "instance-sigterm"
  | "postgres-restart"
  | "nats-node-kill"
  | "nats-node-wipe"
  | "rpc"
  | "reorg"
  | "treasury-gas"

interface Planned {
  readonly at: number
  readonly kind: FaultKind
  /** How long the part stays faulty, in ms. */
  readonly lasts: number
  readonly rpc?: Fault
}

const RPC_FAULTS: ReadonlyArray<Fault> = [
  { kind: "drop" },
  { kind: "rate-limit" },
  { kind: "stall", stallMs: 4_000 },
  { kind: "behind", blocks: 3 },
  { kind: "logs-behind", blocks: 3 },
  { kind: "flap" }
]

/**
 * The fault schedule drawn from the seed: every kind at least once (the store wipe exactly once), then one more
 * fault every few seconds of a kind drawn at random, all within the workload window less its last seconds.
 */
export const planFaults = (seed: number, windowMs: number): ReadonlyArray<Planned> => {
  const rng: Prng = prng(seed ^ 0xfa17)
  const start = 3_000
  const end = Math.max(start + 1_000, windowMs - 10_000)
  const at = () => rng.int(start, end)
  const lasts = (kind: FaultKind) =>
    kind === "postgres-restart"
      ? rng.int(2_000, 6_000)
      : kind === "nats-node-kill" || kind === "nats-node-wipe"
        ? rng.int(3_000, 8_000)
        : kind === "rpc"
          ? rng.int(2_000, 6_000)
          : kind === "treasury-gas"
            ? rng.int(4_000, 8_000)
            : kind === "reorg"
              ? 0
              : rng.int(500, 3_000)
  const plan = (kind: FaultKind): Planned => ({
    at: at(),
    kind,
    lasts: lasts(kind),
    ...(kind === "rpc" ? { rpc: rng.pick(RPC_FAULTS) } : {})
  })
  const kinds: ReadonlyArray<FaultKind> = [
    "instance-sigkill",
    "instance-sigterm",
    "postgres-restart",
    "nats-node-kill",
    "nats-node-wipe",
    "rpc",
    "reorg",
    "treasury-gas"
  ]
  const planned = kinds.map(plan)
  const extra = Math.floor((end - start) / 6_000)
  for (let i = 0; i < extra; i++) planned.push(plan(rng.pick(kinds.filter((k) => k !== "nats-node-wipe"))))
  return planned.sort((a, b) => a.at - b.at)
}

/** The treasury the sandbox pays gas from (no TREASURY_PRIVATE_KEY set), as `devnet treasury-gas` finds it. */
export const treasuryAddress = anvilDevAccount(DEV_ACCOUNT.treasury).address

/** Resumes, as the operator does with a dashboard session, every request paused for the treasury's gas. */
export const resumeOutOfGas = async (client: Client, merchants: ReadonlyArray<ChaosMerchant>) => {
  let resumed = 0
  for (const merchant of merchants) {
    const list = await client.persist(
      () =>
        client.call(
          "operator-list",
          { merchant },
          "GET",
          "/v1/deposit-requests?status=needs_attention&limit=100"
        ),
      20_000
    )
    for (const request of (list?.body?.deposit_requests ?? []) as Array<{
      id: string
      attention?: { code?: string }
    }>) {
      if (request.attention?.code !== "treasury_out_of_gas") continue
      const answer = await client.persist(
        () =>
          client.call(
            "operator-resume",
            { merchant, via: "session" },
            "POST",
            `/v1/deposit-requests/${request.id}/resume`
          ),
        20_000
      )
      if (answer !== undefined && answer.status < 300) resumed++
    }
  }
  return resumed
}

/** Runs the schedule against the parts; answers once every fault has been undone (parts all back). */
export const runFaults = async (ctx: WorkloadContext, started: number) => {
  const { parts, history } = ctx
  const planned = planFaults(ctx.seed, ctx.stopAt - started)
  // Faults on one part wait for the one before on that part to be undone (a second kill of a node that is down
  // would be no fault at all).
  const chains = new Map<string, Promise<unknown>>()
  const exclusive = (part: string, f: () => Promise<void>) => {
    const run = (chains.get(part) ?? Promise.resolve()).then(f)
    chains.set(
      part,
      run.catch(() => undefined)
    )
    return run
  }
  const rng = prng(ctx.seed ^ 0xbeef)
  const record = (kind: string, detail: string) => history.faults.push({ kind, at: Date.now(), detail })
  const ended = () => {
    history.lastFaultAt = Math.max(history.lastFaultAt, Date.now())
  }

  const downFrom = (instance: Instance) => {
    instance.down = true
    history.downtime[instance.index]!.push({ from: Date.now(), to: Number.POSITIVE_INFINITY })
  }
  const upAgain = (instance: Instance) => {
    const spans = history.downtime[instance.index]!
    spans[spans.length - 1]!.to = Date.now()
    instance.down = false
  }

  const stopInstance = async (signal: "SIGKILL" | "SIGTERM", lasts: number) => {
    // One instance always serves.
    const waitUntil = Date.now() + 120_000
    while (parts.fleet.filter((i) => !i.down).length < 2) {
      if (Date.now() > waitUntil) return void history.notes.push(`skipped ${signal}: only one instance up`)
      await sleep(200)
    }
    const victim = rng.pick(parts.fleet.filter((i) => !i.down))
    downFrom(victim)
    record(signal === "SIGKILL" ? "instance-sigkill" : "instance-sigterm", `instance ${victim.index}`)
    const child = victim.process?.child
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<boolean>((resolve) => child.once("exit", () => resolve(true)))
      child.kill(signal)
      const signalled = Date.now()
      void exited.then(() =>
        history.notes.push(`instance ${victim.index} exited ${Date.now() - signalled} ms after ${signal}`)
      )
      const inTime = await Promise.race([exited, sleep(STOP_WITHIN_MS).then(() => false)])
      if (!inTime) {
        // A diagnostic report (open handles, the JavaScript stack) before the kill an orchestrator would send.
        child.kill("SIGUSR2")
        await sleep(2_000)
        const file = join(tmpdir(), `chaos-instance-${victim.index}-${Date.now()}.log`)
        writeFileSync(file, victim.process?.output() ?? "")
        history.anomalies.push(
          `instance ${victim.index} did not stop within ${STOP_WITHIN_MS / 1000} s of ${signal} (its output: ${file}; its report: ${REPORTS})`
        )
        child.kill("SIGKILL")
        await exited
      }
    }
    await sleep(lasts)
    await parts.startInstance(victim)
    upAgain(victim)
  }

  const apply = async (p: Planned) => {
    switch (p.kind) {
      case "instance-sigkill":
      case "instance-sigterm":
        return stopInstance(p.kind === "instance-sigkill" ? "SIGKILL" : "SIGTERM", p.lasts)
      case "postgres-restart":
        return exclusive("pg", async () => {
          record(p.kind, `down ${p.lasts} ms`)
          await parts.pg.stop("immediate")
          await sleep(p.lasts)
          await parts.pg.start()
        })
      case "nats-node-kill":
      case "nats-node-wipe":
        return exclusive("nats", async () => {
          const node = p.at % 3
          record(p.kind, `node n${node} down ${p.lasts} ms`)
          await parts.nats.kill(node)
          if (p.kind === "nats-node-wipe") parts.nats.wipe(node)
          await sleep(p.lasts)
          await parts.nats.start(node)
        })
      case "rpc":
        return exclusive("rpc", async () => {
          record(p.kind, `${p.rpc!.kind} for ${p.lasts} ms`)
          parts.rpc.set(p.rpc!)
          await sleep(p.lasts)
          parts.rpc.set({ kind: "healthy" })
        })
      case "treasury-gas":
        return exclusive("gas", async () => {
          record(p.kind, `no gas for ${p.lasts} ms`)
          await parts.chain.chain.setBalance({ address: treasuryAddress, value: 0n })
          await sleep(p.lasts)
          await parts.chain.chain.setBalance({ address: treasuryAddress, value: parseEther("10") })
          const resumed = await resumeOutOfGas(ctx.client, ctx.merchants)
          history.notes.push(`treasury refilled; ${resumed} request(s) resumed by the operator`)
        })
      case "reorg":
        return exclusive("chain", () => reorganise(ctx, history))
    }
  }

  const running: Array<Promise<void>> = []
  for (const p of planned) {
    const wait = started + p.at - Date.now()
    if (wait > 0) await sleep(wait)
    running.push(
      apply(p).then(ended, (error) => {
        const file = join(tmpdir(), `chaos-fault-${p.kind}-${Date.now()}.log`)
        writeFileSync(file, String(error))
        history.anomalies.push(`fault ${p.kind} failed to apply (${file}): ${String(error).slice(0, 200)}`)
        ended()
      })
    )
  }
  await Promise.all(running)
}

/**
 * A reorganisation two blocks deep (finality is four behind): mining paused, the last two blocks replaced by two new
 * ones that carry the same transactions, all in the later block, so every log moves to another block and hash.
 * Payments wait while it happens, so none is sent into a block being replaced.
 */
const reorganise = async (ctx: WorkloadContext, history: History) => {
  const { chain } = ctx.parts.chain
  let release: () => void = () => undefined
  const raws: Array<`0x${string}`> = []
  const senders = new Set<`0x${string}`>()
  ctx.chainGate.writer = new Promise<void>((resolve) => {
    release = resolve
  })
  try {
    while (ctx.chainGate.readers > 0) await sleep(50)
    await chain.request({ method: "evm_setIntervalMining", params: [0] } as never)
    await chain.setAutomine(false)
    const head = await chain.getBlockNumber()
    const depth = 2
    for (let n = head - BigInt(depth) + 1n; n <= head; n++) {
      const block = await chain.getBlock({ blockNumber: n })
      for (const hash of block.transactions) {
        senders.add((await chain.getTransaction({ hash })).from)
        raws.push(
          (await chain.request({
            method: "eth_getRawTransactionByHash",
            params: [hash]
          } as never)) as `0x${string}`
        )
      }
    }
    // Gas given with `anvil_setBalance` is state, not a transaction: the reorganisation rolls it back with the
    // replaced blocks, and a payer's (or the refilled treasury's) transaction would then fail for want of gas. A
    // real chain keeps balances funded by transactions, so each sender's balance is put back as it was.
    const balances = new Map<`0x${string}`, bigint>()
    for (const address of [...senders, treasuryAddress])
      balances.set(address, await chain.getBalance({ address }))
    await chain.request({
      method: "anvil_reorg",
      params: [depth, raws.map((raw) => [raw, depth - 1])]
    } as never)
    for (const [address, value] of balances)
      if ((await chain.getBalance({ address })) < value) await chain.setBalance({ address, value })
    const newHead = await chain.getBlockNumber()
    history.faults.push({
      kind: "reorg",
      at: Date.now(),
      detail: `depth ${depth} at ${head} (${raws.length} transactions moved), head now ${newHead}`
    })
  } finally {
    await chain.setAutomine(true)
    await chain.request({ method: "evm_setIntervalMining", params: [1] } as never)
    ctx.chainGate.writer = undefined
    release()
  }
  // Every moved transaction must be mined again (mining runs again by now): one the replacement blocks left out
  // is sent again, so the reorganisation changes where money moved, never whether it did.
  for (const raw of raws) {
    const hash = keccak256(raw)
    const mined = async () =>
      (await chain.getTransactionReceipt({ hash }).catch(() => undefined)) !== undefined
    let found = await mined()
    for (let i = 0; i < 20 && !found; i++) {
      await sleep(250)
      found = await mined()
    }
    if (found) continue
    history.notes.push(`reorg: ${hash} was left out by the replacement blocks; sent again`)
    await chain
      .request({ method: "eth_sendRawTransaction", params: [raw] } as never)
      .catch((error: unknown) => {
        history.anomalies.push(
          `reorg: ${hash} was left out and could not be sent again: ${String(error).slice(0, 120)}`
        )
      })
  }
}
