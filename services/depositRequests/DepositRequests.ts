import type { SqlError } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Clock, Context, Effect, Layer, Option, Runtime } from "effect"
import { IdempotencyConflict, InvalidRequest, InvalidState, NotFound } from "../domain/Errors"
import { toId } from "../domain/PrefixedId"
import { ActorHost } from "../actors/ActorHost"
import { ChangeFeed } from "../platform/ChangeFeed"
import type { DepositRequestRow, DepositRequestWire } from "./DepositRequestWire"
import { Ids } from "../platform/Ids"
import { makeCreateGroupCommit } from "./CreateGroupCommit"
import { dieOnSqlErrors } from "../platform/SqlFailure"
import { digestHexOf, newSecret } from "../platform/Secrets"
import { withHandSpan } from "../platform/TraceContext"

/** Default and bounds of a request's deadline. */
export const DEFAULT_TTL_MS = 24 * 60 * 60 * 1000
export const MIN_TTL_MS = 5 * 60 * 1000
export const MAX_TTL_MS = 30 * 24 * 60 * 60 * 1000
/** Largest amount one request may ask: 10^12 USDC, far above any payment and far below numeric limits. */
export const MAX_AMOUNT_BASE_UNITS = 10n ** 18n
/** How long an Idempotency-Key is remembered. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000

export interface CreateInput {
  readonly amount: bigint
  readonly heading?: string | undefined
  readonly reference?: string | undefined
  readonly metadata?: Readonly<Record<string, string>> | undefined
  readonly customer_id?: string | undefined
  readonly issuer_id: string
  readonly payout_address_id: string
  /** Absent means `none`. */
  readonly payer_policy_mode?: "none" | "mailbox" | "merchant_session" | undefined
  readonly expected_email?: string | undefined
  readonly payer_reference?: string | undefined
  readonly expires_at?: Date | undefined
}

export interface UpdateInput {
  readonly heading?: string | null | undefined
  readonly reference?: string | null | undefined
  readonly metadata?: Readonly<Record<string, string>> | null | undefined
  readonly customer_id?: string | null | undefined
}

const uuidOfId = (id: string) => id.slice(id.indexOf("_") + 1)

const policyOf = (input: CreateInput) => input.payer_policy_mode ?? "none"

/**
 * The immutable fields, canonically ordered: a replay with the same key must carry the same ones. Mutable fields
 * (heading, reference, metadata, customer) are not compared, as they can change by PATCH anyway.
 */
const fingerprintOf = (input: CreateInput) =>
  digestHexOf(
    JSON.stringify([
      input.amount.toString(),
      input.issuer_id,
      input.payout_address_id,
      policyOf(input),
      input.expected_email ?? null,
      input.payer_reference ?? null,
      input.expires_at?.toISOString() ?? null
    ])
  )

const make = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const host = yield* ActorHost
  const ids = yield* Ids
  const feed = yield* ChangeFeed

  const requireCustomer = (accountId: string, customerId: string) =>
    Effect.gen(function* () {
      const rows = yield* sql`
        select 1 from customers where id = ${uuidOfId(customerId)} and account_id = ${accountId} and deleted_at is null`
      if (rows.length === 0) return yield* NotFound.of("customer")
    })

  /**
   * The rules a create's own fields must meet, before anything is read: the deadline when they hold, else the
   * error. A plain function (no Effect): it runs on every create.
   */
  const checkFields = (input: CreateInput, now: Date): Date | InvalidRequest => {
    if (input.amount <= 0n)
      return new InvalidRequest({ message: "'amount' must be above zero.", param: "amount" })
    if (input.amount > MAX_AMOUNT_BASE_UNITS) {
      return new InvalidRequest({ message: "'amount' is above the largest amount allowed.", param: "amount" })
    }
    const policy = policyOf(input)
    if (policy === "mailbox" && input.expected_email === undefined) {
      return new InvalidRequest({
        message: "'expected_email' is required when payer_policy_mode is 'mailbox'.",
        param: "expected_email"
      })
    }
    if (policy !== "mailbox" && input.expected_email !== undefined) {
      return new InvalidRequest({
        message: "'expected_email' is only allowed when payer_policy_mode is 'mailbox'.",
        param: "expected_email"
      })
    }
    if (policy !== "merchant_session" && input.payer_reference !== undefined) {
      return new InvalidRequest({
        message: "'payer_reference' is only allowed when payer_policy_mode is 'merchant_session'.",
        param: "payer_reference"
      })
    }
    const expiresAt = input.expires_at ?? new Date(now.getTime() + DEFAULT_TTL_MS)
    const ttl = expiresAt.getTime() - now.getTime()
    if (ttl < MIN_TTL_MS || ttl > MAX_TTL_MS) {
      return new InvalidRequest({
        message: "'expires_at' must be between 5 minutes and 30 days from now.",
        param: "expires_at"
      })
    }
    return expiresAt
  }

  /** Which reference is missing or unusable, as the error a merchant can act on. */
  const referenceError = (
    refs: {
      issuer: boolean
      payout_address: string | null
      payout_disabled: boolean | null
      customer: boolean
    },
    input: CreateInput
  ) => {
    if (!refs.issuer) return NotFound.of("issuer")
    if (refs.payout_address === null) return NotFound.of("payout_address")
    if (refs.payout_disabled === true) {
      return new InvalidRequest({ message: "The payout address is disabled.", param: "payout_address_id" })
    }
    if (input.customer_id !== undefined && !refs.customer) return NotFound.of("customer")
    return undefined
  }

  const load = (accountId: string, uuid: string) =>
    sql<DepositRequestRow>`select * from deposit_requests where id = ${uuid} and account_id = ${accountId}`.pipe(
      Effect.map((rows) => Option.fromNullable(rows[0]))
    )

  type Created = { replayed: boolean; wire: DepositRequestWire; secret: string | undefined }

  /**
   * The payout address of each payout-address id seen: an address never changes (only its disabled flag does,
   * and the claim re-checks that), so a create that names a known one needs no read first.
   */
  const payoutAddresses = new Map<string, string>()
  const rememberPayout = (accountId: string, payoutId: string, address: string) => {
    if (payoutAddresses.size >= 10_000) payoutAddresses.clear()
    payoutAddresses.set(`${accountId}:${payoutId}`, address)
  }

  const groupCommit = makeCreateGroupCommit(sql, IDEMPOTENCY_WINDOW_MS)

  /**
   * Claims the key (a key past its window is taken over, as if forgotten) only if every reference is still the
   * account's own and live, and inserts the request with it, in the next group commit. `None` when nothing was
   * claimed.
   */
  const claimAndInsert = (
    accountId: string,
    idempotencyKey: string,
    input: CreateInput,
    now: Date,
    expiresAt: Date,
    payoutAddress: string
  ) =>
    Effect.gen(function* () {
      const uuid = ids.next()
      const policy = policyOf(input)
      const secret = policy === "merchant_session" ? newSecret("mss_") : undefined
      // The first step's span is made by hand, as the actor host's steps are (README: Decisions).
      const { row, step } = yield* withHandSpan(
        "DepositRequest.step",
        { "deposit_request.id": toId("dr", uuid), "event.type": "start" },
        () =>
          Effect.sync(() =>
            host.firstStep(
              {
                id: uuid,
                account_id: accountId,
                amount_base_units: input.amount.toString(),
                heading: input.heading ?? "",
                reference: input.reference ?? "",
                metadata: { ...(input.metadata ?? {}) },
                customer_id: input.customer_id === undefined ? null : uuidOfId(input.customer_id),
                issuer_id: uuidOfId(input.issuer_id),
                payout_address_id: uuidOfId(input.payout_address_id),
                payer_policy_mode: policy,
                expected_email: input.expected_email ?? null,
                payer_reference: input.payer_reference ?? null,
                deposit_index: null,
                deposit_address: null,
                expires_at: expiresAt,
                created_at: now
              },
              {
                id: toId("dr", uuid),
                amount_base_units: input.amount.toString(),
                payout_address: payoutAddress,
                payer_policy_mode: policy,
                expires_at: expiresAt.toISOString(),
                created_at: now.toISOString()
              }
            )
          )
      )
      // The group commit writes rows only; a first step that emitted events would need them in its transaction.
      if (step.emitted.length > 0)
        return yield* Effect.dieMessage("the first step emitted; creates cannot batch it")
      // Its span is this create's wait on the shared commit that writes it with others.
      const claimed = yield* groupCommit
        .claim({
          row,
          idempotencyKey,
          fingerprint: fingerprintOf(input),
          secretDigest: secret === undefined ? null : digestHexOf(secret)
        })
        .pipe(Effect.withSpan("DepositRequests.commit"))
      if (!claimed) return Option.none()
      host.created(row)
      return Option.some<Created>({ replayed: false, wire: host.view(row), secret })
    })

  /**
   * The full path: one read (the key, if it is remembered, and the references), then the claiming insert. Used
   * when the fast path could not decide: a replay, a conflict, a refused reference or field, an unknown payout.
   */
  const createAfterRead = (accountId: string, idempotencyKey: string, input: CreateInput) =>
    Effect.gen(function* () {
      const now = new Date(yield* Clock.currentTimeMillis)
      const customerUuid = input.customer_id === undefined ? null : uuidOfId(input.customer_id)
      const [read] = yield* sql<{
        fingerprint: Uint8Array | null
        resource_id: string | null
        issuer: boolean
        payout_address: string | null
        payout_disabled: boolean | null
        customer: boolean
      }>`
        select k.fingerprint, k.resource_id,
          exists (select 1 from issuers where id = ${uuidOfId(input.issuer_id)}::uuid
            and account_id = ${accountId}::uuid and deleted_at is null) as issuer,
          p.address as payout_address, p.disabled_at is not null as payout_disabled,
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
              "This Idempotency-Key was already used with different immutable fields (amount, issuer, payout address, payer policy or deadline). Use a new key for a new request."
          })
        }
        const row = yield* load(accountId, read!.resource_id)
        return Option.some<Created>({
          replayed: true,
          wire: host.view(Option.getOrThrow(row)),
          secret: undefined
        })
      }
      const expiresAt = checkFields(input, now)
      if (expiresAt instanceof InvalidRequest) return yield* expiresAt
      const refused = referenceError(read!, input)
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
  ): Effect.Effect<Created, IdempotencyConflict | InvalidRequest | NotFound | SqlError.SqlError> =>
    Effect.gen(function* () {
      const knownPayout = payoutAddresses.get(`${accountId}:${input.payout_address_id}`)
      if (knownPayout !== undefined) {
        const now = new Date(yield* Clock.currentTimeMillis)
        // A field error may still be a replay of a request that was valid then: let the full path decide.
        const expiresAt = checkFields(input, now)
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

  const get = (accountId: string, uuid: string) => Effect.map(load(accountId, uuid), Option.map(host.view))

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
    Effect.map(sharedLoad(accountId, uuid), Option.map(host.view))

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
      const page = rows.slice(0, options.limit).map(host.view)
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
      return host.view(Option.getOrThrow(yield* load(accountId, uuid)))
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
          return host.view({ ...current, ...merged, version, updated_at: now })
        })
      )
      .pipe(Effect.tap((wire) => feed.changed(uuid, wire.version)))

  // SQL failures are defects here: the edge answers them with a logged 500.
  return {
    create: dieOnSqlErrors(create),
    get: dieOnSqlErrors(get),
    getShared: dieOnSqlErrors(getShared),
    list: dieOnSqlErrors(list),
    update: dieOnSqlErrors(update),
    resume: dieOnSqlErrors(resume)
  } as const
})

export class DepositRequests extends Context.Tag("deposits/DepositRequests")<
  DepositRequests,
  Effect.Effect.Success<typeof make>
>() {
  static readonly layer = Layer.effect(DepositRequests, make)
}

export type { DepositRequestWire }
