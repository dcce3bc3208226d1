import { SqlSchema } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Clock, Effect, Option, Schema } from "effect"
import { InvalidRequest, InvalidState, NotFound } from "../domain/Errors"
import { formatTimestamp } from "../domain/Timestamp"
import { toId } from "../domain/PrefixedId"
import { Ids } from "../platform/Ids"
import { dieOnSqlErrors } from "../platform/SqlFailure"
import { cancelSeries } from "./DeliveryAttempts"
import { EventRow, IdRow, rowsOrSqlError, WebhookDelivery, WebhookEndpoint } from "./WebhookRows"
import { newWebhookSecret } from "./WebhookSignature"
import { WebhookUrlCheck } from "./WebhookUrlRules"

export type EndpointRow = WebhookEndpoint
export type DeliveryRow = WebhookDelivery

export const endpointWire = (row: EndpointRow) => ({
  id: toId("wh", row.id) as string,
  url: row.url,
  enabled_events: row.event_types === null ? ["*"] : [...row.event_types],
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
  outcome: row.outcome,
  response_status: row.response_status,
  error_kind: row.error_kind,
  error_message: row.error_message,
  attempted_at: formatTimestamp(row.attempted_at),
  duration_ms: row.duration_ms,
  next_attempt_at: row.next_attempt_at === null ? null : formatTimestamp(row.next_attempt_at)
})

/**
 * One attempt as it went over the wire: the event's fixed bytes it sent (exactly what was signed), the headers,
 * and the start of the answer (infra/decisions/0086-webhook-event-filters-and-bodies.md).
 */
export const deliveryDetailWire = (row: DeliveryRow, body: string) => ({
  ...deliveryWire(row),
  request: { headers: row.request_headers, body },
  response:
    row.response_status === null
      ? null
      : {
          status: row.response_status,
          body: row.response_body,
          body_truncated: row.response_body_truncated
        }
})

/**
 * An endpoint's event filter as stored: `["*"]` (or nothing given) is every type, stored as null, as a listener's
 * is; otherwise the types, once each. `*` beside a type is refused: it would read as a filter and filter nothing.
 */
export const storedEventTypes = (enabled: ReadonlyArray<string> | undefined | null) =>
  enabled === undefined || enabled === null
    ? Effect.succeed(null)
    : enabled.includes("*")
      ? enabled.length === 1
        ? Effect.succeed(null)
        : Effect.fail(
            new InvalidRequest({
              message: "'enabled_events': '*' (every type) stands alone, without other types.",
              param: "enabled_events"
            })
          )
      : enabled.length === 0
        ? Effect.fail(
            new InvalidRequest({
              message: "'enabled_events' needs at least one event type, or [\"*\"] for every type.",
              param: "enabled_events"
            })
          )
        : Effect.succeed([...new Set(enabled)])

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

  const Cursor = Schema.UndefinedOr(Schema.String)
  const Listeners = Schema.Literal("with listeners", "without")

  const insertEndpoint = SqlSchema.single({
    Request: Schema.Struct({
      id: Schema.String,
      account_id: Schema.String,
      url: Schema.String,
      secret: Schema.String,
      event_types: Schema.NullOr(Schema.Array(Schema.String)),
      created_at: Schema.DateFromSelf
    }),
    Result: WebhookEndpoint,
    execute: (r) => sql`
      insert into webhook_endpoints (id, account_id, url, secret, event_types, created_at)
      values (${r.id}, ${r.account_id}, ${r.url}, ${r.secret}, ${r.event_types}::text[], ${r.created_at})
      returning *`
  })

  // The relay reads the filter when it fans an event out: a change holds for every event relayed after it.
  const setEventTypes = SqlSchema.findOne({
    Request: Schema.Struct({
      id: Schema.String,
      account_id: Schema.String,
      event_types: Schema.NullOr(Schema.Array(Schema.String))
    }),
    Result: WebhookEndpoint,
    execute: (r) => sql`
      update webhook_endpoints set event_types = ${r.event_types}::text[]
      where id = ${r.id} and account_id = ${r.account_id} and not listener and disabled_at is null
      returning *`
  })

  // One attempt with its event's bytes (the body every attempt of the event sent).
  const findDelivery = SqlSchema.findOne({
    Request: Schema.Struct({ id: Schema.String, endpoint_id: Schema.String, account_id: Schema.String }),
    Result: Schema.Struct({ ...WebhookDelivery.fields, body: Schema.String }),
    execute: (r) => sql`
      select d.*, ev.body from webhook_deliveries d join lifecycle_events ev on ev.id = d.event_id
      where d.id = ${r.id} and d.endpoint_id = ${r.endpoint_id} and d.account_id = ${r.account_id}`
  })

  // Listeners (`WebhookListeners.ts`) share the table but none of the endpoint routes, which answer 404 for them:
  // they have no URL, take no test event, and are removed through their own route. Only redelivery
  // (`deposits events resend --to` a listener) reaches them; their attempts show under the request's deliveries.
  const findEndpoint = SqlSchema.findOne({
    Request: Schema.Struct({ id: Schema.String, account_id: Schema.String, listeners: Listeners }),
    Result: WebhookEndpoint,
    execute: (r) => sql`
      select * from webhook_endpoints where id = ${r.id} and account_id = ${r.account_id}
      ${r.listeners === "without" ? sql`and not listener` : sql``}`
  })

  const listEndpoints = SqlSchema.findAll({
    Request: Schema.Struct({ account_id: Schema.String, limit: Schema.Int, starting_after: Cursor }),
    Result: WebhookEndpoint,
    execute: (r) => sql`
      select * from webhook_endpoints where account_id = ${r.account_id} and not listener
      ${r.starting_after === undefined ? sql`` : sql`and id < ${r.starting_after}`}
      order by id desc limit ${r.limit + 1}`
  })

  // One statement: the row lock orders concurrent rotations, and each moves the secret it saw out, so the row never
  // holds more than two. A grace of 0 ends the replaced secret at once. No row: disabled since it was read.
  const rotate = SqlSchema.findOne({
    Request: Schema.Struct({
      id: Schema.String,
      account_id: Schema.String,
      secret: Schema.String,
      expires_at: Schema.NullOr(Schema.DateFromSelf)
    }),
    Result: WebhookEndpoint,
    execute: (r) => sql`
      update webhook_endpoints
      set previous_secret = case when ${r.expires_at}::timestamptz is null then null else secret end,
        previous_secret_expires_at = ${r.expires_at}::timestamptz, secret = ${r.secret}
      where id = ${r.id} and account_id = ${r.account_id} and not listener and disabled_at is null
      returning *`
  })

  const insertJob = SqlSchema.void({
    Request: Schema.Struct({
      id: Schema.String,
      account_id: Schema.String,
      endpoint_id: Schema.String,
      event_id: Schema.String,
      redelivery: Schema.Boolean,
      at: Schema.DateFromSelf
    }),
    // A listener's job is marked published at once, as the relay marks it: its CLI pulls it, the stream never
    // carries it to a dispatcher (which has no URL to send it to).
    execute: (r) => sql`
      insert into webhook_jobs (id, account_id, endpoint_id, event_id, redelivery, state, next_attempt_at, created_at,
                                published_at)
      select ${r.id}, ${r.account_id}, ${r.endpoint_id}, ${r.event_id}, ${r.redelivery}, 'pending', ${r.at}, ${r.at},
        case when e.listener then ${r.at}::timestamptz end
      from webhook_endpoints e where e.id = ${r.endpoint_id}
      on conflict do nothing`
  })

  const insertTestEvent = SqlSchema.void({
    Request: Schema.Struct({
      id: Schema.String,
      account_id: Schema.String,
      body: Schema.String,
      occurred_at: Schema.DateFromSelf
    }),
    execute: (r) => sql`
      insert into lifecycle_events (id, account_id, deposit_request_id, type, dedupe, body, occurred_at)
      values (${r.id}, ${r.account_id}, null, 'webhook.test', ${r.id}, ${r.body}, ${r.occurred_at})`
  })

  const AccountScoped = Schema.Struct({ id: Schema.String, account_id: Schema.String })
  const findEvent = SqlSchema.findOne({
    Request: AccountScoped,
    Result: IdRow,
    execute: (r) => sql`select id from lifecycle_events where id = ${r.id} and account_id = ${r.account_id}`
  })
  const findRequest = SqlSchema.findOne({
    Request: AccountScoped,
    Result: IdRow,
    execute: (r) => sql`select id from deposit_requests where id = ${r.id} and account_id = ${r.account_id}`
  })

  // `failed` is every attempt that did not succeed: retried, given up, or cancelled when the endpoint was disabled.
  const endpointDeliveries = SqlSchema.findAll({
    Request: Schema.Struct({
      account_id: Schema.String,
      endpoint_id: Schema.String,
      limit: Schema.Int,
      starting_after: Cursor,
      outcome: Schema.UndefinedOr(Schema.Literal("succeeded", "failed"))
    }),
    Result: WebhookDelivery,
    execute: (r) => sql`
      select * from webhook_deliveries where endpoint_id = ${r.endpoint_id} and account_id = ${r.account_id}
      ${
        r.outcome === undefined
          ? sql``
          : r.outcome === "succeeded"
            ? sql`and outcome = 'succeeded'`
            : sql`and outcome <> 'succeeded'`
      }
      ${r.starting_after === undefined ? sql`` : sql`and id < ${r.starting_after}`}
      order by id desc limit ${r.limit + 1}`
  })

  // One read for the page: the request's events by their request, then their deliveries by event.
  const deliveriesOfRequest = SqlSchema.findAll({
    Request: Schema.Struct({
      account_id: Schema.String,
      deposit_request_id: Schema.String,
      limit: Schema.Int,
      starting_after: Cursor
    }),
    Result: WebhookDelivery,
    execute: (r) => sql`
      select * from webhook_deliveries
      where account_id = ${r.account_id}
        and event_id in (
          select id from lifecycle_events
          where deposit_request_id = ${r.deposit_request_id} and account_id = ${r.account_id})
        ${r.starting_after === undefined ? sql`` : sql`and id < ${r.starting_after}`}
      order by id desc limit ${r.limit + 1}`
  })

  const findEventBody = SqlSchema.findOne({
    Request: AccountScoped,
    Result: EventRow,
    execute: (r) =>
      sql`select id, body from lifecycle_events where id = ${r.id} and account_id = ${r.account_id}`
  })

  // Newest first by when each event happened: an event's id is derived from its request and dedupe key (stable
  // across a restore, decision 0099), so it orders by the request's age, not the event's.
  const listEvents = SqlSchema.findAll({
    Request: Schema.Struct({
      account_id: Schema.String,
      type: Schema.UndefinedOr(Schema.String),
      deposit_request_id: Schema.UndefinedOr(Schema.String),
      limit: Schema.Int,
      starting_after: Cursor
    }),
    Result: EventRow,
    execute: (r) => sql`
      select id, body from lifecycle_events where account_id = ${r.account_id}
      ${r.type === undefined ? sql`` : sql`and type = ${r.type}`}
      ${r.deposit_request_id === undefined ? sql`` : sql`and deposit_request_id = ${r.deposit_request_id}`}
      ${
        r.starting_after === undefined
          ? sql``
          : sql`and (occurred_at, id) < (
              select occurred_at, id from lifecycle_events where id = ${r.starting_after} and account_id = ${r.account_id})`
      }
      order by occurred_at desc, id desc limit ${r.limit + 1}`
  })

  const create = (accountId: string, url: string, enabledEvents?: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      const eventTypes = yield* storedEventTypes(enabledEvents)
      // The URL parser drops blanks at the ends and tabs and line breaks inside; a new endpoint's URL is taken as
      // written or not at all (stored ones are delivered to as they are).
      if (/\s/u.test(url))
        return yield* new InvalidRequest({
          message: "'url' is not allowed: it must not contain blanks (spaces, tabs, line breaks)",
          param: "url"
        })
      yield* urlCheck
        .check(url)
        .pipe(
          Effect.mapError(
            (reason) => new InvalidRequest({ message: `'url' is not allowed: ${reason}`, param: "url" })
          )
        )
      const at = yield* now
      const secret = newWebhookSecret()
      const row = yield* rowsOrSqlError(
        insertEndpoint({
          id: ids.next(),
          account_id: accountId,
          url,
          secret,
          event_types: eventTypes,
          created_at: at
        }),
        "webhook_endpoints"
      )
      return { ...endpointWire(row), secret }
    })

  const get = (accountId: string, uuid: string, listeners: "with listeners" | "without" = "without") =>
    rowsOrSqlError(findEndpoint({ id: uuid, account_id: accountId, listeners }), "webhook_endpoints")

  const require = (accountId: string, uuid: string, listeners: "with listeners" | "without" = "without") =>
    Effect.flatMap(
      get(accountId, uuid, listeners),
      Option.match({ onNone: () => NotFound.of("webhook"), onSome: Effect.succeed })
    )

  const list = (accountId: string, limit: number, startingAfter: string | undefined) =>
    Effect.gen(function* () {
      const rows = yield* rowsOrSqlError(
        listEndpoints({ account_id: accountId, limit, starting_after: startingAfter }),
        "webhook_endpoints"
      )
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

  /**
   * PATCH: the fields given change, the others stay (`enabled_events: null` clears the filter to every type). Events
   * relayed after the change follow it; deliveries already scheduled go on.
   */
  const DISABLED_UPDATE = "The webhook endpoint is disabled; it cannot be changed."
  const update = (
    accountId: string,
    uuid: string,
    patch: { readonly enabled_events?: ReadonlyArray<string> | null | undefined }
  ) =>
    sql.withTransaction(
      Effect.gen(function* () {
        const endpoint = yield* require(accountId, uuid)
        if (endpoint.disabled_at !== null) return yield* new InvalidState({ message: DISABLED_UPDATE })
        if (patch.enabled_events === undefined) return endpointWire(endpoint)
        const eventTypes = yield* storedEventTypes(patch.enabled_events)
        const updated = yield* rowsOrSqlError(
          setEventTypes({ id: uuid, account_id: accountId, event_types: eventTypes }),
          "webhook_endpoints"
        )
        if (Option.isNone(updated)) return yield* new InvalidState({ message: DISABLED_UPDATE })
        return endpointWire(updated.value)
      })
    )

  /** One attempt of the endpoint's log with what it sent and the start of what came back. */
  const delivery = (accountId: string, endpointUuid: string, deliveryUuid: string) =>
    Effect.gen(function* () {
      yield* require(accountId, endpointUuid)
      const found = yield* rowsOrSqlError(
        findDelivery({ id: deliveryUuid, endpoint_id: endpointUuid, account_id: accountId }),
        "webhook_deliveries"
      )
      if (Option.isNone(found)) return yield* NotFound.of("webhook_delivery")
      const { body, ...row } = found.value
      return deliveryDetailWire(row as DeliveryRow, body)
    })

  /**
   * A new secret for the endpoint, shown once; the one it replaces keeps signing beside it for `graceHours`, and
   * any older one still in its grace ends now.
   */
  const DISABLED_ROTATION = "The webhook endpoint is disabled; its secret cannot be rotated."
  const rotateSecret = (accountId: string, uuid: string, graceHours: number) =>
    sql.withTransaction(
      Effect.gen(function* () {
        const endpoint = yield* require(accountId, uuid)
        if (endpoint.disabled_at !== null) return yield* new InvalidState({ message: DISABLED_ROTATION })
        const at = yield* now
        const secret = newWebhookSecret()
        const expiresAt = graceHours === 0 ? null : new Date(at.getTime() + graceHours * 3_600_000)
        const rotated = yield* rowsOrSqlError(
          rotate({ id: uuid, account_id: accountId, secret, expires_at: expiresAt }),
          "webhook_endpoints"
        )
        if (Option.isNone(rotated)) return yield* new InvalidState({ message: DISABLED_ROTATION })
        const row = rotated.value
        return {
          ...endpointWire(row),
          secret,
          previous_secret_expires_at:
            row.previous_secret_expires_at === null ? null : formatTimestamp(row.previous_secret_expires_at)
        }
      })
    )

  const schedule = (accountId: string, endpointId: string, eventId: string, redelivery: boolean, at: Date) =>
    rowsOrSqlError(
      insertJob({
        id: ids.next(),
        account_id: accountId,
        endpoint_id: endpointId,
        event_id: eventId,
        redelivery,
        at
      }),
      "webhook_jobs"
    )

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
        yield* rowsOrSqlError(
          insertTestEvent({ id: eventId, account_id: accountId, body, occurred_at: at }),
          "lifecycle_events"
        )
        yield* schedule(accountId, uuid, eventId, false, at)
        return { event_id: toId("evt", eventId) }
      })
    )

  /**
   * A new attempt series of an existing event (same id, same bytes) to one endpoint, or a live listener, marked as
   * a redelivery.
   */
  const redeliver = (accountId: string, eventUuid: string, endpointUuid: string) =>
    sql.withTransaction(
      Effect.gen(function* () {
        // The path's resource first: an unknown event is 404 whatever the endpoint named in the body.
        const event = yield* rowsOrSqlError(
          findEvent({ id: eventUuid, account_id: accountId }),
          "lifecycle_events"
        )
        if (Option.isNone(event)) return yield* NotFound.of("event")
        const endpoint = yield* require(accountId, endpointUuid, "with listeners")
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
      yield* require(accountId, endpointUuid)
      const rows = yield* rowsOrSqlError(
        endpointDeliveries({
          account_id: accountId,
          endpoint_id: endpointUuid,
          limit,
          starting_after: startingAfter,
          outcome
        }),
        "webhook_deliveries"
      )
      const p = page(rows, limit)
      return {
        deliveries: p.items.map(deliveryWire),
        next_cursor: p.next === null ? null : toId("whd", p.next)
      }
    })

  /**
   * Every delivery attempt of one request's events, to any of the account's endpoints, newest first. `None` when
   * the request is not the account's.
   */
  const requestDeliveries = (
    accountId: string,
    requestUuid: string,
    limit: number,
    startingAfter: string | undefined
  ) =>
    Effect.gen(function* () {
      const owns = yield* rowsOrSqlError(
        findRequest({ id: requestUuid, account_id: accountId }),
        "deposit_requests"
      )
      if (Option.isNone(owns)) return Option.none()
      const rows = yield* rowsOrSqlError(
        deliveriesOfRequest({
          account_id: accountId,
          deposit_request_id: requestUuid,
          limit,
          starting_after: startingAfter
        }),
        "webhook_deliveries"
      )
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
      const rows = yield* rowsOrSqlError(
        listEvents({
          account_id: accountId,
          type: filter.type,
          deposit_request_id: filter.depositRequest,
          limit: filter.limit,
          starting_after: filter.startingAfter
        }),
        "lifecycle_events"
      )
      const p = page(rows, filter.limit)
      return {
        events: p.items.map((r) => r.body),
        next_cursor: p.next === null ? null : (toId("evt", p.next) as string)
      }
    })

  /** One event as every delivery of it sends it. */
  const event = (accountId: string, uuid: string) =>
    Effect.flatMap(
      rowsOrSqlError(findEventBody({ id: uuid, account_id: accountId }), "lifecycle_events"),
      Option.match({ onNone: () => NotFound.of("event"), onSome: (row) => Effect.succeed(row.body) })
    )

  return {
    event: Effect.fn("WebhookEndpoints.event")(dieOnSqlErrors(event)),
    create: Effect.fn("WebhookEndpoints.create")(dieOnSqlErrors(create)),
    get: Effect.fn("WebhookEndpoints.get")(
      dieOnSqlErrors((a: string, u: string) => Effect.map(require(a, u), endpointWire))
    ),
    list: Effect.fn("WebhookEndpoints.list")(dieOnSqlErrors(list)),
    disable: Effect.fn("WebhookEndpoints.disable")(dieOnSqlErrors(disable)),
    update: Effect.fn("WebhookEndpoints.update")(dieOnSqlErrors(update)),
    delivery: Effect.fn("WebhookEndpoints.delivery")(dieOnSqlErrors(delivery)),
    rotateSecret: Effect.fn("WebhookEndpoints.rotateSecret")(dieOnSqlErrors(rotateSecret)),
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
  dependencies: [Ids.Default, WebhookUrlCheck.Default]
}) {}
