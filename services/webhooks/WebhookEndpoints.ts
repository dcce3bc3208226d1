import { PgClient } from "@effect/sql-pg"
import { Clock, Effect, Option } from "effect"
import { InvalidRequest, InvalidState, NotFound } from "../domain/Errors"
import { formatTimestamp } from "../domain/Timestamp"
import { toId } from "../domain/PrefixedId"
import { Ids } from "../platform/Ids"
import { dieOnSqlErrors } from "../platform/SqlFailure"
import { cancelSeries } from "./DeliveryAttempts"
import { newWebhookSecret } from "./WebhookSignature"
import { WebhookUrlCheck } from "./WebhookUrlRules"

export interface EndpointRow {
  readonly id: string
  readonly account_id: string
  readonly url: string
  readonly secret: string
  readonly created_at: Date
  readonly disabled_at: Date | null
}

export interface DeliveryRow {
  readonly id: string
  readonly endpoint_id: string
  readonly event_id: string
  readonly event_type: string
  readonly attempt: number
  readonly redelivery: boolean
  readonly outcome: string
  readonly response_status: number | null
  readonly error_kind: string | null
  readonly error_message: string | null
  readonly attempted_at: Date
  readonly duration_ms: number
  readonly next_attempt_at: Date | null
}

export const endpointWire = (row: EndpointRow) => ({
  id: toId("wh", row.id) as string,
  url: row.url,
  created_at: formatTimestamp(row.created_at),
  disabled_at: row.disabled_at === null ? null : formatTimestamp(row.disabled_at)
})

export const deliveryWire = (row: DeliveryRow) => ({
  id: toId("whd", row.id) as string,
  webhook_id: toId("wh", row.endpoint_id) as string,
  event_id: toId("evt", row.event_id) as string,
  event_type: row.event_type,
  attempt: row.attempt,
  redelivery: row.redelivery,
  outcome: row.outcome as "succeeded" | "retrying" | "failed" | "cancelled",
  response_status: row.response_status,
  error_kind: row.error_kind,
  error_message: row.error_message,
  attempted_at: formatTimestamp(row.attempted_at),
  duration_ms: row.duration_ms,
  next_attempt_at: row.next_attempt_at === null ? null : formatTimestamp(row.next_attempt_at)
})

const page = <T extends { id: string }>(rows: ReadonlyArray<T>, limit: number) => ({
  items: rows.slice(0, limit),
  next: rows.length > limit ? (rows[limit - 1]?.id ?? null) : null
})

/** Endpoints, test events, redelivery and the delivery log; every query is scoped by account. */
const make = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const ids = yield* Ids
  const urlCheck = yield* WebhookUrlCheck
  const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

  const create = (accountId: string, url: string) =>
    Effect.gen(function* () {
      yield* urlCheck
        .check(url)
        .pipe(
          Effect.mapError(
            (reason) => new InvalidRequest({ message: `'url' is not allowed: ${reason}`, param: "url" })
          )
        )
      const at = yield* now
      const secret = newWebhookSecret()
      const rows = yield* sql<EndpointRow>`
        insert into webhook_endpoints (id, account_id, url, secret, created_at)
        values (${ids.next()}, ${accountId}, ${url}, ${secret}, ${at})
        returning *`
      return { ...endpointWire(rows[0]!), secret }
    })

  // Listeners (`WebhookListeners.ts`) share the table but none of these routes but the delivery log: they have no
  // URL, take no test event or redelivery, and are removed through their own route.
  const get = (accountId: string, uuid: string, listeners: "with listeners" | "without" = "without") =>
    sql<EndpointRow>`
      select * from webhook_endpoints where id = ${uuid} and account_id = ${accountId}
      ${listeners === "without" ? sql`and not listener` : sql``}`.pipe(
      Effect.map((rows) => Option.fromNullable(rows[0]))
    )

  const require = (accountId: string, uuid: string, listeners: "with listeners" | "without" = "without") =>
    Effect.flatMap(
      get(accountId, uuid, listeners),
      Option.match({ onNone: () => NotFound.of("webhook"), onSome: Effect.succeed })
    )

  const list = (accountId: string, limit: number, startingAfter: string | undefined) =>
    Effect.gen(function* () {
      const rows = yield* sql<EndpointRow>`
        select * from webhook_endpoints where account_id = ${accountId} and not listener
        ${startingAfter === undefined ? sql`` : sql`and id < ${startingAfter}`}
        order by id desc limit ${limit + 1}`
      const p = page(rows, limit)
      return { webhooks: p.items.map(endpointWire), next_cursor: p.next === null ? null : toId("wh", p.next) }
    })

  /** Disabling stops every delivery still pending for the endpoint; its history stays readable. */
  const disable = (accountId: string, uuid: string) =>
    sql.withTransaction(
      Effect.gen(function* () {
        yield* require(accountId, uuid)
        yield* cancelSeries(uuid, yield* now)
      })
    )

  const schedule = (accountId: string, endpointId: string, eventId: string, redelivery: boolean, at: Date) =>
    sql`
      insert into webhook_jobs (id, account_id, endpoint_id, event_id, redelivery, state, next_attempt_at, created_at)
      values (${ids.next()}, ${accountId}, ${endpointId}, ${eventId}, ${redelivery}, 'pending', ${at}, ${at})
      on conflict do nothing`

  /** A `webhook.test` event for this endpoint only. */
  const sendTest = (accountId: string, uuid: string) =>
    sql.withTransaction(
      Effect.gen(function* () {
        const endpoint = yield* require(accountId, uuid)
        if (endpoint.disabled_at !== null) {
          return yield* new InvalidState({
            message: "The webhook endpoint is disabled; it takes no test event."
          })
        }
        const at = yield* now
        const eventId = ids.next()
        const body = JSON.stringify({
          id: toId("evt", eventId),
          type: "webhook.test",
          occurred_at: formatTimestamp(at),
          data: { webhook_id: toId("wh", uuid) }
        })
        yield* sql`
          insert into lifecycle_events (id, account_id, deposit_request_id, type, dedupe, body, occurred_at)
          values (${eventId}, ${accountId}, null, 'webhook.test', ${eventId}, ${body}, ${at})`
        yield* schedule(accountId, uuid, eventId, false, at)
        return { event_id: toId("evt", eventId) }
      })
    )

  /** A new attempt series of an existing event (same id, same bytes) to one endpoint, marked as a redelivery. */
  const redeliver = (accountId: string, eventUuid: string, endpointUuid: string) =>
    sql.withTransaction(
      Effect.gen(function* () {
        // The path's resource first: an unknown event is 404 whatever the endpoint named in the body.
        const event =
          yield* sql`select 1 from lifecycle_events where id = ${eventUuid} and account_id = ${accountId}`
        if (event.length === 0) return yield* NotFound.of("event")
        const endpoint = yield* require(accountId, endpointUuid)
        if (endpoint.disabled_at !== null) {
          return yield* new InvalidState({
            message: "The webhook endpoint is disabled; it takes no redelivery."
          })
        }
        yield* schedule(accountId, endpointUuid, eventUuid, true, yield* now)
      })
    )

  const deliveries = (
    accountId: string,
    endpointUuid: string,
    limit: number,
    startingAfter: string | undefined,
    outcome?: "succeeded" | "failed" | undefined
  ) =>
    Effect.gen(function* () {
      yield* require(accountId, endpointUuid, "with listeners")
      // `failed` is every attempt that did not succeed: retried, given up, or cancelled when the endpoint was disabled.
      const rows = yield* sql<DeliveryRow>`
        select * from webhook_deliveries where endpoint_id = ${endpointUuid} and account_id = ${accountId}
        ${
          outcome === undefined
            ? sql``
            : outcome === "succeeded"
              ? sql`and outcome = 'succeeded'`
              : sql`and outcome <> 'succeeded'`
        }
        ${startingAfter === undefined ? sql`` : sql`and id < ${startingAfter}`}
        order by id desc limit ${limit + 1}`
      const p = page(rows, limit)
      return {
        deliveries: p.items.map(deliveryWire),
        next_cursor: p.next === null ? null : toId("whd", p.next)
      }
    })

  /**
   * Every delivery attempt of one request's events, to any of the account's endpoints, newest first. `None` when
   * the request is not the account's. One read for the page: the request's events by their request, then their
   * deliveries by event.
   */
  const requestDeliveries = (
    accountId: string,
    requestUuid: string,
    limit: number,
    startingAfter: string | undefined
  ) =>
    Effect.gen(function* () {
      const owns =
        yield* sql`select 1 from deposit_requests where id = ${requestUuid} and account_id = ${accountId}`
      if (owns.length === 0) return Option.none()
      const rows = yield* sql<DeliveryRow>`
        select * from webhook_deliveries
        where account_id = ${accountId}
          and event_id in (
            select id from lifecycle_events where deposit_request_id = ${requestUuid} and account_id = ${accountId})
          ${startingAfter === undefined ? sql`` : sql`and id < ${startingAfter}`}
        order by id desc limit ${limit + 1}`
      const p = page(rows, limit)
      return Option.some({
        deliveries: p.items.map(deliveryWire),
        next_cursor: p.next === null ? null : (toId("whd", p.next) as string)
      })
    })

  const events = (
    accountId: string,
    filter: {
      type?: string | undefined
      depositRequest?: string | undefined
      limit: number
      startingAfter?: string | undefined
    }
  ) =>
    Effect.gen(function* () {
      const rows = yield* sql<{ id: string; body: string }>`
        select id, body from lifecycle_events where account_id = ${accountId}
        ${filter.type === undefined ? sql`` : sql`and type = ${filter.type}`}
        ${filter.depositRequest === undefined ? sql`` : sql`and deposit_request_id = ${filter.depositRequest}`}
        ${filter.startingAfter === undefined ? sql`` : sql`and id < ${filter.startingAfter}`}
        order by id desc limit ${filter.limit + 1}`
      const p = page(rows, filter.limit)
      return {
        events: p.items.map(
          (r) =>
            JSON.parse(r.body) as {
              id: string
              type: string
              occurred_at: string
              data: Record<string, unknown>
            }
        ),
        next_cursor: p.next === null ? null : (toId("evt", p.next) as string)
      }
    })

  return {
    create: Effect.fn("WebhookEndpoints.create")(dieOnSqlErrors(create)),
    get: Effect.fn("WebhookEndpoints.get")(
      dieOnSqlErrors((a: string, u: string) => Effect.map(require(a, u), endpointWire))
    ),
    list: Effect.fn("WebhookEndpoints.list")(dieOnSqlErrors(list)),
    disable: Effect.fn("WebhookEndpoints.disable")(dieOnSqlErrors(disable)),
    sendTest: Effect.fn("WebhookEndpoints.sendTest")(dieOnSqlErrors(sendTest)),
    redeliver: Effect.fn("WebhookEndpoints.redeliver")(dieOnSqlErrors(redeliver)),
    deliveries: Effect.fn("WebhookEndpoints.deliveries")(dieOnSqlErrors(deliveries)),
    requestDeliveries: Effect.fn("WebhookEndpoints.requestDeliveries")(dieOnSqlErrors(requestDeliveries)),
    events: Effect.fn("WebhookEndpoints.events")(dieOnSqlErrors(events))
  } as const
})

/**
 * A merchant's webhook endpoints (the service behind `/v1/webhooks` and `/v1/events`). Its dependencies (the
 * database, ids, the URL rules) come from the composition root.
 */
export class WebhookEndpoints extends Effect.Service<WebhookEndpoints>()("deposits/WebhookEndpoints", {
  effect: make,
  dependencies: [Ids.layer, WebhookUrlCheck.layer]
}) {}
