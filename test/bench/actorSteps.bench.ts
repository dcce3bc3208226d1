import { randomUUID } from "node:crypto"
import pg from "pg"
import { getAddress } from "viem"
import { createTestDatabase } from "../support/Database"
import { createMerchant } from "../support/Merchant"
import { seedReadyRequests } from "../support/seedReadyRequests"
import { benchSettings, recordFigure } from "./harness"
import { postgresCpuMs, postgresCpuSince } from "./postgresCpu"

/**
 * Issue 19 (1), the database's side alone: `apply_actor_steps_v2` called on one connection, one call after the
 * other, each call its own transaction (as the actor host sends it when no caller adds statements), for a call of
 * 1 event (an attestation, a lone credit), of 8 (a round of the `actors` suite: its 8 writers share a commit) and
 * of 125 funding credits with a lifecycle event and a command each (a lane of a block's 500). Beside it, on the same
 * connection, a single-row INSERT commit: what any commit costs here (round trip, WAL flush).
 *
 * The function as migrated (its statements planned once a session: migration 0028) against the same function left
 * to PostgreSQL's choice of plans (`plan_cache_mode` reset), alternated round by round, each on a new session. The
 * inputs are built from ready requests (the machine's real snapshot after an attestation: `seedReadyRequests`), one
 * version on, fresh event ids; the 125's lifecycle bodies and commands have the size and shape of a funding step's.
 */
const { rounds } = benchSettings()
const REQUESTS = 3000
const WALLET = getAddress("0x1111111111111111111111111111111111111111")
const PAYOUT = getAddress("0x52908400098527886E0F7030069857D2E4169EE7")
const SHAPES = [
  { name: "1 event", events: 1, emits: false, calls: 1000 },
  { name: "8 events", events: 8, emits: false, calls: 1000 },
  { name: "125 funding credits", events: 125, emits: true, calls: 40 }
] as const
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0

interface Row {
  readonly id: string
  version: bigint
  readonly status: string
  readonly snapshot: unknown
  readonly deposit_address: string | null
}

/** A funding step's webhook body: the event envelope around the request's webhook fields. */
const bodyOf = (row: Row) =>
  JSON.stringify({
    id: `evt_${randomUUID()}`,
    type: "deposit_request.deposited",
    occurred_at: "2026-11-25T12:00:00Z",
    data: {
      deposit_request: {
        id: `dr_${row.id}`,
        status: "deposited",
        amount: "1.000000",
        amount_base_units: "1000000",
        received: "1.000000",
        received_base_units: "1000000",
        heading: "",
        reference: "",
        metadata: {},
        customer_id: null,
        issuer_id: `iss_${randomUUID()}`,
        payer_policy_mode: "none",
        payer_reference: null,
        verification_completed_at: null,
        likely_unsolicited_at: null,
        payer_wallet: WALLET,
        address: row.deposit_address,
        wallet_bound_at: "2026-11-25T12:00:00Z",
        expires_at: "2026-11-26T12:00:00Z",
        created_at: "2026-11-25T12:00:00Z"
      }
    }
  })

export async function run() {
  const db = await createTestDatabase()
  const log = (line: string) => process.stdout.write(`${line}\n`)
  try {
    const accountId = (await createMerchant(db.url)).accountId.slice("acct_".length)
    const deposits = Array.from({ length: REQUESTS }, (_, i) =>
      getAddress(`0x${(i + 1).toString(16).padStart(40, "0")}`)
    )
    await seedReadyRequests(db.url, {
      accountId,
      wallet: WALLET,
      deposits,
      payouts: deposits.map(() => PAYOUT),
      amount: 1_000_000n
    })
    const admin = new pg.Client({ connectionString: db.url })
    await admin.connect()
    await admin.query("create table bench_raw (id bigserial primary key, payload jsonb not null)")
    const rows = (
      await admin.query<Omit<Row, "version"> & { version: string }>(
        "select id, version::text as version, status, snapshot, deposit_address from deposit_requests order by id"
      )
    ).rows.map((r): Row => ({ ...r, version: BigInt(r.version) }))

    // Rows taken in turn (no row twice in a call), each one version on: every call is applied, none refused.
    let next = 0
    const input = (events: number, emits: boolean) => {
      const taken = Array.from({ length: events }, () => rows[next++ % rows.length]!)
      const requests = taken.map((r) => {
        r.version++
        return {
          id: r.id,
          expected_version: String(r.version - 1n),
          version: String(r.version),
          status: r.status,
          snapshot: r.snapshot,
          received_base_units: "0",
          deposit_address: r.deposit_address
        }
      })
      return JSON.stringify({
        at: new Date().toISOString(),
        requests,
        events: taken.map((r) => ({ deposit_request_id: r.id, event_id: `credit:${randomUUID()}` })),
        lifecycle: emits
          ? taken.map((r, i) => ({
              n: 2 * i,
              id: randomUUID(),
              deposit_request_id: r.id,
              type: "deposit_request.deposited",
              dedupe: randomUUID(),
              body: bodyOf(r)
            }))
          : [],
        commands: emits
          ? taken.map((r, i) => ({
              n: 2 * i + 1,
              topic: "command.settle",
              deposit_request_id: r.id,
              payload: {
                kind: "command",
                type: "settle",
                command_id: `settle:dr_${r.id}`,
                amount_base_units: "1000000",
                to: PAYOUT
              }
            }))
          : []
      })
    }

    /**
     * Client time (ms, each call) and PostgreSQL's CPU (µs a call) of `calls` calls on a new session; each call's
     * input is made before its clock starts.
     */
    const measure = async <A>(
      calls: number,
      prepare: () => A,
      send: (client: pg.Client, a: A) => Promise<void>
    ) => {
      const client = new pg.Client({ connectionString: db.url })
      await client.connect()
      try {
        for (let i = 0; i < 10; i++) await send(client, prepare()) // past PostgreSQL's first five custom plans
        const times: Array<number> = []
        // PostgreSQL is idle while an input is made: its CPU over the loop is the calls'.
        const cpu = postgresCpuMs()
        for (let i = 0; i < calls; i++) {
          const a = prepare()
          const t0 = performance.now()
          await send(client, a)
          times.push(performance.now() - t0)
        }
        return { ms: median(times), cpuMicros: (postgresCpuSince(cpu) * 1000) / calls }
      } finally {
        await client.end()
      }
    }
    const apply = async (client: pg.Client, statement: string) => {
      const problems = await client.query("select * from apply_actor_steps_v2($1::jsonb)", [statement])
      if (problems.rows.length > 0) throw new Error(`refused: ${JSON.stringify(problems.rows[0])}`)
    }
    const modes = {
      migrated: "alter function apply_actor_steps_v2(jsonb) set plan_cache_mode = force_generic_plan",
      choice: "alter function apply_actor_steps_v2(jsonb) reset plan_cache_mode"
    } as const
    const results: Record<keyof typeof modes, Array<Array<{ ms: number; cpuMicros: number }>>> = {
      migrated: SHAPES.map(() => []),
      choice: SHAPES.map(() => [])
    }
    const inserts: Array<{ ms: number; cpuMicros: number }> = []
    for (let r = 0; r < rounds; r++) {
      inserts.push(
        await measure(
          1000,
          () => ({ n: r }),
          async (client, payload) => {
            await client.query("insert into bench_raw (payload) values ($1)", [payload])
          }
        )
      )
      const order: Array<keyof typeof modes> = r % 2 === 0 ? ["migrated", "choice"] : ["choice", "migrated"]
      for (const mode of order) {
        await admin.query(modes[mode])
        for (const [s, shape] of SHAPES.entries()) {
          results[mode][s]!.push(await measure(shape.calls, () => input(shape.events, shape.emits), apply))
        }
      }
    }
    await admin.query(modes.migrated)
    await admin.end()

    const figures = (xs: ReadonlyArray<{ ms: number; cpuMicros: number }>) =>
      `${median(xs.map((x) => x.ms)).toFixed(3)} ms (rounds: ${xs.map((x) => x.ms.toFixed(3)).join(", ")}), PostgreSQL's CPU ${median(xs.map((x) => x.cpuMicros)).toFixed(0)} µs`
    log(
      [
        "",
        `actorSteps: apply_actor_steps_v2 on one connection, each call its own transaction (medians of ${rounds} alternated rounds, each round's figure the median call; ${REQUESTS} ready requests; PostgreSQL's CPU from /proc in 10 ms ticks)`,
        `  single-row INSERT commit (the cost of any commit here): ${figures(inserts)}`,
        ...SHAPES.map((shape, s) => {
          const migrated = median(results.migrated[s]!.map((x) => x.ms))
          const choice = median(results.choice[s]!.map((x) => x.ms))
          return [
            `  ${shape.name} a call (${shape.calls} calls a round):`,
            `    planned once a session (as migrated): ${figures(results.migrated[s]!)}`,
            `    PostgreSQL's choice of plans: ${figures(results.choice[s]!)}`,
            `    as migrated ÷ PostgreSQL's choice: ${(migrated / choice).toFixed(2)}x; ÷ an INSERT commit: ${(migrated / median(inserts.map((x) => x.ms))).toFixed(1)}x`
          ].join("\n")
        }),
        ""
      ].join("\n")
    )
    for (const [s, shape] of SHAPES.entries()) {
      recordFigure({
        figure: `apply_actor_steps_v2, ${shape.name} a call, planned once a session (one connection)`,
        value: median(results.migrated[s]!.map((x) => x.ms)),
        unit: "ms",
        target: "—",
        baseline: {
          name: "PostgreSQL's choice of plans",
          value: median(results.choice[s]!.map((x) => x.ms)),
          unit: "ms"
        }
      })
    }
    recordFigure({
      figure: "single-row INSERT commit (the cost of any commit here)",
      value: median(inserts.map((x) => x.ms)),
      unit: "ms",
      target: "—"
    })
  } finally {
    await db.drop()
  }
}
