import { createHash } from "node:crypto"
import type { Statement } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Clock, Effect, Option, Runtime } from "effect"
import { getAddress } from "viem"
import { ActorHost } from "../actors/ActorHost"
import { type DepositRequestRow, depositRequestColumns, snapshotOf } from "../actors/ActorRow"
import type { Step } from "../../machines/step"
import { chainIdOf } from "../domain/Environment"
import type { ListSearch } from "../domain/ListSearch"
import { InvalidRequest, InvalidState, NotFound } from "../domain/Errors"
import { ChangeFeed } from "../platform/ChangeFeed"
import { Ids } from "../platform/Ids"
import { publicBaseUrl, serviceEnv } from "../platform/Settings"
import { orDieOnSql } from "../platform/SqlFailure"
import { type CreateInput, payoutHoldError, uuidOfId } from "./CreateFields"
import { makeCreateRequest } from "./CreateRequest"
import { type DepositRequestWire, lifecycleFactsOf, viewOf } from "./DepositRequestWire"

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

  // The row type's columns by name: a column added to the table is not read into rows that do not declare it.
  const columns = sql.literal(depositRequestColumns.join(", "))

  const load = (accountId: string, uuid: string) =>
    sql<DepositRequestRow>`select ${columns} from deposit_requests where id = ${uuid} and account_id = ${accountId}`.pipe(
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

  /**
   * The conditions a search adds, one per way it can match (infra/decisions/0080-one-search-and-local-dates.md):
   * each is answered by an index, and the page is their union. The few rows a branch names indirectly (payout
   * addresses of an address, customers of an email) are read first, so each branch is a plain indexed condition.
   */
  const searchBranches = (accountId: string, search: ListSearch) =>
    Effect.gen(function* () {
      switch (search.kind) {
        case "id": {
          const uuid = search.uuid
          switch (search.prefix) {
            case "dr":
              return [sql`and id = ${uuid}`]
            case "cus":
              return [sql`and customer_id = ${uuid}`]
            case "iss":
              return [sql`and issuer_id = ${uuid}`]
            case "pa":
              return [sql`and payout_address_id = ${uuid}`]
            case "att":
              return [
                sql`and id in (select deposit_request_id from deposit_request_attachments where attachment_id = ${uuid})`
              ]
            case "va":
              return [
                sql`and id in (select deposit_request_id from verification_attempts where id = ${uuid})`
              ]
            case "evt":
              return [sql`and id in (select deposit_request_id from lifecycle_events where id = ${uuid})`]
            case "whd":
              return [
                sql`and id in (
                  select e.deposit_request_id from webhook_deliveries d join lifecycle_events e on e.id = d.event_id
                  where d.id = ${uuid})`
              ]
          }
          return []
        }
        case "transaction_hash":
          return [transactionHashCondition(search.lower)]
        case "address": {
          const payouts = yield* sql<{ id: string }>`
            select id from payout_addresses where account_id = ${accountId} and lower(address) = ${search.lower}`
          return [
            depositAddressCondition(search.lower),
            payerWalletCondition(search.lower),
            ...payouts.map((p) => sql`and payout_address_id = ${p.id}`)
          ]
        }
        case "email": {
          const lower = search.text.toLowerCase()
          const customers = yield* sql<{ id: string }>`
            select id from customers where account_id = ${accountId} and lower(email) = ${lower}`
          return [
            sql`and lower(expected_email) = ${lower}`,
            ...customers.map((c) => sql`and customer_id = ${c.id}`),
            sql`and reference = ${search.text}`
          ]
        }
        case "reference":
          return [sql`and reference = ${search.text}`]
      }
    })

  // Stored as the vault derived it (checksummed); either spelling finds it through the unique index.
  const depositAddressCondition = (lower: string) =>
    sql`and deposit_address in (${getAddress(lower)}, ${lower})`
  // The wallet's few requests first (an array, read through the bound-wallet index), then those by primary key: as
  // `id in (…)` the planner was seen to walk the account's whole history backwards instead (2.6 s over 2M rows).
  const payerWalletCondition = (lower: string) =>
    sql`and id = any(array(
      select deposit_request_id from verification_attempts
      where kind = 'wallet' and outcome = 'accepted' and lower(wallet) = ${lower}))`
  // Payments in (credits), settlements and returns out (transfers); a recovery is a confirmed return, so its hash
  // is a transfer's.
  const transactionHashCondition = (lower: string) =>
    sql`and id in (
      select deposit_request_id from chain_credits where chain_id = ${chainId} and tx_hash = ${lower}
      union all
      select deposit_request_id from transfers where tx_hash = ${lower})`

  const list = (accountId: string, options: ListOptions) =>
    Effect.gen(function* () {
      const after = options.startingAfter === undefined ? null : uuidOfId(options.startingAfter)
      // With a date window the page is read in (created_at, id) order, the window's index order, so it stops after
      // a page; without one, in id order (UUIDv7: newest first), which every other filter's index ends with.
      const byCreated = options.createdGte !== undefined || options.createdLt !== undefined
      const cursor =
        after === null
          ? sql``
          : byCreated
            ? sql`and (created_at, id) < (
                select c.created_at, c.id from deposit_requests c where c.id = ${after} and c.account_id = ${accountId})`
            : sql`and id < ${after}`
      const order = byCreated ? sql`order by created_at desc, id desc` : sql`order by id desc`
      const filters = sql`
          ${options.status === undefined ? sql`` : sql`and status = ${options.status}`}
          ${options.createdGte === undefined ? sql`` : sql`and created_at >= ${options.createdGte}`}
          ${options.createdLt === undefined ? sql`` : sql`and created_at < ${options.createdLt}`}
          ${options.reference === undefined ? sql`` : sql`and reference = ${options.reference}`}
          ${options.customer === undefined ? sql`` : sql`and customer_id = ${uuidOfId(options.customer)}`}
          ${options.depositAddress === undefined ? sql`` : depositAddressCondition(options.depositAddress.toLowerCase())}
          ${options.payerWallet === undefined ? sql`` : payerWalletCondition(options.payerWallet.toLowerCase())}
          ${options.transactionHash === undefined ? sql`` : transactionHashCondition(options.transactionHash.toLowerCase())}
          ${cursor}`
      const read = (branch: Statement.Fragment) => sql<DepositRequestRow>`
        select ${columns} from deposit_requests
        where account_id = ${accountId} ${filters} ${branch}
        ${order}
        limit ${options.limit + 1}`
      const branches =
        options.search === undefined ? undefined : yield* searchBranches(accountId, options.search)
      const rows =
        branches === undefined
          ? yield* read(sql``)
          : branches.length === 0
            ? []
            : // Each branch reads at most a page through its own index; a request two branches found is one row.
              yield* sql<DepositRequestRow>`
                select * from (
                  select distinct on (id) * from (${sql.join(" union all ", false)(branches.map((b) => sql`(${read(b)})`))}) as found
                  order by id desc) as once
                ${order}
                limit ${options.limit + 1}`
      const page = rows.slice(0, options.limit).map(view)
      return {
        deposit_requests: page,
        next_cursor: rows.length > options.limit ? (page.at(-1)?.id ?? null) : null,
        version: pageVersion(page)
      }
    })

  /**
   * Whether every request of a page still has the version it was read with: one indexed read by id, made after
   * a live list has subscribed to the page's requests, so a change committed between the page's read and the
   * subscription is not missed.
   */
  const pageUnchanged = (page: ReadonlyArray<{ readonly id: string; readonly version: string }>) =>
    Effect.gen(function* () {
      if (page.length === 0) return true
      const rows = yield* sql<{ id: string; version: string }>`
        select id, version::text as version from deposit_requests
        where id = any(${page.map((r) => uuidOfId(r.id))}::uuid[])`
      const now = new Map(rows.map((r) => [r.id, r.version]))
      return page.every((r) => now.get(uuidOfId(r.id)) === r.version)
    })

  /**
   * Validate and load a resume to another payout address: only from a pause the token's blacklist caused on the
   * payout address, before the settlement landed, to another enabled payout address of the account.
   */
  const redirectTarget = (accountId: string, row: DepositRequestRow, payoutAddressId: string) =>
    Effect.gen(function* () {
      const { context } = snapshotOf(row)
      if (context.attention?.code !== PAYOUT_ADDRESS_BLOCKED) {
        return yield* new InvalidState({
          message: `payout_address_id is only taken when the request's attention code is ${PAYOUT_ADDRESS_BLOCKED}; this one's is ${context.attention?.code ?? "none"}. Resume without a body.`
        })
      }
      if (context.settlement !== null) {
        return yield* new InvalidState({
          message:
            "The settlement already reached the current payout address; resume without payout_address_id."
        })
      }
      const uuid = uuidOfId(payoutAddressId)
      const rows = yield* sql<{ address: string; disabled: boolean; held_until: Date | null }>`
        select address, disabled_at is not null as disabled, held_until from payout_addresses
        where id = ${uuid} and account_id = ${accountId}`
      const target = rows[0]
      if (target === undefined) return yield* NotFound.of("payout_address")
      if (target.disabled) {
        return yield* new InvalidRequest({
          message: "The payout address is disabled; name an enabled payout address of the account.",
          param: "payout_address_id"
        })
      }
      // The hold is a create's (infra/decisions/0077): a takeover must not redirect money to a fresh address either.
      // Checked once, here: `held_until` never moves, and a hold cancelled meanwhile disables it, which the
      // commit's share-locked check refuses.
      const held = payoutHoldError(target.held_until, new Date(yield* Clock.currentTimeMillis))
      if (held !== undefined) return yield* held
      if (
        uuid === row.payout_address_id ||
        target.address.toLowerCase() === context.payout_address.toLowerCase()
      ) {
        return yield* new InvalidRequest({
          message:
            "The payout address is the request's current (blocked) one; name another enabled payout address.",
          param: "payout_address_id"
        })
      }
      return { uuid, address: target.address }
    })

  /**
   * In the resume's commit, after its step: the request keeps the new payout address, the blocked one is disabled
   * (unless it already was), and the replaced settlement is left with nothing that could carry it out. Fails (and
   * so rolls the step back) when the target was disabled meanwhile or the step did not redirect.
   */
  const recordRedirect =
    (
      accountId: string,
      uuid: string,
      from: DepositRequestRow,
      to: { uuid: string; address: string },
      at: Date
    ) =>
    (applied: { readonly step: Step }) =>
      Effect.gen(function* () {
        if (applied.step.context.payout_address !== to.address) {
          return yield* new InvalidState({
            message: "The request changed meanwhile and was not resumed; read it again."
          })
        }
        const still = yield* sql`
          select 1 from payout_addresses
          where id = ${to.uuid} and account_id = ${accountId} and disabled_at is null for share`
        if (still.length === 0) {
          return yield* new InvalidRequest({
            message:
              "The payout address was disabled meanwhile; name an enabled payout address of the account.",
            param: "payout_address_id"
          })
        }
        yield* sql`update deposit_requests set payout_address_id = ${to.uuid} where id = ${uuid}`
        yield* sql`
          update payout_addresses set disabled_at = ${at}, disabled_reason = ${BLOCKED_BY_TOKEN}, updated_at = ${at}
          where id = ${from.payout_address_id} and account_id = ${accountId} and disabled_at is null`
        const replaced = snapshotOf(from)
          .context.pending.filter((p) => p.type === "settle")
          .map((p) => p.command_id)
        if (replaced.length > 0) {
          // The held command would otherwise wait forever, and a retry of it find it and hold it again.
          yield* sql`delete from held_transfers where command_id in ${sql.in(replaced)}`
          yield* sql`
            update outbox set published_at = ${at}
            where deposit_request_id = ${uuid} and published_at is null
              and payload->>'command_id' in ${sql.in(replaced)}`
        }
      })

  /**
   * An operator's resume of a request that needs attention: the lifecycle decides where the pause ends and
   * re-issues what was outstanding (the treasury signs a reverted transfer again). With a payout address, a
   * settlement held because the token blocks the current one is commanded anew to it (infra/decisions/0072).
   */
  const resume = (accountId: string, uuid: string, input: ResumeInput) =>
    Effect.gen(function* () {
      const row = yield* load(accountId, uuid)
      if (Option.isNone(row)) return yield* NotFound.of("deposit_request")
      if (row.value.status !== "needs_attention") {
        return yield* new InvalidState({
          message: `Only a request that needs attention can be resumed; this one is ${row.value.status}.`
        })
      }
      const at = new Date(yield* Clock.currentTimeMillis)
      const eventId = `resume:${ids.next()}`
      if (input.payout_address_id === undefined) {
        yield* host
          .apply(uuid, eventId, { type: "operator.resumed", at: at.toISOString() })
          .pipe(Effect.orDie)
      } else {
        const to = yield* redirectTarget(accountId, row.value, input.payout_address_id)
        yield* host
          .apply(
            uuid,
            eventId,
            { type: "operator.resumed", at: at.toISOString(), payout_address: to.address },
            recordRedirect(accountId, uuid, row.value, to, at)
          )
          .pipe(
            Effect.catchTags({
              SqlError: Effect.die,
              DepositRequestMissing: Effect.die,
              SnapshotVersionError: Effect.die
            })
          )
      }
      return view(Option.getOrThrow(yield* load(accountId, uuid)))
    })

  /**
   * The merchant ends a request nobody has paid (awaiting its payer, or ready with nothing received): it expires at
   * once with the reason kept. Refused once anything arrived, since then money is on its way; asked again of a
   * request it cancelled, it answers the request as it is (a retried cancel is safe).
   */
  const cancel = (accountId: string, uuid: string, reason: string | null) =>
    Effect.gen(function* () {
      const row = yield* load(accountId, uuid)
      if (Option.isNone(row)) return yield* NotFound.of("deposit_request")
      const facts = lifecycleFactsOf(snapshotOf(row.value))
      if (facts.cancellation !== null) return view(row.value)
      if (facts.status !== "awaiting_payer" && facts.status !== "ready")
        return yield* new InvalidState({ message: cancelRefusal(facts.status) })
      const at = new Date(yield* Clock.currentTimeMillis)
      yield* host
        .apply(uuid, `cancel:${ids.next()}`, { type: "merchant.cancelled", at: at.toISOString(), reason })
        .pipe(Effect.orDie)
      const after = Option.getOrThrow(yield* load(accountId, uuid))
      // A payment that landed first moved it on, and the machine took no cancel: say so rather than pretend.
      if (lifecycleFactsOf(snapshotOf(after)).cancellation === null)
        return yield* new InvalidState({ message: cancelRefusal(after.status) })
      return view(after)
    })

  /** PATCH: omitted fields stay, `null` clears, and the merged record is checked as a whole. */
  const update = (accountId: string, uuid: string, patch: UpdateInput) =>
    sql
      .withTransaction(
        Effect.gen(function* () {
          const now = new Date(yield* Clock.currentTimeMillis)
          const rows = yield* sql<DepositRequestRow>`
          select ${columns} from deposit_requests where id = ${uuid} and account_id = ${accountId} for update`
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
      const result = yield* createRequest(accountId, idempotencyKey, input)
      // Live lists of the account learn of the new request (one bus notice, no wait).
      if (!result.replayed) yield* feed.created(accountId)
      return result
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
    pageUnchanged: Effect.fn("DepositRequests.pageUnchanged")(function* (
      page: ReadonlyArray<{ readonly id: string; readonly version: string }>
    ) {
      return yield* pageUnchanged(page)
    }, orDieOnSql),
    update: Effect.fn("DepositRequests.update")(function* (
      accountId: string,
      uuid: string,
      patch: UpdateInput
    ) {
      return yield* update(accountId, uuid, patch)
    }, orDieOnSql),
    cancel: Effect.fn("DepositRequests.cancel")(function* (
      accountId: string,
      uuid: string,
      reason: string | null
    ) {
      return yield* cancel(accountId, uuid, reason)
    }, orDieOnSql),
    resume: Effect.fn("DepositRequests.resume")(function* (
      accountId: string,
      uuid: string,
      input: ResumeInput = {}
    ) {
      return yield* resume(accountId, uuid, input)
    }, orDieOnSql)
  } as const
})

/** Why a request in `status` cannot be cancelled. */
const cancelRefusal = (status: string) =>
  status === "partially_deposited" || status === "deposited" || status === "settled"
    ? `A payment has arrived (the request is ${status}): it can no longer be cancelled.`
    : `Only a request nobody has paid can be cancelled; this one is ${status}.`

/** A resume's body: a plain resume, or one to another payout address (a `pa_` id). */
export interface ResumeInput {
  readonly payout_address_id?: string | undefined
}

/** The attention code under which a resume may name another payout address (the treasury's token gate sets it). */
export const PAYOUT_ADDRESS_BLOCKED = "payout_address_blocked"
/** `payout_addresses.disabled_reason` of an address a resume moved away from. */
export const BLOCKED_BY_TOKEN = "blocked_by_token"

/** The list's filters, all optional and combined with `and`; addresses and hashes in any case. */
export interface ListOptions {
  readonly status?: string | undefined
  readonly createdGte?: Date | undefined
  readonly createdLt?: Date | undefined
  readonly reference?: string | undefined
  /** The one search box, as recognised. */
  readonly search?: ListSearch | undefined
  /** A `cus_` id. */
  readonly customer?: string | undefined
  readonly depositAddress?: string | undefined
  readonly payerWallet?: string | undefined
  readonly transactionHash?: string | undefined
  readonly limit: number
  /** A `dr_` id. */
  readonly startingAfter?: string | undefined
}

/**
 * A list page's version: a short digest of its ids and versions in order, so it changes when any request on the
 * page changes, or the page gains or loses one. Opaque to clients, who only compare it.
 */
export const pageVersion = (page: ReadonlyArray<{ readonly id: string; readonly version: string }>) => {
  const hash = createHash("sha256")
  for (const r of page) hash.update(`${r.id}:${r.version};`)
  return hash.digest("base64url").slice(0, 16)
}

/** Merchants' deposit requests: create, read, list, update, resume (README: the deposit request API). */
export class DepositRequests extends Effect.Service<DepositRequests>()("deposits/DepositRequests", {
  effect: make,
  dependencies: [ActorHost.Default, ChangeFeed.Default, Ids.Default]
}) {}

export type { DepositRequestWire }
