import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
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

type AccountRow = { id: string; name: string; environment: ServiceEnv; created_at: Date }
const toAccount = (row: AccountRow): Account => ({
  id: row.id,
  name: row.name,
  environment: row.environment,
  createdAt: row.created_at
})

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

    const create = Effect.fn("Accounts.create")(function* (name: string) {
      const at = yield* now
      const rows = yield* sql<AccountRow>`
        insert into accounts (id, name, environment, created_at)
        values (${ids.next()}, ${name}, ${config.serviceEnv}, ${at})
        returning id, name, environment, created_at`
      return toAccount(rows[0]!)
    }, Effect.orDie)

    // Untraced: a span costs about ten times the memory read that answers nearly every call.
    const get = Effect.fnUntraced(function* (accountId: string) {
      const known = accounts.get(accountId)
      if (known !== undefined) return Option.some(known)
      const rows =
        yield* sql<AccountRow>`select id, name, environment, created_at from accounts where id = ${accountId}`
      const found = Option.map(Option.fromNullable(rows[0]), toAccount)
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
      yield* sql`
        insert into dashboard_sessions (digest, id, account_id, member_id, user_agent, created_at, expires_at)
        values (${digestOf(token)}, ${id}, ${accountId}, ${options.memberId ?? null},
                ${options.userAgent?.slice(0, 256) ?? null}, ${at}, ${expiresAt})`
      return { token, id, expiresAt }
    }, Effect.orDie)

    const endSession = Effect.fn("Accounts.endSession")(function* (token: string) {
      const at = yield* now
      const ended = yield* sql<{ account_id: string }>`
        update dashboard_sessions set revoked_at = ${at}
        where digest = ${digestOf(token)} and revoked_at is null
        returning account_id`
      for (const row of ended) yield* cache.changed(row.account_id)
    }, Effect.orDie)

    // Issuing replaces the active key; the replaced one keeps working for the grace period, and any older
    // grace key ends now, so at most two keys work at any time.
    const issueApiKey = Effect.fn("Accounts.issueApiKey")(function* (accountId: string) {
      const issued = yield* sql.withTransaction(
        Effect.gen(function* () {
          const at = yield* now
          yield* sql`select id from accounts where id = ${accountId} for update`
          yield* sql`
            update api_keys set revoked_at = ${at}
            where account_id = ${accountId} and grace_until is not null and revoked_at is null`
          const graceUntil = new Date(at.getTime() + API_KEY_GRACE_MS)
          const replaced = yield* sql`
            update api_keys set grace_until = ${graceUntil}
            where account_id = ${accountId} and grace_until is null and revoked_at is null
            returning last4`
          const apiKey = newSecret(keyPrefix)
          const last4 = apiKey.slice(-4)
          yield* sql`
            insert into api_keys (digest, account_id, environment, last4, created_at)
            values (${digestOf(apiKey)}, ${accountId}, ${config.serviceEnv}, ${last4}, ${at})`
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
      const rows = yield* sql`
        update api_keys set revoked_at = ${at}
        where account_id = ${accountId} and revoked_at is null
        returning last4`
      yield* cache.changed(accountId)
      return rows.length
    }, Effect.orDie)

    const keyInfo = Effect.fn("Accounts.keyInfo")(function* (accountId: string) {
      const at = yield* now
      const rows = yield* sql<{ last4: string; created_at: Date; grace_until: Date | null }>`
        select last4, created_at, grace_until from api_keys
        where account_id = ${accountId} and revoked_at is null and (grace_until is null or grace_until > ${at})`
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
        const rows = yield* sql<{ account_id: string; digest: Uint8Array; grace_until: Date | null }>`
          select account_id, digest, grace_until from api_keys
          where digest = ${digest} and revoked_at is null and (grace_until is null or grace_until > ${at})`
        const row = rows[0]
        return row && sameDigest(row.digest, digest)
          ? yield* remember(
              { accountId: row.account_id, via: "api_key", memberId: null, sessionId: null },
              row.grace_until
            )
          : Option.none<Identity>()
      }
      if (credential.startsWith(SESSION_PREFIX)) {
        const rows = yield* sql<{
          id: string
          account_id: string
          member_id: string | null
          digest: Uint8Array
          expires_at: Date
        }>`
          select s.id, s.account_id, s.member_id, s.digest, s.expires_at from dashboard_sessions s
          where s.digest = ${digest} and s.revoked_at is null and s.expires_at > ${at}
            -- A session begun while its member was being removed must not outlive the removal.
            and (s.member_id is null or exists (
              select 1 from members m where m.id = s.member_id and m.removed_at is null))`
        const row = rows[0]
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
  dependencies: [CredentialCache.Default, Ids.layer]
}) {}
