import { Duration, Effect, Fiber, Option } from "effect"
import type { AuditAction, AuditClient } from "../../../services/merchants/AuditLog"
import { AuditLog } from "../../../services/merchants/AuditLog"
import type { Identity } from "../../../services/merchants/Identity"
import { SecurityNotices } from "../../../services/merchants/SecurityNotices"
import { AnswerHeaders, CurrentIdentity } from "./Authentication"
import { requestClient, type SignInClient } from "./SignInTransport"

/**
 * The audit log's side of the routes (infra/decisions/0076-audit-log-and-security-notices.md): who (the
 * credential's member, key or operator), from where (client address, User-Agent, request id), then the security
 * notice of the entry, sent after the commit on a fiber of its own so a failing relay never touches the change,
 * and a slow one holds the answer at most `NOTICE_WAIT`.
 */

const actorOf = (identity: Identity) =>
  identity.via === "api_key"
    ? { kind: "api_key" as const, id: identity.keyLast4 ?? null }
    : identity.memberId === null
      ? { kind: "operator" as const, id: null }
      : { kind: "member" as const, id: identity.memberId }

const clientOf = (who: SignInClient) =>
  Effect.map(
    Effect.serviceOption(AnswerHeaders),
    (headers): AuditClient => ({
      address: who.client,
      userAgent: who.userAgent ?? null,
      requestId: Option.getOrNull(Option.flatMapNullable(headers, (h) => h["x-request-id"]))
    })
  )

/** How long an answer waits for its notices; past it they go on without it. */
export const NOTICE_WAIT = Duration.seconds(5)

// The answer waits for the notices (so a member who reads their mail next finds them), but never for a slow relay.
const notify = (entry: Parameters<SecurityNotices["sendQuietly"]>[0]) =>
  Effect.gen(function* () {
    const notices = yield* SecurityNotices
    const sending = yield* Effect.forkDaemon(notices.sendQuietly(entry))
    yield* Fiber.await(sending).pipe(Effect.timeout(NOTICE_WAIT), Effect.ignore)
  })

/** Records a change an identity made, then sends its notice: for changes already committed by their service. */
export const recordChange = (
  identity: Identity,
  who: SignInClient,
  action: AuditAction,
  targetId: string | null
) =>
  Effect.gen(function* () {
    const log = yield* AuditLog
    const entry = yield* log.record({
      accountId: identity.accountId,
      actor: actorOf(identity),
      action,
      targetId,
      client: yield* clientOf(who)
    })
    yield* notify(entry)
    return entry
  })

/**
 * The calling credential's change, recorded right after it (its service acts after its own commit: mail, cache
 * drops, which must not run before the commit they follow).
 */
export const afterChange =
  <A>(action: AuditAction, targetOf: (a: A) => string | null) =>
  <E, R>(change: Effect.Effect<A, E, R>) =>
    Effect.gen(function* () {
      const identity = yield* CurrentIdentity
      const who = yield* requestClient
      const a = yield* change
      yield* recordChange(identity, who, action, targetOf(a))
      return a
    })

/** The calling credential's change and its entry in one transaction (a SQL write with nothing acted on after it). */
export const withChange =
  <A>(action: AuditAction, targetOf: (a: A) => string | null) =>
  <E, R>(change: Effect.Effect<A, E, R>) =>
    Effect.gen(function* () {
      const identity = yield* CurrentIdentity
      const client = yield* clientOf(yield* requestClient)
      const log = yield* AuditLog
      const [a, entry] = yield* log.recorded(change, (a) => ({
        accountId: identity.accountId,
        actor: actorOf(identity),
        action,
        targetId: targetOf(a),
        client
      }))
      yield* notify(entry)
      return a
    })
