import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Effect, Option, Schema } from "effect"
import type { ServiceEnv } from "../domain/Environment"
import { serviceEnv } from "../platform/Settings"
import { apiKeyPrefixOf } from "../domain/Environment"
import { CredentialCache } from "./CredentialCache"
import type { Identity } from "./Identity"

export type { Identity } from "./Identity"
import { Ids } from "../platform/Ids"
import { digestHexOf, digestOf, newSecret, sameDigest } from "../platform/Secrets"

export const SESSION_PREFIX = "session_"
/** How long a rotated-out key keeps working. */
export const API_KEY_GRACE_MS = 24 * 60 * 60 * 1000
/** Default lifetime of a dashboard session. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000

export interface Account {
  readonly id: string
  readonly name: string
  readonly environment: ServiceEnv
  readonly createdAt: Date
}

export interface SessionOptions {
  readonly ttlMs?: number
  /** The member signing in; none for the operator CLI. */
  readonly memberId?: string
  /** The browser's `User-Agent`, so a member can tell their sessions apart. */
  readonly userAgent?: string
}

export interface IssuedKey {
  readonly apiKey: string
  readonly last4: string
  readonly createdAt: Date
  /** Until when the key it replaced keeps working, if there was one. */
  readonly previousKeyValidUntil: Date | null
}

export interface KeyInfo {
  readonly active: { readonly last4: string; readonly createdAt: Date } | null
  readonly previous: { readonly last4: string; readonly validUntil: Date } | null
}

const AccountRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  environment: Schema.Literal("sandbox", "production") satisfies Schema.Schema<ServiceEnv>,
  created_at: Schema.DateFromSelf
})
const toAccount = (row: typeof AccountRow.Type): Account => ({
  id: row.id,
  name: row.name,
  environment: row.environment,
  createdAt: row.created_at
})

const SessionRow = Schema.Struct({
  digest: Schema.Uint8ArrayFromSelf,
  id: Schema.String,
  account_id: Schema.String,
  member_id: Schema.NullOr(Schema.String),
  user_agent: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf,
  expires_at: Schema.DateFromSelf
})
const ApiKeyRow = Schema.Struct({
  digest: Schema.Uint8ArrayFromSelf,
  account_id: Schema.String,
  environment: AccountRow.fields.environment,
  last4: Schema.String,
  created_at: Schema.DateFromSelf
})
const LiveKey = Schema.Struct({
  last4: Schema.String,
  created_at: Schema.DateFromSelf,
  grace_until: Schema.NullOr(Schema.DateFromSelf)
})
const AccountAt = Schema.Struct({ accountId: Schema.String, at: Schema.DateFromSelf })
const DigestAt = Schema.Struct({ digest: Schema.Uint8ArrayFromSelf, at: Schema.DateFromSelf })

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

export class Accounts extends Effect.Service<Accounts>()("deposits/Accounts", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ids = yield* Ids
    const config = { serviceEnv: yield* serviceEnv }
    const cache = yield* CredentialCache
    const keyPrefix = apiKeyPrefixOf(config.serviceEnv)
    // Accounts never change once created (no route renames them), so reads of one are remembered.
    const accounts = new Map<string, Account>()

    const insertAccount = SqlSchema.single({
      Request: AccountRow,
      Result: AccountRow,
      execute: (row) => sql`
        insert into accounts (id, name, environment, created_at)
        values (${row.id}, ${row.name}, ${row.environment}, ${row.created_at})
        returning id, name, environment, created_at`
    })
    const accountById = SqlSchema.findOne({
      Request: Schema.String,
      Result: AccountRow,
      execute: (id) => sql`select id, name, environment, created_at from accounts where id = ${id}`
    })
    const insertSession = SqlSchema.void({
      Request: SessionRow,
      execute: (row) => sql`
        insert into dashboard_sessions (digest, id, account_id, member_id, user_agent, created_at, expires_at)
        values (${row.digest}, ${row.id}, ${row.account_id}, ${row.member_id},
                ${row.user_agent}, ${row.created_at}, ${row.expires_at})`
    })
    const revokeSession = SqlSchema.findAll({
      Request: DigestAt,
      Result: Schema.Struct({ account_id: Schema.String }),
      execute: ({ digest, at }) => sql`
        update dashboard_sessions set revoked_at = ${at}
        where digest = ${digest} and revoked_at is null
        returning account_id`
    })
    const endGraceKeys = SqlSchema.void({
      Request: AccountAt,
      execute: ({ accountId, at }) => sql`
        update api_keys set revoked_at = ${at}
        where account_id = ${accountId} and grace_until is not null and revoked_at is null`
    })
    const startGrace = SqlSchema.findAll({
      Request: Schema.Struct({ accountId: Schema.String, graceUntil: Schema.DateFromSelf }),
      Result: Schema.Struct({ last4: Schema.String }),
      execute: ({ accountId, graceUntil }) => sql`
        update api_keys set grace_until = ${graceUntil}
        where account_id = ${accountId} and grace_until is null and revoked_at is null
        returning last4`
    })
    const insertApiKey = SqlSchema.void({
      Request: ApiKeyRow,
      execute: (row) => sql`
        insert into api_keys (digest, account_id, environment, last4, created_at)
        values (${row.digest}, ${row.account_id}, ${row.environment}, ${row.last4}, ${row.created_at})`
    })
    const revokeKeys = SqlSchema.findAll({
      Request: AccountAt,
      Result: Schema.Struct({ last4: Schema.String }),
      execute: ({ accountId, at }) => sql`
        update api_keys set revoked_at = ${at}
        where account_id = ${accountId} and revoked_at is null
        returning last4`
    })
    const liveKeys = SqlSchema.findAll({
      Request: AccountAt,
      Result: LiveKey,
      execute: ({ accountId, at }) => sql`
        select last4, created_at, grace_until from api_keys
        where account_id = ${accountId} and revoked_at is null and (grace_until is null or grace_until > ${at})`
    })
    const liveKeyByDigest = SqlSchema.findOne({
      Request: DigestAt,
      Result: Schema.Struct({
        account_id: Schema.String,
        digest: Schema.Uint8ArrayFromSelf,
        last4: Schema.String,
        grace_until: Schema.NullOr(Schema.DateFromSelf)
      }),
      execute: ({ digest, at }) => sql`
        select account_id, digest, last4, grace_until from api_keys
        where digest = ${digest} and revoked_at is null and (grace_until is null or grace_until > ${at})`
    })
    const liveSessionByDigest = SqlSchema.findOne({
      Request: DigestAt,
      Result: SessionRow.pipe(Schema.pick("id", "account_id", "member_id", "digest", "expires_at")),
      execute: ({ digest, at }) => sql`
        select s.id, s.account_id, s.member_id, s.digest, s.expires_at from dashboard_sessions s
        where s.digest = ${digest} and s.revoked_at is null and s.expires_at > ${at}
          -- A session begun while its member was being removed must not outlive the removal.
          and (s.member_id is null or exists (
            select 1 from members m where m.id = s.member_id and m.removed_at is null))`
    })

    const create = Effect.fn("Accounts.create")(function* (name: string) {
      const at = yield* now
      const row = yield* insertAccount({
        id: ids.next(),
        name,
        environment: config.serviceEnv,
        created_at: at
      })
      return toAccount(row)
    }, Effect.orDie)

    // Untraced: a span costs about ten times the memory read that answers nearly every call.
    const get = Effect.fnUntraced(function* (accountId: string) {
      const known = accounts.get(accountId)
      if (known !== undefined) return Option.some(known)
      const found = Option.map(yield* accountById(accountId), toAccount)
      if (Option.isSome(found)) accounts.set(accountId, found.value)
      return found
    }, Effect.orDie)

    const createSession = Effect.fn("Accounts.createSession")(function* (
      accountId: string,
      options: SessionOptions = {}
    ) {
      const at = yield* now
      const token = newSecret(SESSION_PREFIX)
      const id = ids.next()
      const expiresAt = new Date(at.getTime() + (options.ttlMs ?? SESSION_TTL_MS))
      yield* insertSession({
        digest: digestOf(token),
        id,
        account_id: accountId,
        member_id: options.memberId ?? null,
        user_agent: options.userAgent?.slice(0, 256) ?? null,
        created_at: at,
        expires_at: expiresAt
      })
      return { token, id, expiresAt }
    }, Effect.orDie)

    const endSession = Effect.fn("Accounts.endSession")(function* (token: string) {
      const at = yield* now
      const ended = yield* revokeSession({ digest: digestOf(token), at })
      for (const row of ended) yield* cache.changed(row.account_id)
    }, Effect.orDie)

    // Issuing replaces the active key; the replaced one keeps working for the grace period, and any older
    // grace key ends now, so at most two keys work at any time.
    const issueApiKey = Effect.fn("Accounts.issueApiKey")(function* (accountId: string) {
      const issued = yield* sql.withTransaction(
        Effect.gen(function* () {
          const at = yield* now
          yield* sql`select id from accounts where id = ${accountId} for update`
          yield* endGraceKeys({ accountId, at })
          const graceUntil = new Date(at.getTime() + API_KEY_GRACE_MS)
          const replaced = yield* startGrace({ accountId, graceUntil })
          const apiKey = newSecret(keyPrefix)
          const last4 = apiKey.slice(-4)
          yield* insertApiKey({
            digest: digestOf(apiKey),
            account_id: accountId,
            environment: config.serviceEnv,
            last4,
            created_at: at
          })
          return {
            apiKey,
            last4,
            createdAt: at,
            previousKeyValidUntil: replaced.length > 0 ? graceUntil : null
          } satisfies IssuedKey
        })
      )
      yield* cache.changed(accountId)
      return issued
    }, Effect.orDie)

    /** Revocation is immediate and ends the grace key too. */
    const revokeApiKeys = Effect.fn("Accounts.revokeApiKeys")(function* (accountId: string) {
      const at = yield* now
      const rows = yield* revokeKeys({ accountId, at })
      yield* cache.changed(accountId)
      return rows.length
    }, Effect.orDie)

    const keyInfo = Effect.fn("Accounts.keyInfo")(function* (accountId: string) {
      const at = yield* now
      const rows = yield* liveKeys({ accountId, at })
      const active = rows.find((r) => r.grace_until === null)
      const previous = rows.find((r) => r.grace_until !== null)
      return {
        active: active ? { last4: active.last4, createdAt: active.created_at } : null,
        previous: previous?.grace_until ? { last4: previous.last4, validUntil: previous.grace_until } : null
      } satisfies KeyInfo
    }, Effect.orDie)

    /**
     * Resolves a bearer credential. Every failure is the same `None`: the caller must not learn whether a key was
     * unknown, revoked, expired or of the other environment. Untraced: every authenticated request runs it, and a
     * span per call costs more than the cache hit that usually answers it.
     */
    const authenticate = Effect.fnUntraced(function* (credential: string) {
      const key = digestHexOf(credential)
      const at = yield* now
      const nowMs = at.getTime()
      const cached = yield* cache.lookup(key, nowMs)
      if (cached !== undefined) return Option.some<Identity>(cached)
      const digest = Buffer.from(key, "hex")
      const remember = (identity: Identity, until: Date | null) =>
        Effect.as(
          cache.remember(key, {
            identity,
            validUntilMs: until?.getTime() ?? Number.POSITIVE_INFINITY,
            cachedAtMs: nowMs
          }),
          Option.some(identity)
        )
      if (credential.startsWith(keyPrefix)) {
        const row = Option.getOrUndefined(yield* liveKeyByDigest({ digest, at }))
        return row && sameDigest(row.digest, digest)
          ? yield* remember(
              {
                accountId: row.account_id,
                via: "api_key",
                memberId: null,
                sessionId: null,
                keyLast4: row.last4
              },
              row.grace_until
            )
          : Option.none<Identity>()
      }
      if (credential.startsWith(SESSION_PREFIX)) {
        const row = Option.getOrUndefined(yield* liveSessionByDigest({ digest, at }))
        return row && sameDigest(row.digest, digest)
          ? yield* remember(
              { accountId: row.account_id, via: "session", memberId: row.member_id, sessionId: row.id },
              row.expires_at
            )
          : Option.none<Identity>()
      }
      return Option.none<Identity>()
    }, Effect.orDie)

    return {
      create,
      get,
      createSession,
      endSession,
      issueApiKey,
      revokeApiKeys,
      keyInfo,
      authenticate
    } as const
  }),
  dependencies: [CredentialCache.Default, Ids.Default]
}) {}
