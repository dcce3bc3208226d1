import { HttpApiBuilder } from "@effect/platform"
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server"
import { Effect, Layer, Option } from "effect"
import { toId, uuidFromId } from "../../../services/domain/PrefixedId"
import { Members } from "../../../services/merchants/Members"
import { type PasskeyNotVerified, Passkeys } from "../../../services/merchants/Passkeys"
import { SignInAttempts } from "../../../services/merchants/SignInAttempts"
import { Api } from "../Api"
import { requireSession } from "../middleware/Authentication"
import { requireSecureSignIn } from "../middleware/SignInTransport"
import { InvalidRequest, NotFound } from "../Errors"
import { signedInWire } from "../SignIn/Http"
import { afterChange } from "../middleware/AuditTrail"

const WHAT = "Passkeys"

/** The one answer to every passkey that did not verify: the caller learns nothing of why. */
const notVerified = (refused: PasskeyNotVerified) =>
  Effect.zipRight(
    Effect.logInfo("passkey not verified").pipe(
      Effect.annotateLogs({ reason: refused.reason, detail: refused.detail ?? "" })
    ),
    Effect.fail(new InvalidRequest({ message: "The passkey could not be verified.", param: "response" }))
  )

const toPasskey = (passkey: { id: string; name: string; createdAt: Date; lastUsedAt: Date | null }) => ({
  id: toId("pk", passkey.id),
  name: passkey.name,
  created_at: passkey.createdAt,
  last_used_at: passkey.lastUsedAt
})

/** The calling session's member; a session of the operator's CLI has none. */
const callingMember = Effect.flatMap(requireSession(WHAT), (identity) =>
  identity.memberId === null
    ? Effect.fail(NotFound.of("member"))
    : Effect.succeed({ accountId: identity.accountId, memberId: identity.memberId })
)

export const PasskeysLive = HttpApiBuilder.group(Api, "passkeys", (handlers) =>
  Effect.gen(function* () {
    const passkeys = yield* Passkeys
    return handlers
      .handle("registrationOptions", () =>
        Effect.gen(function* () {
          const { accountId, memberId } = yield* callingMember
          const started = yield* passkeys.registrationOptions(accountId, memberId)
          return { challenge_id: started.challengeId, options: { ...started.options } }
        })
      )
      .handle("register", ({ payload }) =>
        Effect.gen(function* () {
          const { accountId, memberId } = yield* callingMember
          const passkey = yield* passkeys
            .register(accountId, memberId, {
              challengeId: payload.challenge_id,
              name: payload.name,
              // Shaped by the request schema; the readonly arrays are the only difference from the library's type.
              response: payload.response as unknown as RegistrationResponseJSON
            })
            .pipe(
              Effect.catchTag("PasskeyNotVerified", notVerified),
              afterChange("passkey.added", (p) => toId("pk", p.id))
            )
          return toPasskey(passkey)
        })
      )
      .handle("list", () =>
        Effect.gen(function* () {
          const identity = yield* requireSession(WHAT)
          const own = identity.memberId === null ? [] : yield* passkeys.list(identity.memberId)
          return { passkeys: own.map(toPasskey), next_cursor: null }
        })
      )
      .handle("remove", ({ path }) =>
        Effect.gen(function* () {
          const identity = yield* requireSession(WHAT)
          const uuid = uuidFromId("pk", path.id)
          if (uuid === undefined || identity.memberId === null) return yield* NotFound.of("passkey")
          yield* passkeys.remove(identity.memberId, uuid).pipe(afterChange("passkey.removed", () => path.id))
        })
      )
  })
)

/**
 * Each request of a passkey sign-in is an attempt of kind `passkey` against the client's limit: the options (a
 * challenge handed out, recorded as `sent`) and the answer (`signed_in` or `refused: <why>`). No address is known
 * before the passkey is checked, so the per-address limit of wrong codes does not stop a passkey: a member whose
 * address someone floods with wrong codes can still sign in with one.
 */
export const PasskeySignInLive = HttpApiBuilder.group(Api, "passkeySignIn", (handlers) =>
  Effect.gen(function* () {
    const passkeys = yield* Passkeys
    const members = yield* Members
    const attempts = yield* SignInAttempts
    return handlers
      .handle("options", () =>
        Effect.gen(function* () {
          const { client } = yield* requireSecureSignIn
          const attempt = yield* attempts.take("passkey", { client })
          const started = yield* passkeys.signInOptions()
          yield* attempts.settle(attempt, "sent")
          return { challenge_id: started.challengeId, options: { ...started.options } }
        })
      )
      .handle("signIn", ({ payload }) =>
        Effect.gen(function* () {
          const { client, userAgent } = yield* requireSecureSignIn
          const attempt = yield* attempts.take("passkey", { client })
          const signedIn = yield* passkeys
            .signIn({
              challengeId: payload.challenge_id,
              response: payload.response as unknown as AuthenticationResponseJSON
            })
            .pipe(
              Effect.tapErrorTag("PasskeyNotVerified", (refused) =>
                attempts.settle(
                  attempt,
                  { refused: refused.reason },
                  { memberId: refused.memberId ?? null, email: refused.email ?? null }
                )
              ),
              Effect.catchTag("PasskeyNotVerified", notVerified)
            )
          const session = yield* members.sessionForMember(signedIn.accountId, signedIn.memberId, {
            client,
            userAgent
          })
          // The member was live a moment ago; gone now means removed meanwhile, which verifies nothing.
          if (Option.isNone(session)) {
            yield* attempts.settle(attempt, { refused: "member_removed" }, { memberId: signedIn.memberId })
            return yield* new InvalidRequest({
              message: "The passkey could not be verified.",
              param: "response"
            })
          }
          yield* attempts.settle(attempt, "signed_in", { memberId: signedIn.memberId, email: signedIn.email })
          return signedInWire(session.value)
        })
      )
  })
).pipe(Layer.provide(SignInAttempts.Default))
