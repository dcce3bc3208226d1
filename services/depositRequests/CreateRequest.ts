import type { SqlError } from "@effect/sql"
import type { PgClient } from "@effect/sql-pg"
import { Clock, Effect, Option } from "effect"
import type { ActorHost } from "../actors/ActorHost"
import type { DepositRequestRow } from "../actors/ActorRow"
import { IdempotencyConflict, InvalidRequest, type InvalidState, type NotFound } from "../domain/Errors"
import { toId } from "../domain/PrefixedId"
import type { Ids } from "../platform/Ids"
import { digestHexOf, newSecret } from "../platform/Secrets"
import { withHandSpan } from "../platform/TraceContext"
import { decideFirstStep } from "./CreateDecide"
import {
  type CreateInput,
  deadlineOf,
  fieldRuleError,
  fingerprintOf,
  IDEMPOTENCY_WINDOW_MS,
  policyOf,
  type References,
  referenceError,
  uuidOfId
} from "./CreateFields"
import { makeCreateGroupCommit } from "./CreateGroupCommit"
import type { DepositRequestWire } from "./DepositRequestWire"

export type Created = { replayed: boolean; wire: DepositRequestWire; secret: string | undefined }

/** Payout addresses remembered at most; past it the memory starts again (a create then reads first). */
const REMEMBERED_PAYOUTS = 10_000

/**
 * The create path, in its phases: validate (the fields' rules, `fieldRuleError`) → load (the payout address from memory, or
 * one read of the key and the references) → decide (the actor's first step, pure) → persist (the group commit
 * claims the key and inserts the row) → act (the actor host learns of its new actor, the answer is built).
 */
export const makeCreateRequest = (deps: {
  readonly sql: PgClient.PgClient
  readonly host: ActorHost
  readonly ids: Ids
  /** The merchant's view of a committed row, and of one read back. */
  readonly viewOf: (row: DepositRequestRow) => DepositRequestWire
  readonly load: (
    accountId: string,
    uuid: string
  ) => Effect.Effect<Option.Option<DepositRequestRow>, SqlError.SqlError>
  /** The sandbox: a `return_url` may also point at a shop on this machine over http. */
  readonly allowLocalShop: boolean
}) => {
  const { sql, host, ids, viewOf, load, allowLocalShop } = deps

  /**
   * The payout address of each payout-address id seen: an address never changes (only its disabled flag does,
   * and the claim re-checks that and the hold), so a create that names a known one needs no read first.
   */
  const payoutAddresses = new Map<string, string>()
  const rememberPayout = (accountId: string, payoutId: string, address: string) => {
    if (payoutAddresses.size >= REMEMBERED_PAYOUTS) payoutAddresses.clear()
    payoutAddresses.set(`${accountId}:${payoutId}`, address)
  }

  const groupCommit = makeCreateGroupCommit(sql, IDEMPOTENCY_WINDOW_MS, host.historyInstance)

  /**
   * Decide, persist, act: the first step, then the claim of the key with the row in the next group commit (only
   * if every reference is still the account's own and live; a key past its window is taken over, as if
   * forgotten). `None` when nothing was claimed.
   */
  const claimAndInsert = (
    accountId: string,
    idempotencyKey: string,
    input: CreateInput,
    now: Date,
    expiresAt: Date,
    payoutAddress: string
  ) => {
    const uuid = ids.next()
    const secret = policyOf(input) === "merchant_session" ? newSecret("mss_") : undefined
    // Spans by hand, as the actor host's steps are (README: Decisions): the step, and this create's wait on the
    // shared commit that writes it with others.
    return withHandSpan(
      "DepositRequest.step",
      { "deposit_request.id": toId("dr", uuid), "event.type": "start" },
      () => Effect.sync(() => decideFirstStep(uuid, accountId, input, now, expiresAt, payoutAddress))
    ).pipe(
      Effect.flatMap(({ row, step }) =>
        // The group commit writes rows only; a first step that emitted events would need them in its transaction.
        step.emitted.length > 0
          ? Effect.dieMessage("the first step emitted; creates cannot batch it")
          : withHandSpan("DepositRequests.commit", {}, () =>
              groupCommit.claim({
                row,
                idempotencyKey,
                fingerprint: fingerprintOf(input),
                secretDigest: secret === undefined ? null : digestHexOf(secret)
              })
            ).pipe(
              Effect.flatMap((claimed) =>
                claimed
                  ? Effect.as(
                      host.created(row),
                      Option.some<Created>({ replayed: false, wire: viewOf(row), secret })
                    )
                  : Effect.succeed(Option.none<Created>())
              )
            )
      )
    )
  }

  /**
   * Load, then the rest: one read (the key, if it is remembered, and the references), then the claiming insert.
   * Used when the fast path could not decide: a replay, a conflict, a refused reference or field, an unknown payout.
   */
  const createAfterRead = (accountId: string, idempotencyKey: string, input: CreateInput) =>
    Effect.gen(function* () {
      const now = new Date(yield* Clock.currentTimeMillis)
      const customerUuid = input.customer_id === undefined ? null : uuidOfId(input.customer_id)
      const [read] = yield* sql<References & { fingerprint: Uint8Array | null; resource_id: string | null }>`
        select k.fingerprint, k.resource_id,
          exists (select 1 from issuers where id = ${uuidOfId(input.issuer_id)}::uuid
            and account_id = ${accountId}::uuid and deleted_at is null) as issuer,
          p.address as payout_address, p.disabled_at is not null as payout_disabled,
          p.held_until as payout_held_until,
          exists (select 1 from customers where id = ${customerUuid}::uuid
            and account_id = ${accountId}::uuid and deleted_at is null) as customer
        from (select 1) as one
        left join idempotency_keys k on k.account_id = ${accountId}::uuid and k.key = ${idempotencyKey}
          and k.created_at >= ${new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS)}
        left join payout_addresses p on p.id = ${uuidOfId(input.payout_address_id)}::uuid
          and p.account_id = ${accountId}::uuid`
      if (read!.resource_id !== null) {
        if (Buffer.from(read!.fingerprint!).toString("hex") !== fingerprintOf(input)) {
          return yield* new IdempotencyConflict({
            message:
              "This Idempotency-Key was already used with different immutable fields (amount, issuer, payout address, payer policy, deadline or return URL). Use a new key for a new request."
          })
        }
        const row = yield* load(accountId, read!.resource_id)
        return Option.some<Created>({
          replayed: true,
          wire: viewOf(Option.getOrThrow(row)),
          secret: undefined
        })
      }
      const expiresAt = deadlineOf(input, now)
      if (expiresAt instanceof InvalidRequest) return yield* expiresAt
      const refused = referenceError(read!, input, now)
      if (refused !== undefined) return yield* refused
      rememberPayout(accountId, input.payout_address_id, read!.payout_address!)
      return yield* claimAndInsert(accountId, idempotencyKey, input, now, expiresAt, read!.payout_address!)
    })

  /**
   * Creates a request once per Idempotency-Key. The usual create (valid fields, a payout address seen before) is
   * ONE statement and one commit; anything else reads first. Concurrent creates with one key wait on the key's
   * unique index; the losers find nothing claimed, read, and answer from the winner's row.
   */
  const create = (
    accountId: string,
    idempotencyKey: string,
    input: CreateInput
  ): Effect.Effect<
    Created,
    IdempotencyConflict | InvalidRequest | InvalidState | NotFound | SqlError.SqlError
  > =>
    Effect.gen(function* () {
      // A body no create could ever take is refused whatever its key: before the key is looked up.
      const broken = fieldRuleError(input, allowLocalShop)
      if (broken !== undefined) return yield* broken
      const knownPayout = payoutAddresses.get(`${accountId}:${input.payout_address_id}`)
      if (knownPayout !== undefined) {
        const now = new Date(yield* Clock.currentTimeMillis)
        // A deadline too near may still be a replay of a request that was valid then: let the full path decide.
        const expiresAt = deadlineOf(input, now)
        if (!(expiresAt instanceof InvalidRequest)) {
          const created = yield* claimAndInsert(accountId, idempotencyKey, input, now, expiresAt, knownPayout)
          if (Option.isSome(created)) return created.value
        }
      }
      // Nothing claimed means another create took the key meanwhile, or a reference changed: read, and decide.
      for (let attempt = 0; attempt < 3; attempt++) {
        const created = yield* createAfterRead(accountId, idempotencyKey, input)
        if (Option.isSome(created)) return created.value
      }
      return yield* Effect.dieMessage(`create with Idempotency-Key ${idempotencyKey} kept losing its claim`)
    })

  return create
}
