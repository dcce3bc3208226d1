import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Schema } from "effect"
import { formatAmount } from "../domain/Amount"
import { toId } from "../domain/PrefixedId"
import { orDieOnStorage } from "../platform/SqlFailure"

/**
 * The merchant's day in figures (`GET /v1/account/summary`, infra/decisions/0084-account-summary-and-overview.md):
 * what the dashboard's overview shows, computed here so the page and an integrator read the same numbers. Every
 * statement is bounded by the few rows that need action (indexes of infra/migrations/0047_account_summary.ts) or
 * by the quarter-hour sums of the last 30 days (infra/migrations/0054_account_activity.ts), never by the account's
 * history or its volume.
 */

/** Local days the chart covers; the periods are its last 1, 7 and 30 days. */
export const SUMMARY_DAYS = 30
/** How far ahead a deadline counts as expiring soon. */
export const EXPIRING_SOON_MS = 60 * 60 * 1000
/** How far back failed deliveries make an endpoint failing. */
export const FAILING_WINDOW_MS = 60 * 60 * 1000
/** The requests needing action listed (the counts cover all of them). */
export const NEEDS_ACTION_LISTED = 10
/** The events listed, newest first. */
export const RECENT_EVENTS = 10

/**
 * A time zone the summary accepts: a name Intl knows (`America/Los_Angeles`, `UTC`), answered in its canonical
 * spelling. Offsets (`+05:00`) are refused: PostgreSQL reads a bare offset with POSIX's inverted sign.
 */
export const canonicalTimeZone = (zone: string): string | undefined => {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(zone) || zone.length > 64) return undefined
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: zone }).resolvedOptions().timeZone
  } catch {
    return undefined
  }
}

const Numeric = Schema.String.pipe(Schema.pattern(/^\d+$/))
const Count = Schema.NumberFromString.pipe(Schema.int())

const DayRow = Schema.Struct({
  day: Schema.String,
  settled_count: Count,
  settled_volume: Numeric,
  returned_volume: Numeric,
  created_count: Count
})

const NeedsActionRow = Schema.Struct({
  id: Schema.String,
  kind: Schema.Literal("held_transfer", "needs_attention", "expiring_soon"),
  status: Schema.String,
  amount_base_units: Numeric,
  received_base_units: Numeric,
  reference: Schema.String,
  at: Schema.DateFromSelf,
  message: Schema.NullOr(Schema.String)
})

const NeedsActionCounts = Schema.Struct({
  needs_attention: Count,
  held_transfers: Count,
  expiring_soon: Count
})

const FailingEndpointRow = Schema.Struct({
  id: Schema.String,
  url: Schema.String,
  last_outcome: Schema.String,
  last_attempted_at: Schema.DateFromSelf,
  last_response_status: Schema.NullOr(Schema.Int),
  last_error: Schema.NullOr(Schema.String),
  failures_last_hour: Count
})

const EventRow = Schema.Struct({
  id: Schema.String,
  type: Schema.String,
  deposit_request_id: Schema.NullOr(Schema.String),
  occurred_at: Schema.DateFromSelf
})

export interface PeriodFigures {
  readonly from: Date
  readonly settled_volume: string
  readonly settled_volume_base_units: string
  readonly settled_count: number
  readonly created_count: number
  readonly returned_volume: string
  readonly returned_volume_base_units: string
}

const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  /**
   * One row per local day of the window from `from` (a local midnight), oldest first, summed from the account's
   * activity by quarter hour (migration 0054): requests created, and settlements and returns at the instant their
   * lifecycle events record them. At most 30 days of quarter hours are read, however busy the account; every zone's
   * midnight falls on a quarter hour, so each quarter belongs to one local day.
   */
  const days = SqlSchema.findAll({
    Request: Schema.Struct({
      account_id: Schema.String,
      zone: Schema.String,
      from: Schema.DateFromSelf
    }),
    Result: DayRow,
    execute: (r) => sql`
      with sums as (
        select (a.quarter at time zone ${r.zone})::date as day, sum(a.settled_count) as settled_count,
          sum(a.settled_base_units) as settled_volume, sum(a.returned_base_units) as returned_volume,
          sum(a.created_count) as created_count
        from account_activity a
        where a.account_id = ${r.account_id} and a.quarter >= ${r.from}
        group by 1
      )
      select to_char(g.day, 'YYYY-MM-DD') as day,
        coalesce(s.settled_count, 0)::text as settled_count,
        coalesce(s.settled_volume, 0)::text as settled_volume,
        coalesce(s.returned_volume, 0)::text as returned_volume,
        coalesce(s.created_count, 0)::text as created_count
      from (
        select ((${r.from}::timestamptz at time zone ${r.zone})::date + i) as day
        from generate_series(0, ${SUMMARY_DAYS - 1}::int) i
      ) g
      left join sums s on s.day = g.day
      order by g.day`
  })

  /** The writes since the last summary, added to the quarter-hour sums (infra/sql/functions/fold_account_activity.sql). */
  const foldActivity = (accountId: string) => sql`select fold_account_activity(${accountId})`

  const localMidnights = SqlSchema.single({
    Request: Schema.Struct({ zone: Schema.String, now: Schema.DateFromSelf }),
    Result: Schema.Struct({
      today: Schema.DateFromSelf,
      last_7_days: Schema.DateFromSelf,
      last_30_days: Schema.DateFromSelf
    }),
    execute: (r) => sql`
      with today as (select (${r.now}::timestamptz at time zone ${r.zone})::date as day)
      select (day::timestamp at time zone ${r.zone}) as today,
        ((day - 6)::timestamp at time zone ${r.zone}) as last_7_days,
        ((day - ${SUMMARY_DAYS - 1}::int)::timestamp at time zone ${r.zone}) as last_30_days
      from today`
  })

  /**
   * Each request needing action once, under its most urgent reason: a transfer held by the token gate (money
   * stuck), then any other pause, then a deadline within the hour (soonest first).
   */
  const needsAction = SqlSchema.findAll({
    Request: Schema.Struct({
      account_id: Schema.String,
      now: Schema.DateFromSelf,
      soon: Schema.DateFromSelf,
      limit: Schema.Int
    }),
    Result: NeedsActionRow,
    execute: (r) => sql`
      with held as (
        select d.id, min(h.held_at) as at, min(h.reason) as message
        from held_transfers h join deposit_requests d on d.id = h.deposit_request_id
        where d.account_id = ${r.account_id}
        group by d.id
      ), paused as (
        select d.id, coalesce((d.snapshot #>> '{context,attention,since}')::timestamptz, d.updated_at) as at,
          d.snapshot #>> '{context,attention,message}' as message
        from deposit_requests d
        where d.account_id = ${r.account_id} and d.status = 'needs_attention'
          and d.id not in (select id from held)
      ), expiring as (
        select d.id, d.expires_at as at, null::text as message
        from deposit_requests d
        where d.account_id = ${r.account_id}
          and d.status in ('awaiting_payer', 'ready', 'partially_deposited')
          and d.expires_at > ${r.now} and d.expires_at <= ${r.soon}
          and d.id not in (select id from held)
      ), listed as (
        (select id, 'held_transfer' as kind, 0 as rank, at, message from held order by at limit ${r.limit})
        union all
        (select id, 'needs_attention', 1, at, message from paused order by at limit ${r.limit})
        union all
        (select id, 'expiring_soon', 2, at, message from expiring order by at limit ${r.limit})
      )
      select l.id, l.kind, d.status, d.amount_base_units::text as amount_base_units,
        d.received_base_units::text as received_base_units, d.reference, l.at, l.message
      from listed l join deposit_requests d on d.id = l.id
      order by l.rank, l.at, l.id
      limit ${r.limit}`
  })

  const needsActionCounts = SqlSchema.single({
    Request: Schema.Struct({
      account_id: Schema.String,
      now: Schema.DateFromSelf,
      soon: Schema.DateFromSelf
    }),
    Result: NeedsActionCounts,
    execute: (r) => sql`
      select
        (select count(*) from deposit_requests
          where account_id = ${r.account_id} and status = 'needs_attention')::text as needs_attention,
        (select count(distinct h.deposit_request_id) from held_transfers h
          join deposit_requests d on d.id = h.deposit_request_id
          where d.account_id = ${r.account_id})::text as held_transfers,
        (select count(*) from deposit_requests
          where account_id = ${r.account_id}
            and status in ('awaiting_payer', 'ready', 'partially_deposited')
            and expires_at > ${r.now} and expires_at <= ${r.soon})::text as expiring_soon`
  })

  /**
   * Active HTTPS endpoints whose latest delivery did not succeed, or that failed within the window. Listeners
   * (CLI-pulled, no URL) are left out, as the webhooks list leaves them out.
   */
  const failingEndpoints = SqlSchema.findAll({
    Request: Schema.Struct({ account_id: Schema.String, since: Schema.DateFromSelf }),
    Result: FailingEndpointRow,
    execute: (r) => sql`
      select e.id, e.url, last.outcome as last_outcome, last.attempted_at as last_attempted_at,
        last.response_status as last_response_status,
        coalesce(last.error_message, last.error_kind) as last_error,
        recent.failures::text as failures_last_hour
      from webhook_endpoints e
      cross join lateral (
        select outcome, attempted_at, response_status, error_kind, error_message
        from webhook_deliveries d where d.endpoint_id = e.id
        order by d.id desc limit 1
      ) last
      cross join lateral (
        select count(*) as failures from webhook_deliveries d
        where d.endpoint_id = e.id and d.outcome in ('retrying', 'failed') and d.attempted_at >= ${r.since}
      ) recent
      where e.account_id = ${r.account_id} and e.disabled_at is null and not e.listener
        and (last.outcome in ('retrying', 'failed') or recent.failures > 0)
      order by last.attempted_at desc, e.id`
  })

  const recentEvents = SqlSchema.findAll({
    Request: Schema.Struct({ account_id: Schema.String, limit: Schema.Int }),
    Result: EventRow,
    execute: (r) => sql`
      select id, type, deposit_request_id, occurred_at from lifecycle_events
      where account_id = ${r.account_id}
      order by occurred_at desc, id desc limit ${r.limit}`
  })

  const summary = (accountId: string, timeZone: string) =>
    Effect.gen(function* () {
      const now = new Date(yield* Clock.currentTimeMillis)
      const soon = new Date(now.getTime() + EXPIRING_SOON_MS)
      const midnights = yield* orDieOnStorage(localMidnights({ zone: timeZone, now }))
      yield* orDieOnStorage(foldActivity(accountId))
      const [dayRows, listed, counts, failing, events] = yield* Effect.all(
        [
          days({ account_id: accountId, zone: timeZone, from: midnights.last_30_days }),
          needsAction({ account_id: accountId, now, soon, limit: NEEDS_ACTION_LISTED }),
          needsActionCounts({ account_id: accountId, now, soon }),
          failingEndpoints({ account_id: accountId, since: new Date(now.getTime() - FAILING_WINDOW_MS) }),
          recentEvents({ account_id: accountId, limit: RECENT_EVENTS })
        ],
        { concurrency: "unbounded" }
      ).pipe(orDieOnStorage)
      const period = (from: Date, lastDays: number): PeriodFigures => {
        const rows = dayRows.slice(-lastDays)
        const sum = (pick: (row: (typeof rows)[number]) => string) =>
          rows.reduce((total, row) => total + BigInt(pick(row)), 0n)
        const settled = sum((r) => r.settled_volume)
        const returned = sum((r) => r.returned_volume)
        return {
          from,
          settled_volume: formatAmount(settled),
          settled_volume_base_units: settled.toString(),
          settled_count: rows.reduce((n, row) => n + row.settled_count, 0),
          created_count: rows.reduce((n, row) => n + row.created_count, 0),
          returned_volume: formatAmount(returned),
          returned_volume_base_units: returned.toString()
        }
      }
      return {
        time_zone: timeZone,
        generated_at: now,
        periods: {
          today: period(midnights.today, 1),
          last_7_days: period(midnights.last_7_days, 7),
          last_30_days: period(midnights.last_30_days, SUMMARY_DAYS)
        },
        days: dayRows.map((row) => ({
          date: row.day,
          settled_volume: formatAmount(BigInt(row.settled_volume)),
          settled_volume_base_units: row.settled_volume,
          settled_count: row.settled_count,
          created_count: row.created_count
        })),
        needs_action: {
          needs_attention_count: counts.needs_attention,
          held_transfer_count: counts.held_transfers,
          expiring_soon_count: counts.expiring_soon,
          requests: listed.map((row) => ({
            deposit_request_id: toId("dr", row.id),
            reason: row.kind,
            status: row.status,
            amount: formatAmount(BigInt(row.amount_base_units)),
            amount_base_units: row.amount_base_units,
            received: formatAmount(BigInt(row.received_base_units)),
            received_base_units: row.received_base_units,
            reference: row.reference,
            at: row.at,
            message: row.message
          }))
        },
        failing_endpoints: failing.map((row) => ({
          webhook_id: toId("wh", row.id),
          url: row.url,
          last_outcome: row.last_outcome,
          last_attempted_at: row.last_attempted_at,
          last_response_status: row.last_response_status,
          last_error: row.last_error,
          failures_last_hour: row.failures_last_hour
        })),
        recent_events: events.map((row) => ({
          id: toId("evt", row.id),
          type: row.type,
          deposit_request_id: row.deposit_request_id === null ? null : toId("dr", row.deposit_request_id),
          occurred_at: row.occurred_at
        }))
      }
    })

  return {
    summary: Effect.fn("AccountSummary.summary")(summary)
  } as const
})

/** The account's summary: figures by local day, what needs action, failing endpoints, the last events. */
export class AccountSummary extends Effect.Service<AccountSummary>()("deposits/AccountSummary", {
  effect: make
}) {}
