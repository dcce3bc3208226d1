import { PgClient } from "@effect/sql-pg"
import { Clock, Effect, Option } from "effect"
import { NotFound } from "../domain/Errors"
import type { IdPrefix, ResourceName } from "../domain/PrefixedId"
import { Ids } from "../platform/Ids"
import { orDieOnSql } from "../platform/SqlFailure"

/** A stored merchant record: its own columns plus the bookkeeping every record has. */
export type StoredRecord = Record<string, unknown> & {
  readonly id: string
  readonly account_id: string
  readonly created_at: Date
  readonly updated_at: Date
}

/**
 * The plain merchant records (customers, issuers, payout addresses) share one store: every query takes the account
 * first, so another account's id is simply not found. `endColumn` is the soft end (`deleted_at`, `disabled_at`);
 * `hideEnded` removes ended records from reads (deleted) or keeps them readable (disabled).
 */
export const makeRecordStore = (options: {
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

    const find = (accountId: string, uuid: string) =>
      sql<StoredRecord>`select * from ${table} where id = ${uuid} and account_id = ${accountId} ${visible}`.pipe(
        Effect.map((rows) => Option.fromNullable(rows[0]))
      )

    const require = (accountId: string, uuid: string) =>
      Effect.flatMap(
        find(accountId, uuid),
        Option.match({ onNone: () => Effect.fail(NotFound.of(options.resource)), onSome: Effect.succeed })
      )

    const create = (accountId: string, values: Record<string, unknown>) =>
      Effect.gen(function* () {
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
        const rows = yield* sql<StoredRecord>`insert into ${table} ${sql.insert(row)} returning *`
        return rows[0]!
      })

    const list = (accountId: string, limit: number, startingAfter: string | undefined) =>
      Effect.gen(function* () {
        const rows = yield* sql<StoredRecord>`
          select * from ${table} where account_id = ${accountId} ${visible}
          ${startingAfter === undefined ? sql`` : sql`and id < ${startingAfter}`}
          order by id desc limit ${limit + 1}`
        return { rows: rows.slice(0, limit), more: rows.length > limit }
      })

    /** Applies a merged change to a record the caller has already checked as a whole. */
    const update = (accountId: string, uuid: string, values: Record<string, unknown>) =>
      Effect.gen(function* () {
        const at = yield* now
        const rows = yield* sql<StoredRecord>`
          update ${table} set ${sql.update({ ...values, updated_at: at })}
          where id = ${uuid} and account_id = ${accountId} ${visible}
          returning *`
        if (rows[0] === undefined) return yield* NotFound.of(options.resource)
        return rows[0]
      })

    /** Soft end: delete (hidden afterwards) or disable (still readable). Ending twice keeps the first time. */
    const endRecord = (accountId: string, uuid: string) =>
      Effect.gen(function* () {
        const at = yield* now
        const rows = yield* sql<StoredRecord>`
          update ${table} set ${end} = coalesce(${end}, ${at}), updated_at = ${at}
          where id = ${uuid} and account_id = ${accountId} ${visible}
          returning *`
        if (rows[0] === undefined) return yield* NotFound.of(options.resource)
        return rows[0]
      })

    return {
      find: (a: string, u: string) => orDieOnSql(find(a, u)),
      require: (a: string, u: string) => orDieOnSql(require(a, u)),
      create: (a: string, v: Record<string, unknown>) => orDieOnSql(create(a, v)),
      list: (a: string, l: number, s: string | undefined) => orDieOnSql(list(a, l, s)),
      update: (a: string, u: string, v: Record<string, unknown>) => orDieOnSql(update(a, u, v)),
      end: (a: string, u: string) => orDieOnSql(endRecord(a, u))
    } as const
  })

export type RecordStore = Effect.Effect.Success<ReturnType<typeof makeRecordStore>>

/** PATCH semantics: omitted keys keep the stored value, `null` clears it. */
export const mergePatch = <T extends Record<string, unknown>>(stored: T, patch: Record<string, unknown>) => {
  const merged: Record<string, unknown> = { ...stored }
  for (const [key, value] of Object.entries(patch)) if (value !== undefined) merged[key] = value
  return merged as T
}
