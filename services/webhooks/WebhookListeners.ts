import { SqlSchema } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Clock, Effect, Layer, Option, Schema } from "effect"
import { InvalidState, NotFound, SandboxOnly } from "../domain/Errors"
import { toId } from "../domain/PrefixedId"
import { formatTimestamp } from "../domain/Timestamp"
import { Ids } from "../platform/Ids"
import { serviceEnv } from "../platform/Settings"
import { dieOnSqlErrors } from "../platform/SqlFailure"
import { runWorker } from "../platform/Worker"
import { cancelSeries, recordAttempt } from "./DeliveryAttempts"
import { dispatchSettings } from "./WebhookDispatcher"
import { AttemptedJobRow, IdRow, ListenerJobRow, rowsOrSqlError, WebhookEndpoint } from "./WebhookRows"
import type { DeliveryOutcome } from "./WebhookSender"
import { deliveryHeaders, newWebhookSecret } from "./WebhookSignature"

/** Deliveries one poll hands out at most; the CLI polls again at once while there are more. */
export const LISTENER_BATCH = 20
/** How often a held poll looks for due deliveries again. */
export const LISTENER_POLL_EVERY_MS = 200
/** How often expired listeners are swept (disabled, their pending deliveries cancelled). */
export const LISTENER_SWEEP_EVERY_MS = 5_000

/** A listener is a row of `webhook_endpoints` (`listener` set, no URL). */
export type ListenerRow = WebhookEndpoint

/** One delivery handed to a listening CLI: what it POSTs to the local URL, byte for byte. */
export interface PendingDelivery {
  readonly event_id: string
  readonly event_type: string
  readonly attempt: number
  readonly body: string
  readonly headers: Readonly<Record<string, string>>
}

/** What the CLI reports of one forward: the local answer, or why there was none. */
export interface LocalAnswer {
  readonly eventUuid: string
  readonly attempt: number
  readonly status: number | null
  readonly error: "connection" | "timeout" | null
  readonly excerpt: string | undefined
  readonly durationMs: number
}

const listenerWire = (row: ListenerRow, ttlMs: number) => ({
  id: toId("wh", row.id) as string,
  event_types: row.event_types,
  created_at: formatTimestamp(row.created_at),
  expires_after_idle_seconds: Math.ceil(ttlMs / 1000)
})

/**
 * Listeners: the sandbox's temporary webhook endpoints without a URL, for `deposits listen`
 * (infra/decisions/0068-local-webhook-forwarding.md). A listener is a row of `webhook_endpoints`, so the relay
 * fans events out to it and its attempts follow the same retry schedule into the same delivery log; only the
 * transport differs: its CLI pulls each due job (claimed as the dispatcher claims one), forwards it to the
 * merchant's machine, and reports the answer, which is recorded as the attempt. The service never connects to
 * the merchant's machine, and the URL rules of real endpoints are untouched. Production refuses every operation.
 */
const make = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const ids = yield* Ids
  const env = yield* serviceEnv
  const settings = yield* dispatchSettings
  const ttlMs = settings.webhookListenerTtlMs
  const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

  const sandboxOnly =
    env === "production"
      ? Effect.fail(
          new SandboxOnly({
            message:
              "Webhook listeners (deposits listen) exist in the sandbox only; in production register an HTTPS endpoint with POST /v1/webhooks."
          })
        )
      : Effect.void

  const AccountScoped = Schema.Struct({ id: Schema.String, account_id: Schema.String })

  const findLive = SqlSchema.findOne({
    Request: AccountScoped,
    Result: WebhookEndpoint,
    execute: (r) => sql`
      select * from webhook_endpoints
      where id = ${r.id} and account_id = ${r.account_id} and listener and disabled_at is null`
  })

  // No URL: nothing is ever sent from the service; the empty string keeps the column's constraint.
  const insertListener = SqlSchema.single({
    Request: Schema.Struct({
      id: Schema.String,
      account_id: Schema.String,
      secret: Schema.String,
      event_types: Schema.NullOr(Schema.Array(Schema.String)),
      at: Schema.DateFromSelf
    }),
    Result: WebhookEndpoint,
    execute: (r) => sql`
      insert into webhook_endpoints (id, account_id, url, secret, created_at, listener, event_types, last_polled_at)
      values (${r.id}, ${r.account_id}, '', ${r.secret}, ${r.at}, true, ${r.event_types}::text[], ${r.at})
      returning *`
  })

  // A listener of the account, live or not: `deposits listen` opens the same one again on every run.
  const reopenListener = SqlSchema.findOne({
    Request: Schema.Struct({
      id: Schema.String,
      account_id: Schema.String,
      event_types: Schema.NullOr(Schema.Array(Schema.String)),
      at: Schema.DateFromSelf
    }),
    Result: WebhookEndpoint,
    execute: (r) => sql`
      update webhook_endpoints
      set disabled_at = null, last_polled_at = ${r.at}, event_types = ${r.event_types}::text[]
      where id = ${r.id} and account_id = ${r.account_id} and listener
      returning *`
  })

  // No grace: the old secret stops verifying at once (a listener's receiver is the developer's own machine).
  const rotateListener = SqlSchema.findOne({
    Request: Schema.Struct({ id: Schema.String, account_id: Schema.String, secret: Schema.String }),
    Result: WebhookEndpoint,
    execute: (r) => sql`
      update webhook_endpoints
      set secret = ${r.secret}, previous_secret = null, previous_secret_expires_at = null
      where id = ${r.id} and account_id = ${r.account_id} and listener and disabled_at is null
      returning *`
  })

  const touch = SqlSchema.void({
    Request: Schema.Struct({ id: Schema.String, at: Schema.DateFromSelf }),
    execute: (r) => sql`update webhook_endpoints set last_polled_at = ${r.at} where id = ${r.id}`
  })

  const claimDue = SqlSchema.findAll({
    Request: Schema.Struct({
      endpoint_id: Schema.String,
      at: Schema.DateFromSelf,
      locked_until: Schema.DateFromSelf
    }),
    Result: ListenerJobRow,
    execute: (r) => sql`
      update webhook_jobs j set locked_until = ${r.locked_until}
      from lifecycle_events ev
      where j.id in (
          select id from webhook_jobs
          where endpoint_id = ${r.endpoint_id} and state = 'pending' and next_attempt_at <= ${r.at}
            and (locked_until is null or locked_until < ${r.at})
          order by next_attempt_at, event_id limit ${LISTENER_BATCH}
          for update skip locked)
        and ev.id = j.event_id
      returning j.event_id, j.attempts, ev.type, ev.body`
  })

  const findAwaitedJob = SqlSchema.findOne({
    Request: Schema.Struct({ endpoint_id: Schema.String, event_id: Schema.String, attempts: Schema.Int }),
    Result: AttemptedJobRow,
    execute: (r) => sql`
      select j.id, j.account_id, j.endpoint_id, j.event_id, j.redelivery, j.attempts, ev.type
      from webhook_jobs j join lifecycle_events ev on ev.id = j.event_id
      where j.endpoint_id = ${r.endpoint_id} and j.event_id = ${r.event_id} and j.state = 'pending'
        and j.attempts = ${r.attempts} and j.locked_until is not null
      for update of j`
  })

  const findExpired = SqlSchema.findAll({
    Request: Schema.DateFromSelf,
    Result: IdRow,
    execute: (polledBefore) => sql`
      select id from webhook_endpoints
      where listener and disabled_at is null and last_polled_at < ${polledBefore}
      for update skip locked`
  })

  /** The account's live listener, or 404 as for any endpoint that is not the account's. */
  const requireLive = (accountId: string, uuid: string) =>
    Effect.flatMap(
      rowsOrSqlError(findLive({ id: uuid, account_id: accountId }), "webhook_endpoints"),
      Option.match({ onNone: () => Effect.fail(NotFound.of("webhook")), onSome: Effect.succeed })
    )

  const create = (accountId: string, eventTypes: ReadonlyArray<string> | undefined) =>
    Effect.gen(function* () {
      yield* sandboxOnly
      const at = yield* now
      const secret = newWebhookSecret()
      const row = yield* rowsOrSqlError(
        insertListener({
          id: ids.next(),
          account_id: accountId,
          secret,
          event_types: eventTypes === undefined ? null : [...new Set(eventTypes)],
          at
        }),
        "webhook_endpoints"
      )
      return { ...listenerWire(row, ttlMs), secret }
    })

  /**
   * Opens an earlier listener of the account again, removed or expired (its row and secret stay): the CLI keeps one
   * listener per machine and account, so the secret the developer's receiver verifies with is the same every run.
   * Its delivery log stays; what it missed while closed is not sent (events resend does that on demand).
   */
  const reopen = (accountId: string, uuid: string, eventTypes: ReadonlyArray<string> | undefined) =>
    Effect.gen(function* () {
      yield* sandboxOnly
      const row = yield* rowsOrSqlError(
        reopenListener({
          id: uuid,
          account_id: accountId,
          event_types: eventTypes === undefined ? null : [...new Set(eventTypes)],
          at: yield* now
        }),
        "webhook_endpoints"
      )
      if (Option.isNone(row)) return yield* NotFound.of("webhook")
      return listenerWire(row.value, ttlMs)
    })

  /** A new signing secret for a live listener, shown in this answer only; the old one stops at once. */
  const rotateSecret = (accountId: string, uuid: string) =>
    Effect.gen(function* () {
      yield* sandboxOnly
      const secret = newWebhookSecret()
      const row = yield* rowsOrSqlError(
        rotateListener({ id: uuid, account_id: accountId, secret }),
        "webhook_endpoints"
      )
      if (Option.isNone(row)) return yield* NotFound.of("webhook")
      return { ...listenerWire(row.value, ttlMs), secret }
    })

  /** Claims the listener's due deliveries (each locked as a dispatcher's claim is) and signs them now. */
  const claim = (listener: ListenerRow) =>
    Effect.gen(function* () {
      const at = yield* now
      const jobs = yield* rowsOrSqlError(
        claimDue({
          endpoint_id: listener.id,
          at,
          locked_until: new Date(at.getTime() + settings.webhookClaimTtlMs)
        }),
        "webhook_jobs"
      )
      const t = Math.floor(at.getTime() / 1000)
      // Event ids are time-ordered: the CLI forwards a request's events in the order they happened.
      return [...jobs]
        .sort((a, b) => (a.event_id < b.event_id ? -1 : a.event_id > b.event_id ? 1 : 0))
        .map(
          (job): PendingDelivery => ({
            event_id: toId("evt", job.event_id),
            event_type: job.type,
            attempt: job.attempts + 1,
            body: job.body,
            headers: deliveryHeaders(job, listener.secret, t)
          })
        )
    })

  /**
   * The CLI's poll: it keeps the listener alive, then takes the due deliveries; with `holdMs`, waits up to that long
   * for one to fall due (a new event, or a retry's time) before answering an empty list. `closing`: the instance is
   * shutting down, so a held poll answers at once rather than holding the shutdown.
   */
  const poll = (accountId: string, uuid: string, holdMs: number, closing: () => boolean = () => false) =>
    Effect.gen(function* () {
      yield* sandboxOnly
      yield* requireLive(accountId, uuid)
      const at = yield* now
      yield* rowsOrSqlError(touch({ id: uuid, at }), "webhook_endpoints")
      const until = at.getTime() + holdMs
      for (;;) {
        // Read again each round: a listener removed while its poll is held answers 404.
        const listener = yield* requireLive(accountId, uuid)
        const deliveries = yield* claim(listener)
        if (
          deliveries.length > 0 ||
          closing() ||
          (yield* Clock.currentTimeMillis) + LISTENER_POLL_EVERY_MS > until
        )
          return { deliveries }
        yield* Effect.sleep(LISTENER_POLL_EVERY_MS)
      }
    })

  /**
   * Records the local answer as the attempt's outcome, under the job's row lock, so the same attempt reported
   * twice is recorded once (the second is refused as stale).
   */
  const report = (accountId: string, uuid: string, answer: LocalAnswer) =>
    sql.withTransaction(
      Effect.gen(function* () {
        yield* sandboxOnly
        yield* requireLive(accountId, uuid)
        const found = yield* rowsOrSqlError(
          findAwaitedJob({ endpoint_id: uuid, event_id: answer.eventUuid, attempts: answer.attempt - 1 }),
          "webhook_jobs"
        )
        if (Option.isNone(found)) {
          return yield* new InvalidState({
            message:
              "No delivery of this event and attempt is waiting for its answer (already reported, or expired)."
          })
        }
        const job = found.value
        const ok = answer.status !== null && answer.status >= 200 && answer.status < 300
        const outcome: DeliveryOutcome = {
          ok,
          status: answer.status ?? undefined,
          errorKind: ok ? undefined : answer.status !== null ? "non_2xx" : (answer.error ?? "connection"),
          errorMessage: ok
            ? undefined
            : answer.excerpt !== undefined && answer.excerpt !== ""
              ? answer.excerpt
              : answer.status !== null
                ? `HTTP ${answer.status}`
                : `the local URL gave no answer (${answer.error ?? "connection"})`,
          // The CLI reports at most 500 characters of the local answer; that is what the log keeps of it.
          responseBody: answer.status === null ? undefined : (answer.excerpt ?? ""),
          durationMs: answer.durationMs
        }
        const finished = yield* now
        const retryAt = yield* recordAttempt(
          job,
          outcome,
          new Date(finished.getTime() - answer.durationMs),
          settings.webhookFirstRetryMs
        )
        return {
          outcome: ok
            ? ("succeeded" as const)
            : retryAt === null
              ? ("failed" as const)
              : ("retrying" as const),
          next_attempt_at: retryAt === null ? null : formatTimestamp(retryAt)
        }
      })
    )

  /** The CLI's exit: the listener is disabled and what it still had pending is cancelled; its log stays. */
  const remove = (accountId: string, uuid: string) =>
    sql.withTransaction(
      Effect.gen(function* () {
        yield* sandboxOnly
        yield* requireLive(accountId, uuid)
        yield* cancelSeries(uuid, yield* now)
      })
    )

  /** Disables the listeners no CLI has polled for the TTL. */
  const expire = sql.withTransaction(
    Effect.gen(function* () {
      const at = yield* now
      const expired = yield* rowsOrSqlError(findExpired(new Date(at.getTime() - ttlMs)), "webhook_endpoints")
      for (const { id } of expired) yield* cancelSeries(id, at)
      return expired.length
    })
  )

  return {
    create: Effect.fn("WebhookListeners.create")(dieOnSqlErrors(create)),
    reopen: Effect.fn("WebhookListeners.reopen")(dieOnSqlErrors(reopen)),
    rotateSecret: Effect.fn("WebhookListeners.rotateSecret")(dieOnSqlErrors(rotateSecret)),
    poll: Effect.fn("WebhookListeners.poll")(dieOnSqlErrors(poll)),
    report: Effect.fn("WebhookListeners.report")(dieOnSqlErrors(report)),
    remove: Effect.fn("WebhookListeners.remove")(dieOnSqlErrors(remove)),
    expire: Effect.withSpan(dieOnSqlErrors(() => expire)(), "WebhookListeners.expire")
  } as const
})

export class WebhookListeners extends Effect.Service<WebhookListeners>()("deposits/WebhookListeners", {
  effect: make,
  dependencies: [Ids.Default]
}) {}

/** Expires idle listeners on every instance (the sweep is idempotent and reads only live listeners). */
export const WebhookListenerSweepLive = Layer.unwrapEffect(
  Effect.map(WebhookListeners, (listeners) =>
    runWorker({
      name: "WebhookListeners.expire",
      step: listeners.expire,
      every: `${LISTENER_SWEEP_EVERY_MS} millis`
    })
  )
)
