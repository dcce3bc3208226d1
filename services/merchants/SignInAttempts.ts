import ipaddr from "ipaddr.js"
import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Config, Effect, Schema } from "effect"
import type { ServiceEnv } from "../domain/Environment"
import { HttpsRequired, RateLimited } from "../domain/Errors"
import { Ids } from "../platform/Ids"
import { positiveInteger } from "../platform/Settings"
import { orDieOnStorage } from "../platform/SqlFailure"

/** What a sign-in attempt tried (the `kind` column of `sign_in_attempts`). */
export const SignInKind = Schema.Literal(
  "email_send",
  "email_code",
  "email_link",
  "invite",
  "passkey",
  "sign_up"
)
export type SignInKind = typeof SignInKind.Type

/**
 * How an attempt ended: `sent` (a code was mailed), `signed_in`, `previewed` (a link's or an invitation's
 * confirmation page was shown), or refused with why. An attempt never settled
 * stays `pending` and counts as refused.
 */
export type SignInOutcome = "sent" | "signed_in" | "previewed" | { readonly refused: string }

/** One recorded attempt, taken before its check runs. */
export interface SignInAttempt {
  readonly id: string
  readonly kind: SignInKind
  readonly email: string | null
  readonly client: string
}

/**
 * The limits (infra/decisions/0059-members-and-sign-in.md, 0074-sign-in-codes-and-forwarded-links.md), each over a
 * sliding window: codes mailed per address and attempts of any kind per client address (`SIGN_IN_WINDOW_SECONDS`);
 * refused proofs (a code guessed wrong) per address and client, and per address, over a day
 * (`SIGN_IN_REFUSAL_WINDOW_SECONDS`). Past the pair's ceiling that client waits; past the address's, even the right
 * code does. The address's ceiling is what bounds the odds of guessing a code: 25 a day over a million codes.
 */
export const signInLimits = Config.all({
  signInMailsPerAddress: positiveInteger("SIGN_IN_MAILS_PER_ADDRESS", 5),
  signInRefusalsPerAddressClient: positiveInteger("SIGN_IN_REFUSALS_PER_ADDRESS_CLIENT", 5),
  signInRefusalsPerAddress: positiveInteger("SIGN_IN_REFUSALS_PER_ADDRESS", 25),
  signInAttemptsPerClient: positiveInteger("SIGN_IN_ATTEMPTS_PER_CLIENT", 30),
  signInWindowSeconds: positiveInteger("SIGN_IN_WINDOW_SECONDS", 15 * 60),
  signInRefusalWindowSeconds: positiveInteger("SIGN_IN_REFUSAL_WINDOW_SECONDS", 24 * 60 * 60)
})
export type SignInLimits = Config.Config.Success<typeof signInLimits>

const outcomeText = (outcome: SignInOutcome) =>
  typeof outcome === "string" ? outcome : `refused: ${outcome.refused}`

/** How many attempts a window counted, and when the oldest of them was. */
const WindowCount = Schema.Struct({ n: Schema.Number, oldest: Schema.NullOr(Schema.DateFromSelf) })
const AttemptRow = Schema.Struct({
  id: Schema.String,
  kind: SignInKind,
  email: Schema.NullOr(Schema.String),
  client: Schema.String,
  at: Schema.DateFromSelf
})

/** Seconds until the oldest counted attempt leaves the window (at least one). */
const retryAfter = (oldest: Date, windowMs: number, nowMs: number) =>
  Math.max(1, Math.ceil((oldest.getTime() + windowMs - nowMs) / 1000))

/**
 * Every sign-in attempt, recorded before its check runs, and the limits that count them. `take` counts and records
 * in one transaction under advisory locks on the address and the client, so concurrent attempts cannot slip past a
 * limit between a count and a record; `settle` writes how it ended. The interface is small on purpose: every
 * sign-in route (email, link, invite, passkey) uses the same two calls.
 */
export class SignInAttempts extends Effect.Service<SignInAttempts>()("deposits/SignInAttempts", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ids = yield* Ids
    const settings = yield* signInLimits
    const limits = {
      mailsPerAddress: settings.signInMailsPerAddress,
      refusalsPerAddressClient: settings.signInRefusalsPerAddressClient,
      refusalsPerAddress: settings.signInRefusalsPerAddress,
      attemptsPerClient: settings.signInAttemptsPerClient,
      windowMs: settings.signInWindowSeconds * 1000,
      refusalWindowMs: settings.signInRefusalWindowSeconds * 1000
    }

    const byClientSince = SqlSchema.single({
      Request: Schema.Struct({ client: Schema.String, since: Schema.DateFromSelf }),
      Result: WindowCount,
      execute: ({ client, since }) => sql`
        select count(*)::int as n, min(at) as oldest from sign_in_attempts
        where client = ${client} and at > ${since}`
    })
    const sendsSince = SqlSchema.single({
      Request: Schema.Struct({ email: Schema.String, since: Schema.DateFromSelf }),
      Result: WindowCount,
      execute: ({ email, since }) => sql`
        select count(*)::int as n, min(at) as oldest from sign_in_attempts
        where email = ${email} and kind = 'email_send' and at > ${since}`
    })
    // Pending attempts count as refused: a burst of guesses is counted before any of them is checked.
    const refusalsSince = SqlSchema.single({
      Request: Schema.Struct({ email: Schema.String, since: Schema.DateFromSelf }),
      Result: WindowCount,
      execute: ({ email, since }) => sql`
        select count(*)::int as n, min(at) as oldest from sign_in_attempts
        where email = ${email} and kind <> 'email_send' and at > ${since}
          and (outcome = 'pending' or outcome like 'refused%')`
    })
    const pairRefusalsSince = SqlSchema.single({
      Request: Schema.Struct({ email: Schema.String, client: Schema.String, since: Schema.DateFromSelf }),
      Result: WindowCount,
      execute: ({ email, client, since }) => sql`
        select count(*)::int as n, min(at) as oldest from sign_in_attempts
        where email = ${email} and client = ${client} and kind <> 'email_send' and at > ${since}
          and (outcome = 'pending' or outcome like 'refused%')`
    })
    const insertPending = SqlSchema.void({
      Request: AttemptRow,
      execute: (row) => sql`
        insert into sign_in_attempts (id, kind, email, client, member_id, at, outcome)
        values (${row.id}, ${row.kind}, ${row.email}, ${row.client}, null, ${row.at}, 'pending')`
    })
    const writeOutcome = SqlSchema.void({
      Request: Schema.Struct({
        id: Schema.String,
        outcome: Schema.String,
        memberId: Schema.NullOr(Schema.String),
        email: Schema.NullOr(Schema.String)
      }),
      execute: ({ id, outcome, memberId, email }) => sql`
        update sign_in_attempts
        set outcome = ${outcome},
            member_id = coalesce(${memberId}::uuid, member_id),
            email = coalesce(${email}, email)
        where id = ${id}`
    })
    const limited = (message: string, oldest: Date | undefined, nowMs: number, windowMs = limits.windowMs) =>
      new RateLimited({
        message,
        retryAfterSeconds: oldest === undefined ? 1 : retryAfter(oldest, windowMs, nowMs)
      })

    /**
     * Takes an attempt: 429 `rate_limited` (with `Retry-After`) when the client, or the address for a mail or a
     * code, has used up its window; otherwise records it as pending and hands it back to be settled.
     */
    const take = Effect.fn("SignInAttempts.take")(function* (
      kind: SignInKind,
      who: { readonly email?: string | null; readonly client: string }
    ) {
      const email = who.email?.toLowerCase() ?? null
      const client = who.client
      return yield* sql
        .withTransaction(
          Effect.gen(function* () {
            const nowMs = yield* Clock.currentTimeMillis
            const at = new Date(nowMs)
            const since = new Date(nowMs - limits.windowMs)
            yield* sql`select pg_advisory_xact_lock(hashtext(${`sign_in:client:${client}`}))`
            if (email !== null)
              yield* sql`select pg_advisory_xact_lock(hashtext(${`sign_in:email:${email}`}))`
            const byClient = yield* byClientSince({ client, since })
            if (byClient.n >= limits.attemptsPerClient) {
              return yield* limited(
                "Too many sign-in attempts from this address; retry later.",
                byClient.oldest ?? undefined,
                nowMs
              )
            }
            if (email !== null && kind === "email_send") {
              // Every send request counts, mailed or not: the answer must not tell a member's address from another.
              const sends = yield* sendsSince({ email, since })
              if (sends.n >= limits.mailsPerAddress) {
                return yield* limited(
                  "Too many codes were sent to this address; retry later.",
                  sends.oldest ?? undefined,
                  nowMs
                )
              }
            } else if (email !== null) {
              // The pair first: one client's guesses hold back that client, never the owner elsewhere.
              const refusalsFrom = new Date(nowMs - limits.refusalWindowMs)
              const pair = yield* pairRefusalsSince({ email, client, since: refusalsFrom })
              if (pair.n >= limits.refusalsPerAddressClient) {
                return yield* limited(
                  "Too many wrong codes for this address from here; retry later, or use the link in the email.",
                  pair.oldest ?? undefined,
                  nowMs,
                  limits.refusalWindowMs
                )
              }
              const refusals = yield* refusalsSince({ email, since: refusalsFrom })
              if (refusals.n >= limits.refusalsPerAddress) {
                return yield* limited(
                  "Too many wrong codes for this address; retry later, or use the link in the email.",
                  refusals.oldest ?? undefined,
                  nowMs,
                  limits.refusalWindowMs
                )
              }
            }
            const id = ids.next()
            yield* insertPending({ id, kind, email, client, at })
            return { id, kind, email, client } satisfies SignInAttempt
          })
        )
        .pipe(orDieOnStorage)
    })

    /**
     * Writes how the attempt ended, with the member it signed in (or was for) and the address it turned out to
     * name (a link token or a passkey names its address only once it is checked).
     */
    const settle = Effect.fn("SignInAttempts.settle")(function* (
      attempt: SignInAttempt,
      outcome: SignInOutcome,
      known: { readonly memberId?: string | null; readonly email?: string | null } = {}
    ) {
      yield* writeOutcome({
        id: attempt.id,
        outcome: outcomeText(outcome),
        memberId: known.memberId ?? null,
        email: known.email?.toLowerCase() ?? null
      })
    }, Effect.orDie)

    return { take, settle, limits } as const
  }),
  dependencies: [Ids.Default]
}) {}

/** 127.0.0.0/8 and ::1, as IPv4, IPv6 or IPv4-mapped IPv6. */
export const isLoopback = (address: string): boolean => {
  if (!ipaddr.isValid(address)) return false
  const parsed = ipaddr.process(address)
  return parsed.range() === "loopback"
}

/** What the HTTPS rule looks at on a sign-in request. */
export interface SignInTransport {
  readonly environment: ServiceEnv
  /** The immediate peer's address (the socket's), never a header. */
  readonly peer: string
  /** True when the connection itself is TLS. */
  readonly encrypted: boolean
  /** `X-Forwarded-Proto`, if sent; trusted only from a loopback peer (a proxy on the same host). */
  readonly forwardedProto: string | undefined
  /** `X-Forwarded-For`, if sent; trusted only from a loopback peer. */
  readonly forwardedFor: string | undefined
}

/**
 * The HTTPS rule and the client a sign-in is counted against. Outside the sandbox a sign-in secret (code, token,
 * session) must not cross a network in clear: plain HTTP is allowed only from loopback itself. A loopback peer
 * speaking for someone else (`X-Forwarded-Proto`) is believed, and its `http` refused; a non-loopback peer's
 * headers are never believed. The client is the peer, or the proxy's last `X-Forwarded-For` hop behind a loopback
 * peer (otherwise every client behind a local proxy would share one limit).
 */
export const signInTransport = (
  transport: SignInTransport
): { readonly allowed: boolean; readonly client: string } => {
  const trusted = isLoopback(transport.peer)
  const forwardedClient = trusted ? transport.forwardedFor?.split(",").at(-1)?.trim() : undefined
  const client = forwardedClient !== undefined && forwardedClient !== "" ? forwardedClient : transport.peer
  if (transport.environment === "sandbox" || transport.encrypted) return { allowed: true, client }
  if (!trusted) return { allowed: false, client }
  const proto = transport.forwardedProto?.split(",")[0]?.trim().toLowerCase()
  return { allowed: proto === undefined || proto === "https", client }
}

export const httpsRequired = new HttpsRequired({
  message: "Sign in over HTTPS: this route does not accept plain HTTP from another host."
})
