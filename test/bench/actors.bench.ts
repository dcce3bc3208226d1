import { SqlClient } from "@effect/sql"
import { availableParallelism } from "node:os"
import { Effect, type Tracer } from "effect"
import pg from "pg"
import { start, step } from "../../machines/step"
import { ActorHost } from "../../services/actors/ActorHost"
import { DepositRequests } from "../../services/depositRequests/DepositRequests"
import { toId } from "../../services/domain/PrefixedId"
import { Issuers, PayoutAddresses } from "../../services/merchants/MerchantResources"
import { actorHostRuntime } from "../support/ActorHostRuntime"
import { createTestDatabase } from "../support/Database"
import { createMerchant } from "../support/Merchant"
import { benchSettings, recordFigure } from "./harness"
import { postgresCpuMeter } from "./postgresCpu"
import { spanTimesTracer } from "./spanTimes"

/**
 * Issue 19 (1): events applied to persisted actors (restore, transition, persist snapshot + dedupe + lifecycle
 * events + outbox in one transaction) per second, beside the raw rate of single-row INSERT commits with `pg` on
 * the same number of connections (rounds interleaved, medians); a block's 500 credits applied the way the chain
 * watcher's applying loop does it (`applyMany` in 4 lanes side by side, each with a statement of its own); and the
 * XState step alone in microseconds.
 *
 * In (a) each request gets a few credits, then its writer moves on to fresh ones, as real requests get one payment
 * or a few. Crediting the same requests throughout grew every snapshot by its credit ids, and each round of a run
 * measured slower than the one before.
 *
 * The step history (infra/decisions/0066-step-history.md) is measured same-run, A/B: short slices through a host
 * that keeps it (the default, the one of the rounds) and through one that does not (`STEP_HISTORY_DAYS=0`),
 * alternated (ABBA…) so the shared machine's drift falls on both alike, each host on its own share of every
 * writer's requests so its memory of its rows stays its own.
 *
 * The headline figures run with the tracer off, as production runs without an OTLP endpoint (src/app/Tracing.ts); each
 * round and block is then run again with every span made and timed, for where the time goes (commits, statements,
 * steps) and what tracing costs. Beside each, the CPU it took here and in PostgreSQL (`/proc`: the bench database's
 * backends and the server's writers, not other test runs' backends on the shared server): on these two-core machines a
 * block cannot finish in less than the sum over two. The CPU per applied event is judged against a raw INSERT
 * commit's, node and PostgreSQL together, round by round.
 */
const { seconds, rounds } = benchSettings()
const WALLET = "0x1111111111111111111111111111111111111111"
const PAYOUT = "0x52908400098527886E0F7030069857D2E4169EE7"
const CONNECTIONS = 8
const cores = availableParallelism()
/** A writer's requests in play at once: each gets its credits in turn, as a busy block's payments interleave. */
const WINDOW = 40
/** A real request gets one credit or a few; then the writer moves on to its next window of fresh requests. */
const CREDITS_PER_REQUEST = Number(process.env.BENCH_CREDITS_PER_REQUEST ?? 4)
/**
 * Requests seeded per writer: enough for its rounds and the A/B (a writer that runs out starts its requests over).
 * Two thirds for the host of the rounds (which also keeps the step history in the A/B), a third for the other.
 */
const REQUESTS_PER_CONNECTION = Number(process.env.BENCH_REQUESTS_PER_WRITER ?? 6600)
/** Each round's second part, with every span made, for where the time goes (commits, statements). */
const TRACED_SECONDS = Math.min(2, seconds)
/** The step history's A/B: groups of four slices (ABBA), each this long. */
const AB_PAIRS = Number(process.env.BENCH_AB_PAIRS ?? 3)
const AB_SLICE_SECONDS = 2
const BLOCK_CREDITS = 500
const BLOCK_LANES = 4
const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 8)
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0
const sum = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0)
const mean = (xs: ReadonlyArray<number>) => sum(xs) / Math.max(1, xs.length)
const quantile = (xs: ReadonlyArray<number>, q: number) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0
}

/**
 * Where the time goes, from the host's own spans: each span named `name` (a commit, a step), each
 * `apply_actor_steps` statement, and each read of rows the host did not hold in memory, as it ends.
 */
const actorTimesTracer = (
  base: Tracer.Tracer,
  name: string,
  onSpan: (ms: number) => void,
  onStatement: (ms: number) => void,
  onRead: () => void = () => {}
) =>
  spanTimesTracer(base, new Set([name, "sql.execute"]), (span, ms) => {
    if (span.name === name) return onSpan(ms)
    const text = String(span.attributes.get("db.query.text"))
    if (text.includes("apply_actor_steps")) onStatement(ms)
    else if (/ from deposit_requests where id in /.test(text)) onRead()
  })

const xstateAlone = () => {
  let s = start({
    id: "dr_bench",
    amount_base_units: "1000000000",
    payout_address: WALLET,
    payer_policy_mode: "none",
    expires_at: "2030-01-01T00:00:00Z",
    created_at: "2026-01-01T00:00:00Z"
  })
  s = step(s.snapshot, { type: "payer.wallet_attested", at: "x", wallet: WALLET, address: "0xaddr" })
  const persisted = JSON.parse(JSON.stringify(s.snapshot))
  const samples: Array<number> = []
  for (let r = 0; r < 5; r++) {
    const n = 3000
    const t0 = performance.now()
    for (let i = 0; i < n; i++) {
      step(persisted, {
        type: "deposit.credited",
        at: "x",
        credit_id: `c${i}`,
        amount_base_units: "1",
        from: WALLET
      })
    }
    samples.push(((performance.now() - t0) * 1000) / n)
  }
  return median(samples)
}

/** Updates of request rows so far, and how many were heap-only (no index entries written: HOT). */
const rowUpdates = async (pool: pg.Pool) => {
  // A backend reports its counts at most once a second, and an idle one within 10 s.
  await new Promise((resolve) => setTimeout(resolve, 11_000))
  const { rows } = await pool.query<{ updates: string; hot: string }>(
    "select n_tup_upd as updates, n_tup_hot_upd as hot from pg_stat_user_tables where relname = 'deposit_requests'"
  )
  return { updates: Number(rows[0]!.updates), hot: Number(rows[0]!.hot) }
}
const hotShare = (from: { updates: number; hot: number }, to: { updates: number; hot: number }) =>
  `${((100 * (to.hot - from.hot)) / Math.max(1, to.updates - from.updates)).toFixed(0)} % of ${to.updates - from.updates} in the rounds`

type PostgresCpu = ReturnType<typeof postgresCpuMeter>

/** PostgreSQL's CPU since `from` (a meter's reading), in µs per item; `NaN` where it cannot be read. */
const perItemMicros = (server: PostgresCpu, from: number | undefined, items: number) =>
  (server.since(from) * 1000) / items

const rawInserts = async (pool: pg.Pool, connections: number, server: PostgresCpu) => {
  let done = 0
  const deadline = Date.now() + seconds * 1000
  const cpu = process.cpuUsage()
  const serverCpu = server.ms()
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < deadline) {
        await pool.query("insert into bench_raw (payload) values ($1)", [{ n: done }])
        done++
      }
    })
  )
  const used = process.cpuUsage(cpu)
  return {
    rate: done / seconds,
    cpuPerInsert: (used.user + used.system) / done,
    serverCpuPerInsert: perItemMicros(server, serverCpu, done)
  }
}

export async function run() {
  const micro = xstateAlone()
  const baseTracer = await Effect.runPromise(Effect.tracer)
  const db = await createTestDatabase()
  const runtime = actorHostRuntime(db.url)
  const runtimeWithoutHistory = actorHostRuntime(db.url, { stepHistoryDays: 0 })
  const pool = new pg.Pool({ connectionString: db.url, max: CONNECTIONS })
  const server = postgresCpuMeter(new URL(db.url).pathname.slice(1))
  const log = (line: string) => process.stdout.write(`${line}\n`)
  try {
    await pool.query("create table bench_raw (id bigserial primary key, payload jsonb not null)")
    await pool.query(
      "create table bench_block_marks (lane int not null, block int not null, credits int not null)"
    )
    const accountId = (await createMerchant(db.url)).accountId.slice(5)
    const { issuerId, payoutId } = await runtime.runPromise(
      Effect.gen(function* () {
        const issuer = yield* (yield* Issuers).create(accountId, { display_name: "Bench issuer" })
        const payout = yield* (yield* PayoutAddresses).create(accountId, { address: PAYOUT })
        return { issuerId: issuer.id, payoutId: payout.id }
      })
    )
    // Requests made the production way (the create's group commit), each with its wallet attested: ready for credits.
    let seeded = 0
    const seed = (count: number, amountBaseUnits: bigint) =>
      runtime.runPromise(
        Effect.forEach(
          Array.from({ length: count }, () => seeded++),
          (n) =>
            Effect.gen(function* () {
              const created = yield* (yield* DepositRequests).create(accountId, `bench-${n}`, {
                amount: amountBaseUnits,
                issuer_id: toId("iss", issuerId),
                payout_address_id: toId("pa", payoutId)
              })
              const id = created.wire.id.slice("dr_".length)
              yield* (yield* ActorHost).apply(id, "attest", {
                type: "payer.wallet_attested",
                at: new Date().toISOString(),
                wallet: WALLET,
                address: `0x${id.replaceAll("-", "").padEnd(40, "0")}`
              })
              return id
            }),
          { concurrency: 16 }
        )
      )

    // (a) events applied one `apply` each, 8 writers, each crediting 40 requests in turn, each request a few times
    const seedStarted = performance.now()
    const ids = await seed(CONNECTIONS * REQUESTS_PER_CONNECTION, 1_000_000_000_000n)
    const seedSeconds = (performance.now() - seedStarted) / 1000
    // Production's tables have statistics (autovacuum analyzes them); the machines' PostgreSQL runs without
    // autovacuum, so the benchmark analyzes once it has seeded. Plans made from them once hashed every applied event
    // on each commit (migration 0029): the rounds ran at a third of their speed.
    await pool.query("analyze")
    let nextCredit = 0
    /** Where each writer is in its requests (carried across rounds, so every round credits fresh ones). */
    const cursors = {
      on: Array.from({ length: CONNECTIONS }, () => 0),
      off: Array.from({ length: CONNECTIONS }, () => 0)
    }
    /** Each writer's requests: the first two thirds for the host keeping the step history, the rest for the other. */
    const ON_SHARE = Math.floor((REQUESTS_PER_CONNECTION * 2) / 3)
    const creditsOf = new Uint32Array(ids.length)
    let mostCredits = 0
    /**
     * `traced`: spans made (as with an OTLP endpoint set, the export aside) and timed. Untraced is production's
     * default: without an endpoint the tracer is off (src/app/Tracing.ts).
     */
    const actorRound = async (durationSeconds: number, traced: boolean, history = true) => {
      const side = history ? "on" : "off"
      let applied = 0
      const latencies: Array<number> = []
      const deadline = Date.now() + durationSeconds * 1000
      const commits: Array<number> = []
      const statements: Array<number> = []
      let reads = 0
      const tracer = actorTimesTracer(
        baseTracer,
        "ActorHost.sharedCommit",
        (ms) => commits.push(ms),
        (ms) => statements.push(ms),
        () => reads++
      )
      const cpu = process.cpuUsage()
      const serverCpu = server.ms()
      // The writers are fibers, as the host's callers are (request handlers, the credit consumers).
      await (history ? runtime : runtimeWithoutHistory).runPromise(
        Effect.flatMap(ActorHost, (h) =>
          Effect.forEach(
            Array.from({ length: CONNECTIONS }, (_, lane) => lane),
            (lane) =>
              Effect.gen(function* () {
                const first = lane * REQUESTS_PER_CONNECTION + (history ? 0 : ON_SHARE)
                const own = ids.slice(
                  first,
                  lane * REQUESTS_PER_CONNECTION + (history ? ON_SHARE : REQUESTS_PER_CONNECTION)
                )
                while (Date.now() < deadline) {
                  const j = cursors[side][lane]!++
                  // The j-th credit goes to the (j mod 40)-th request of the current window of 40.
                  const slot =
                    (Math.floor(j / (WINDOW * CREDITS_PER_REQUEST)) * WINDOW + (j % WINDOW)) % own.length
                  mostCredits = Math.max(mostCredits, ++creditsOf[first + slot]!)
                  const n = nextCredit++
                  // A credit id as the chain's: chain id, transaction hash, log index.
                  const key = `143:0x${n.toString(16).padStart(64, "0")}:${lane}`
                  const t0 = performance.now()
                  yield* h.apply(own[slot]!, `credit:${key}`, {
                    type: "deposit.credited",
                    at: new Date().toISOString(),
                    credit_id: key,
                    amount_base_units: "1",
                    from: WALLET
                  })
                  latencies.push(performance.now() - t0)
                  applied++
                }
              }),
            { concurrency: "unbounded", discard: true }
          )
        ).pipe(traced ? Effect.withTracer(tracer) : Effect.withTracerEnabled(false))
      )
      const used = process.cpuUsage(cpu)
      return {
        rate: applied / durationSeconds,
        latencies,
        cpuPerEvent: (used.user + used.system) / applied,
        serverCpuPerEvent: perItemMicros(server, serverCpu, applied),
        commit: {
          count: commits.length,
          ms: median(commits),
          statementMs: median(statements),
          events: applied / commits.length,
          reads
        }
      }
    }
    await actorRound(1, false) // warm-up: JIT, pool, plans
    await actorRound(1, false, false)
    await rawInserts(pool, CONNECTIONS, server)
    const raws: Array<number> = []
    const rates: Array<number> = []
    const p50s: Array<number> = []
    const p99s: Array<number> = []
    const cpus: Array<number> = []
    const rawCpus: Array<number> = []
    const serverCpus: Array<number> = []
    const rawServerCpus: Array<number> = []
    const tracedRatios: Array<number> = []
    /** Per round: CPU per applied event ÷ CPU per raw INSERT commit, each node + PostgreSQL. */
    const cpuRatios: Array<number> = []
    const beforeRounds = await rowUpdates(pool)
    for (let r = 0; r < rounds; r++) {
      const { rate: raw, cpuPerInsert, serverCpuPerInsert } = await rawInserts(pool, CONNECTIONS, server)
      const actors = await actorRound(seconds, false)
      const traced = await actorRound(TRACED_SECONDS, true)
      tracedRatios.push(traced.rate / raw)
      raws.push(raw)
      rawCpus.push(cpuPerInsert)
      rates.push(actors.rate)
      p50s.push(quantile(actors.latencies, 0.5))
      p99s.push(quantile(actors.latencies, 0.99))
      cpus.push(actors.cpuPerEvent)
      serverCpus.push(actors.serverCpuPerEvent)
      rawServerCpus.push(serverCpuPerInsert)
      cpuRatios.push((actors.cpuPerEvent + actors.serverCpuPerEvent) / (cpuPerInsert + serverCpuPerInsert))
      log(
        `  round ${r + 1}: raw ${raw.toFixed(0)}/s, events ${actors.rate.toFixed(0)}/s (${(actors.rate / raw).toFixed(2)}x), p50 ${quantile(actors.latencies, 0.5).toFixed(2)} ms, p99 ${quantile(actors.latencies, 0.99).toFixed(2)} ms, CPU per event ${actors.cpuPerEvent.toFixed(0)} µs here and ${actors.serverCpuPerEvent.toFixed(0)} µs in PostgreSQL (per raw insert ${cpuPerInsert.toFixed(0)} and ${serverCpuPerInsert.toFixed(0)}: ${cpuRatios.at(-1)!.toFixed(2)}x); with spans made ${traced.rate.toFixed(0)}/s (${(traced.rate / raw).toFixed(2)}x, ${traced.cpuPerEvent.toFixed(0)} µs CPU here per event): ${traced.commit.count} commits of ${traced.commit.events.toFixed(1)} events, median ${traced.commit.ms.toFixed(2)} ms each (its statement ${traced.commit.statementMs.toFixed(2)} ms), one every ${((TRACED_SECONDS * 1000) / traced.commit.count).toFixed(2)} ms; ${((100 * traced.commit.reads) / traced.commit.count).toFixed(0)} % of them read rows not held in memory first`
      )
    }

    const hot = hotShare(beforeRounds, await rowUpdates(pool))
    // (a') the step history's cost: slices with it and without it, alternated ABBA, summed per side
    const history = {
      on: { events: 0, seconds: 0, cpu: 0, serverCpu: 0 },
      off: { events: 0, seconds: 0, cpu: 0, serverCpu: 0 }
    }
    for (let slice = 0; slice < 4 * AB_PAIRS; slice++) {
      const keep = slice % 4 === 0 || slice % 4 === 3
      const r = await actorRound(AB_SLICE_SECONDS, false, keep)
      const events = r.rate * AB_SLICE_SECONDS
      const side = history[keep ? "on" : "off"]
      side.events += events
      side.seconds += AB_SLICE_SECONDS
      side.cpu += r.cpuPerEvent * events
      side.serverCpu += r.serverCpuPerEvent * events
    }
    const perSide = (side: (typeof history)["on"]) => ({
      rate: side.events / side.seconds,
      cpu: side.cpu / side.events,
      serverCpu: side.serverCpu / side.events
    })
    const withHistory = perSide(history.on)
    const withoutHistory = perSide(history.off)
    // (b) a block's 500 credits, each to a fresh request it funds (deposited: a lifecycle event and a settle command)
    const blockTimes: Array<number> = []
    const blockCpus: Array<number> = []
    const blockServerCpus: Array<number> = []
    const stepTimes: Array<number> = []
    const statementTimes: Array<number> = []
    const tracedBlockTimes: Array<number> = []
    // Each block twice: untraced (production's default), then with spans made and timed, for where its time goes.
    for (let n = 0; n <= 2 * BLOCKS + 1; n++) {
      const b = Math.floor(n / 2)
      const traced = n % 2 === 1
      const steps: Array<number> = []
      const statements: Array<number> = []
      const block = await seed(BLOCK_CREDITS, 1_000_000n)
      const lanes = Array.from({ length: BLOCK_LANES }, (_, lane) =>
        block.filter((_, i) => i % BLOCK_LANES === lane)
      )
      const at = new Date().toISOString()
      const cpu = process.cpuUsage()
      const serverCpu = server.ms()
      const t0 = performance.now()
      await runtime.runPromise(
        Effect.gen(function* () {
          const host = yield* ActorHost
          const sql = yield* SqlClient.SqlClient
          yield* Effect.forEach(
            lanes,
            (requests, lane) =>
              host.applyMany(
                requests.map((id) => ({
                  depositRequestId: id,
                  eventId: `credit:block-${n}:${id}`,
                  event: {
                    type: "deposit.credited",
                    at,
                    credit_id: `block-${n}:${id}`,
                    amount_base_units: "1000000",
                    from: WALLET
                  }
                })),
                // The watcher marks its credits applied in the same transaction.
                Effect.asVoid(
                  sql`insert into bench_block_marks (lane, block, credits) values (${lane}, ${b}, ${requests.length})`
                )
              ),
            { concurrency: "unbounded", discard: true }
          )
        }).pipe(
          // A block's XState steps (one thread, every lane's) and its statements (summed over the lanes, which overlap).
          traced
            ? Effect.withTracer(
                actorTimesTracer(
                  baseTracer,
                  "DepositRequest.step",
                  (ms) => steps.push(ms),
                  (ms) => statements.push(ms)
                )
              )
            : Effect.withTracerEnabled(false)
        )
      )
      if (b > 0 && traced) {
        tracedBlockTimes.push(performance.now() - t0)
        stepTimes.push(sum(steps))
        statementTimes.push(sum(statements))
      } else if (b > 0) {
        blockTimes.push(performance.now() - t0)
        const used = process.cpuUsage(cpu)
        blockCpus.push((used.user + used.system) / 1000)
        blockServerCpus.push(server.since(serverCpu))
      }
    }
    const deposited = await pool.query<{ n: number }>(
      "select count(*)::int as n from lifecycle_events where type = 'deposit_request.deposited'"
    )

    const raw = median(raws)
    const rate = median(rates)
    log(
      [
        "",
        `actors: events applied to persisted actors (${CONNECTIONS} writers, each crediting ${WINDOW} requests in turn, ${CREDITS_PER_REQUEST} credits each, then the next ${WINDOW}; real PostgreSQL; medians of ${rounds} rounds of ${seconds} s, interleaved)`,
        `  ${ids.length} requests seeded (created and attested the production way) in ${seedSeconds.toFixed(1)} s, then analyzed; the most credits one request got: ${mostCredits}${mostCredits > CREDITS_PER_REQUEST ? " (a writer ran out of fresh requests: raise BENCH_REQUESTS_PER_WRITER)" : ""}`,
        `  raw single-row INSERT commits (pg, ${CONNECTIONS} connections): ${raw.toFixed(0)}/s`,
        `  events applied (restore, transition, persist, dedupe, events, outbox; the tracer off, as in production without an OTLP endpoint): ${rate.toFixed(0)}/s  p50 ${median(p50s).toFixed(2)} ms  p99 ${median(p99s).toFixed(2)} ms`,
        `  CPU per event applied: ${median(cpus).toFixed(0)} µs in this process (the host, its callers, the pg client), ${median(serverCpus).toFixed(0)} µs in PostgreSQL; per raw insert ${median(rawCpus).toFixed(0)} and ${median(rawServerCpus).toFixed(0)} µs; ratio ${median(cpuRatios).toFixed(2)}x (rounds: ${cpuRatios.map((r) => r.toFixed(2)).join(", ")})`,
        `  the step history's cost (A/B in this run: ${4 * AB_PAIRS} slices of ${AB_SLICE_SECONDS} s alternated ABBA, the same ${CONNECTIONS} writers; B a host with STEP_HISTORY_DAYS=0): with it ${withHistory.rate.toFixed(0)}/s, ${withHistory.cpu.toFixed(0)} µs here + ${withHistory.serverCpu.toFixed(0)} µs in PostgreSQL per event; without it ${withoutHistory.rate.toFixed(0)}/s, ${withoutHistory.cpu.toFixed(0)} + ${withoutHistory.serverCpu.toFixed(0)} µs; rate ratio ${(withHistory.rate / withoutHistory.rate).toFixed(2)}, ${(withHistory.cpu + withHistory.serverCpu - withoutHistory.cpu - withoutHistory.serverCpu).toFixed(0)} µs more CPU per event`,
        `  request row updates that were heap-only (HOT: no index entry written): ${hot}`,
        `  ratio events/raw inserts: ${(rate / raw).toFixed(2)}x (rounds: ${rates.map((r, i) => (r / raws[i]!).toFixed(2)).join(", ")}); with every span made: ${median(tracedRatios).toFixed(2)}x (rounds: ${tracedRatios.map((r) => r.toFixed(2)).join(", ")})`,
        `  a block's ${BLOCK_CREDITS} credits through applyMany (${BLOCK_LANES} lanes side by side, each request funded): median ${median(blockTimes).toFixed(1)} ms  p99 ${quantile(blockTimes, 0.99).toFixed(1)} ms over ${blockTimes.length} blocks (target < 50 ms); deposited events ${deposited.rows[0]?.n}`,
        `    with every span made: median ${median(tracedBlockTimes).toFixed(1)} ms, of which XState steps ${median(stepTimes).toFixed(1)} ms (the lanes' steps, one after another on the one thread), apply_actor_steps statements ${median(statementTimes).toFixed(1)} ms summed over the ${BLOCK_LANES} lanes (they overlap; two cores)`,
        `    CPU per block (mean; /proc counts PostgreSQL's in 10 ms ticks): ${mean(blockCpus).toFixed(1)} ms in this process, ${mean(blockServerCpus).toFixed(1)} ms in PostgreSQL; on ${cores} cores, ${((mean(blockCpus) + mean(blockServerCpus)) / cores).toFixed(1)} ms is the least a block can take`,
        `  XState step alone (restore + transition + persisted snapshot): ${micro.toFixed(1)} µs per event (target < 200 µs)`,
        ""
      ].join("\n")
    )
    recordFigure({
      figure: `events applied to persisted actors, ${CONNECTIONS} writers, tracer off`,
      value: rate,
      unit: "events/s",
      target: "≥ 0.5× baseline",
      met: rate / raw >= 0.5,
      baseline: { name: `raw single-row INSERT commits, ${CONNECTIONS} connections`, value: raw, unit: "/s" }
    })
    recordFigure({ figure: "events applied, p99", value: median(p99s), unit: "ms", target: "printed" })
    const cpuRatio = median(cpuRatios)
    recordFigure({
      figure:
        "CPU per event applied, node + PostgreSQL (the bench database's backends and the server's writers)",
      value: median(cpus) + median(serverCpus),
      unit: "µs",
      target: "≤ 1.0× baseline",
      met: cpuRatio <= 1,
      baseline: {
        name: `raw single-row INSERT commit, node + PostgreSQL, ${CONNECTIONS} connections`,
        value: median(rawCpus) + median(rawServerCpus),
        unit: "µs"
      },
      ratio: cpuRatio
    })
    recordFigure({
      figure: "events applied with the step history kept (A/B slices alternated in one run)",
      value: withHistory.rate,
      unit: "events/s",
      target: "printed",
      baseline: {
        name: "events applied without it (STEP_HISTORY_DAYS=0)",
        value: withoutHistory.rate,
        unit: "/s"
      }
    })
    recordFigure({
      figure: "CPU per event applied with the step history kept, node + PostgreSQL",
      value: withHistory.cpu + withHistory.serverCpu,
      unit: "µs",
      target: "printed",
      baseline: {
        name: "without it",
        value: withoutHistory.cpu + withoutHistory.serverCpu,
        unit: "µs"
      }
    })
    const floor = (mean(blockCpus) + mean(blockServerCpus)) / cores
    recordFigure({
      figure: `a block's ${BLOCK_CREDITS} credits through applyMany (${BLOCK_LANES} lanes), median`,
      value: median(blockTimes),
      unit: "ms",
      target: "< 50 ms",
      met: median(blockTimes) < 50,
      baseline: { name: `the block's CPU (node + PostgreSQL) ÷ ${cores} cores`, value: floor, unit: "ms" }
    })
    recordFigure({
      figure: "XState step alone (restore + transition + persisted snapshot)",
      value: micro,
      unit: "µs",
      target: "< 200 µs",
      met: micro < 200
    })
  } finally {
    server.stop()
    await pool.end()
    await runtime.dispose()
    await runtimeWithoutHistory.dispose()
    await db.drop()
  }
}
