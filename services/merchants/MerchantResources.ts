import { SqlSchema } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Clock, Config, Effect, Layer, Option, Schema } from "effect"
import { InvalidState } from "../domain/Errors"
import { formatTimestamp } from "../domain/Timestamp"
import { Ids } from "../platform/Ids"
import { serviceEnv } from "../platform/Settings"
import { makeResourceStore, type StoredResource } from "./ResourceStore"
import { orDieOnStorage } from "../platform/SqlFailure"

/** Customers (`cus_`): deleted ones disappear from reads. */
export class Customers extends Effect.Service<Customers>()("deposits/Customers", {
  effect: makeResourceStore({
    service: "Customers",
    table: "customers",
    prefix: "cus",
    resource: "customer",
    endColumn: "deleted_at",
    hideEnded: true
  }),
  dependencies: [Ids.Default]
}) {}

/** Issuer identities (`iss_`): the name a payer sees. Deleted ones disappear from reads. */
export class Issuers extends Effect.Service<Issuers>()("deposits/Issuers", {
  effect: makeResourceStore({
    service: "Issuers",
    table: "issuers",
    prefix: "iss",
    resource: "issuer",
    endColumn: "deleted_at",
    hideEnded: true
  }),
  dependencies: [Ids.Default]
}) {}

/**
 * `PAYOUT_ADDRESS_HOLD_SECONDS`: how long a new payout address waits before a request may name it (0 or more).
 * Unset: a day in production, none in the sandbox (infra/decisions/0077-payout-address-hold.md).
 */
export const payoutAddressHoldSetting = Config.option(Config.integer("PAYOUT_ADDRESS_HOLD_SECONDS")).pipe(
  Config.validate({
    message: "PAYOUT_ADDRESS_HOLD_SECONDS: must be 0 or more",
    validation: (value) => Option.match(value, { onNone: () => true, onSome: (n) => n >= 0 })
  })
)
export const PRODUCTION_PAYOUT_ADDRESS_HOLD_SECONDS = 86_400
export const payoutAddressHoldSeconds = Config.all({ hold: payoutAddressHoldSetting, serviceEnv }).pipe(
  Config.map(({ hold, serviceEnv }) =>
    Option.getOrElse(hold, () => (serviceEnv === "production" ? PRODUCTION_PAYOUT_ADDRESS_HOLD_SECONDS : 0))
  )
)

/** `payout_addresses.disabled_reason` of an address whose hold a member cancelled. */
export const HOLD_CANCELLED = "hold_cancelled"

/** When a payout address added at `at` is released: whole seconds up, so the time answers show is never early. */
export const releaseTime = (at: Date, holdSeconds: number): Date | null =>
  holdSeconds === 0 ? null : new Date(Math.ceil(at.getTime() / 1000 + holdSeconds) * 1000)

/** Whether a payout address's hold still runs at `now`. */
export const isHeld = (heldUntil: unknown, now: Date): heldUntil is Date =>
  heldUntil instanceof Date && heldUntil.getTime() > now.getTime()

/**
 * Payout addresses (`pa_`): disabled ones stay readable but take no new deposit request; a new one takes none
 * until `held_until` (`PAYOUT_ADDRESS_HOLD_SECONDS` after it was added), and any member may cancel it until then.
 */
export class PayoutAddresses extends Effect.Service<PayoutAddresses>()("deposits/PayoutAddresses", {
  effect: Effect.gen(function* () {
    const store = yield* makeResourceStore({
      service: "PayoutAddresses",
      table: "payout_addresses",
      prefix: "pa",
      resource: "payout_address",
      endColumn: "disabled_at",
      hideEnded: false
    })
    const sql = yield* PgClient.PgClient
    const holdSeconds = yield* payoutAddressHoldSeconds
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const create = Effect.fn("PayoutAddresses.createHeld")(function* (
      accountId: string,
      values: Record<string, unknown>
    ) {
      return yield* store.create(accountId, { ...values, held_until: releaseTime(yield* now, holdSeconds) })
    })

    const cancelRow = SqlSchema.findOne({
      Request: Schema.Struct({ accountId: Schema.String, uuid: Schema.String, at: Schema.DateFromSelf }),
      Result: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
      execute: ({ accountId, uuid, at }) => sql`
        update payout_addresses set disabled_at = ${at}, disabled_reason = ${HOLD_CANCELLED}, updated_at = ${at}
        where id = ${uuid} and account_id = ${accountId} and disabled_at is null and held_until > ${at}
        returning *`
    })

    /**
     * Cancels a payout address during its hold: it is disabled (`hold_cancelled`) before any request could name
     * it. After the release, or once disabled, 409 `invalid_state`: disabling is the way then.
     */
    const cancelHold = Effect.fn("PayoutAddresses.cancelHold")(function* (accountId: string, uuid: string) {
      const at = yield* now
      const cancelled = yield* orDieOnStorage(cancelRow({ accountId, uuid, at }))
      if (Option.isSome(cancelled)) return cancelled.value as StoredResource
      const row = yield* store.require(accountId, uuid)
      if (row.disabled_at instanceof Date) {
        return yield* new InvalidState({
          message: "The payout address is disabled already; nothing to cancel."
        })
      }
      return yield* new InvalidState({
        message:
          row.held_until instanceof Date
            ? `The payout address was released at ${formatTimestamp(row.held_until)}; its hold can no longer be cancelled. Disable it instead.`
            : "The payout address was added without a hold; there is nothing to cancel. Disable it instead."
      })
    })

    return { ...store, create, cancelHold } as const
  }),
  dependencies: [Ids.Default]
}) {}

/** The three merchant resource stores. */
export const MerchantResourcesLive = Layer.mergeAll(
  Customers.Default,
  Issuers.Default,
  PayoutAddresses.Default
)
