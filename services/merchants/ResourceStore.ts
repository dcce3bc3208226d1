import { SqlSchema } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Clock, Effect, Option, Schema } from "effect"
import { NotFound } from "../domain/Errors"
import type { IdPrefix, ResourceName } from "../domain/PrefixedId"
import { Ids } from "../platform/Ids"
import { orDieOnStorage } from "../platform/SqlFailure"

/** A stored merchant resource (customer, issuer, payout address): its own columns plus the bookkeeping all have. */
export type StoredResource = Record<string, unknown> & {
  readonly id: string
  readonly account_id: string
  readonly created_at: Date
  readonly updated_at: Date
}

/** The columns every resource table has, checked; the table's own columns pass through as the driver read them. */
const StoredResource: Schema.Schema<StoredResource> = Schema.Struct(
  {
    id: Schema.String,
    account_id: Schema.String,
    created_at: Schema.DateFromSelf,
    updated_at: Schema.DateFromSelf
  },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)
const Owned = Schema.Struct({ accountId: Schema.String, uuid: Schema.String })
const Values = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/**
 * The plain merchant resources (customers, issuers, payout addresses) share one store: every query takes the
 * account first, so another account's id is simply not found. `endColumn` is the soft end (`deleted_at`,
 * `disabled_at`); `hideEnded` removes ended resources from reads (deleted) or keeps them readable (disabled).
 * `service` names the spans of its methods.
 */
export const makeResourceStore = (options: {
  readonly service: string
  readonly table: string
  readonly prefix: IdPrefix
  readonly resource: ResourceName
  readonly endColumn: string
  readonly hideEnded: boolean
}) =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const ids = yield* Ids
    const table = sql(options.table)
    const end = sql(options.endColumn)
    const visible = options.hideEnded ? sql`and ${end} is null` : sql``
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
    const span = (method: string) => `${options.service}.${method}`

    const ownedRow = SqlSchema.findOne({
      Request: Owned,
      Result: StoredResource,
      execute: ({ accountId, uuid }) => sql`
        select * from ${table} where id = ${uuid} and account_id = ${accountId} ${visible}`
    })
    const insertRow = SqlSchema.single({
      Request: Values,
      Result: StoredResource,
      execute: (row) => sql`insert into ${table} ${sql.insert(row)} returning *`
    })
    const pageRows = SqlSchema.findAll({
      Request: Schema.Struct({
        accountId: Schema.String,
        limit: Schema.Number,
        startingAfter: Schema.UndefinedOr(Schema.String)
      }),
      Result: StoredResource,
      execute: ({ accountId, limit, startingAfter }) => sql`
        select * from ${table} where account_id = ${accountId} ${visible}
        ${startingAfter === undefined ? sql`` : sql`and id < ${startingAfter}`}
        order by id desc limit ${limit}`
    })
    const updateRow = SqlSchema.findOne({
      Request: Schema.Struct({ accountId: Schema.String, uuid: Schema.String, values: Values }),
      Result: StoredResource,
      execute: ({ accountId, uuid, values }) => sql`
        update ${table} set ${sql.update(values)}
        where id = ${uuid} and account_id = ${accountId} ${visible}
        returning *`
    })
    const endRow = SqlSchema.findOne({
      Request: Schema.Struct({ accountId: Schema.String, uuid: Schema.String, at: Schema.DateFromSelf }),
      Result: StoredResource,
      execute: ({ accountId, uuid, at }) => sql`
        update ${table} set ${end} = coalesce(${end}, ${at}), updated_at = ${at}
        where id = ${uuid} and account_id = ${accountId} ${visible}
        returning *`
    })

    const find = Effect.fn(span("find"))(function* (accountId: string, uuid: string) {
      return yield* ownedRow({ accountId, uuid })
    }, orDieOnStorage)

    const require = Effect.fn(span("require"))(function* (accountId: string, uuid: string) {
      const found = yield* find(accountId, uuid)
      if (Option.isNone(found)) return yield* NotFound.of(options.resource)
      return found.value
    })

    const create = Effect.fn(span("create"))(function* (accountId: string, values: Record<string, unknown>) {
      const at = yield* now
      // Metadata is always an object (`{}` when none was given).
      const row = {
        metadata: {},
        ...values,
        id: ids.next(),
        account_id: accountId,
        created_at: at,
        updated_at: at
      }
      return yield* insertRow(row)
    }, orDieOnStorage)

    const list = Effect.fn(span("list"))(function* (
      accountId: string,
      limit: number,
      startingAfter: string | undefined
    ) {
      const rows = yield* pageRows({ accountId, limit: limit + 1, startingAfter })
      return { rows: rows.slice(0, limit), more: rows.length > limit }
    }, orDieOnStorage)

    /** Applies a merged change to a resource the caller has already checked as a whole. */
    const update = Effect.fn(span("update"))(function* (
      accountId: string,
      uuid: string,
      values: Record<string, unknown>
    ) {
      const at = yield* now
      const updated = yield* updateRow({ accountId, uuid, values: { ...values, updated_at: at } })
      if (Option.isNone(updated)) return yield* NotFound.of(options.resource)
      return updated.value
    }, orDieOnStorage)

    /** Soft end: delete (hidden afterwards) or disable (still readable). Ending twice keeps the first time. */
    const endResource = Effect.fn(span("end"))(function* (accountId: string, uuid: string) {
      const ended = yield* endRow({ accountId, uuid, at: yield* now })
      if (Option.isNone(ended)) return yield* NotFound.of(options.resource)
      return ended.value
    }, orDieOnStorage)

    return { find, require, create, list, update, end: endResource } as const
  })

export type ResourceStore = Effect.Effect.Success<ReturnType<typeof makeResourceStore>>

/** PATCH semantics: omitted keys keep the stored value, `null` clears it. */
export const mergePatch = <T extends Record<string, unknown>>(stored: T, patch: Record<string, unknown>) => {
  const merged: Record<string, unknown> = { ...stored }
  for (const [key, value] of Object.entries(patch)) if (value !== undefined) merged[key] = value
  return merged as T
}
