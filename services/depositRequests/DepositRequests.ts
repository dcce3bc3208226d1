import { PgClient } from "@effect/sql-pg"
import { Clock, Effect, Option, Runtime } from "effect"
import { ActorHost } from "../actors/ActorHost"
import type { DepositRequestRow } from "../actors/ActorRow"
import { chainIdOf } from "../domain/Environment"
import { InvalidState, NotFound } from "../domain/Errors"
import { ChangeFeed } from "../platform/ChangeFeed"
import { Ids } from "../platform/Ids"
import { publicBaseUrl, serviceEnv } from "../platform/Settings"
import { orDieOnSql } from "../platform/SqlFailure"
import { type CreateInput, uuidOfId } from "./CreateFields"
import { makeCreateRequest } from "./CreateRequest"
import { type DepositRequestWire, viewOf } from "./DepositRequestWire"

export {
  type CreateInput,
  DEFAULT_TTL_MS,
  IDEMPOTENCY_WINDOW_MS,
  MAX_AMOUNT_BASE_UNITS,
  MAX_TTL_MS,
  MIN_TTL_MS
} from "./CreateFields"

export interface UpdateInput {
  readonly heading?: string | null | undefined
  readonly reference?: string | null | undefined
  readonly metadata?: Readonly<Record<string, string>> | null | undefined
  readonly customer_id?: string | null | undefined
}

const make = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const host = yield* ActorHost
  const ids = yield* Ids
  const feed = yield* ChangeFeed
  const env = yield* serviceEnv
  const chainId = chainIdOf(env)
  const baseUrl = yield* publicBaseUrl
  /** The merchant's view of a stored request. */
  const view = (row: DepositRequestRow) => viewOf(row, chainId, baseUrl)

  const requireCustomer = (accountId: string, customerId: string) =>
    Effect.gen(function* () {
      const rows = yield* sql`
        select 1 from customers where id = ${uuidOfId(customerId)} and account_id = ${accountId} and deleted_at is null`
      if (rows.length === 0) return yield* NotFound.of("customer")
    })

  const load = (accountId: string, uuid: string) =>
    sql<DepositRequestRow>`select * from deposit_requests where id = ${uuid} and account_id = ${accountId}`.pipe(
      Effect.map((rows) => Option.fromNullable(rows[0]))
    )

  const createRequest = makeCreateRequest({
    sql,
    host,
    ids,
    viewOf: view,
    load,
    allowLocalShop: env === "sandbox"
  })

  const get = (accountId: string, uuid: string) => Effect.map(load(accountId, uuid), Option.map(view))

  // Long polls woken by one change share one read of the row instead of each reading it.
  const inFlight = new Map<string, Promise<Option.Option<DepositRequestRow>>>()
  const sharedLoad = (accountId: string, uuid: string) =>
    Effect.flatMap(Effect.runtime<never>(), (runtime) =>
      Effect.promise(() => {
        const key = `${accountId}:${uuid}`
        const existing = inFlight.get(key)
        if (existing !== undefined) return existing
        const read = Runtime.runPromise(runtime)(Effect.orDie(load(accountId, uuid))).finally(() =>
          inFlight.delete(key)
        )
        inFlight.set(key, read)
        return read
      })
    )

  /** The resource after a change notice: one read shared by every long poll the notice woke. */
  const getShared = (accountId: string, uuid: string) =>
    Effect.map(sharedLoad(accountId, uuid), Option.map(view))

  const list = (
    accountId: string,
    options: {
      readonly status?: string | undefined
      readonly limit: number
      readonly startingAfter?: string | undefined
    }
  ) =>
    Effect.gen(function* () {
      const after = options.startingAfter === undefined ? null : uuidOfId(options.startingAfter)
      const rows = yield* sql<DepositRequestRow>`
        select * from deposit_requests
        where account_id = ${accountId}
          ${options.status === undefined ? sql`` : sql`and status = ${options.status}`}
          ${after === null ? sql`` : sql`and id < ${after}`}
        order by id desc
        limit ${options.limit + 1}`
      const page = rows.slice(0, options.limit).map(view)
      return {
        deposit_requests: page,
        next_cursor: rows.length > options.limit ? (page.at(-1)?.id ?? null) : null
      }
    })

  /** PATCH: omitted fields stay, `null` clears, and the merged record is checked as a whole. */
  /**
   * An operator's resume of a request that needs attention: the lifecycle decides where the pause ends and
   * re-issues what was outstanding (the treasury signs a reverted transfer again).
   */
  const resume = (accountId: string, uuid: string) =>
    Effect.gen(function* () {
      const row = yield* load(accountId, uuid)
      if (Option.isNone(row)) return yield* NotFound.of("deposit_request")
      if (row.value.status !== "needs_attention") {
        return yield* new InvalidState({
          message: `Only a request that needs attention can be resumed; this one is ${row.value.status}.`
        })
      }
      const at = new Date(yield* Clock.currentTimeMillis)
      yield* host
        .apply(uuid, `resume:${ids.next()}`, { type: "operator.resumed", at: at.toISOString() })
        .pipe(Effect.orDie)
      return view(Option.getOrThrow(yield* load(accountId, uuid)))
    })

  const update = (accountId: string, uuid: string, patch: UpdateInput) =>
    sql
      .withTransaction(
        Effect.gen(function* () {
          const now = new Date(yield* Clock.currentTimeMillis)
          const rows = yield* sql<DepositRequestRow>`
          select * from deposit_requests where id = ${uuid} and account_id = ${accountId} for update`
          const current = rows[0]
          if (current === undefined) return yield* NotFound.of("deposit_request")
          const merged = {
            heading: patch.heading === undefined ? current.heading : (patch.heading ?? ""),
            reference: patch.reference === undefined ? current.reference : (patch.reference ?? ""),
            metadata: patch.metadata === undefined ? current.metadata : { ...(patch.metadata ?? {}) },
            customer_id:
              patch.customer_id === undefined
                ? current.customer_id
                : patch.customer_id === null
                  ? null
                  : uuidOfId(patch.customer_id)
          }
          if (patch.customer_id !== undefined && patch.customer_id !== null) {
            yield* requireCustomer(accountId, patch.customer_id)
          }
          const version = (BigInt(current.version) + 1n).toString()
          yield* sql`
          update deposit_requests set heading = ${merged.heading}, reference = ${merged.reference},
            metadata = ${sql.json(merged.metadata)}, customer_id = ${merged.customer_id},
            version = ${version}, updated_at = ${now}
          where id = ${uuid}`
          return view({ ...current, ...merged, version, updated_at: now })
        })
      )
      .pipe(Effect.tap((wire) => feed.changed(uuid, wire.version)))

  // SQL failures are defects here: the edge answers them with a logged 500.
  return {
    /** Untraced: the hot path of the API, under the HTTP server's span; its step and commit have spans of their own. */
    create: Effect.fnUntraced(function* (accountId: string, idempotencyKey: string, input: CreateInput) {
      return yield* createRequest(accountId, idempotencyKey, input)
    }, orDieOnSql),
    get: Effect.fn("DepositRequests.get")(function* (accountId: string, uuid: string) {
      return yield* get(accountId, uuid)
    }, orDieOnSql),
    getShared: Effect.fn("DepositRequests.getShared")(function* (accountId: string, uuid: string) {
      return yield* getShared(accountId, uuid)
    }, orDieOnSql),
    list: Effect.fn("DepositRequests.list")(function* (accountId: string, options: ListOptions) {
      return yield* list(accountId, options)
    }, orDieOnSql),
    update: Effect.fn("DepositRequests.update")(function* (
      accountId: string,
      uuid: string,
      patch: UpdateInput
    ) {
      return yield* update(accountId, uuid, patch)
    }, orDieOnSql),
    resume: Effect.fn("DepositRequests.resume")(function* (accountId: string, uuid: string) {
      return yield* resume(accountId, uuid)
    }, orDieOnSql)
  } as const
})

interface ListOptions {
  readonly status?: string | undefined
  readonly limit: number
  readonly startingAfter?: string | undefined
}

/** Merchants' deposit requests: create, read, list, update, resume (README: the deposit request API). */
export class DepositRequests extends Effect.Service<DepositRequests>()("deposits/DepositRequests", {
  effect: make,
  dependencies: [ActorHost.Default, ChangeFeed.layer, Ids.layer]
}) {}

export type { DepositRequestWire }
