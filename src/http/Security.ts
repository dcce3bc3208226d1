import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Context, Schema } from "effect"
import type { Identity } from "../../services/merchants/Identity"
import { RateLimited, Unauthenticated } from "./Errors"

/**
 * The contract's side of authentication: what the routes declare (a bearer credential, the errors it may give,
 * the identity it provides). Its implementation lives in src/http/middleware/Authentication.ts, so the contract, and the
 * typed clients derived from it, carry nothing of the server's.
 */

/** The caller of a merchant route, provided to every handler behind `Authentication`. */
export class CurrentIdentity extends Context.Tag("deposits/CurrentIdentity")<CurrentIdentity, Identity>() {}

/**
 * Bearer authentication for merchant routes: an API key or a dashboard session, full account authority. API-key
 * traffic also spends the account's rate-limit token and every answer to it carries the rate-limit headers.
 */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("deposits/Authentication", {
  failure: Schema.Union(Unauthenticated, RateLimited),
  provides: CurrentIdentity,
  security: { bearer: HttpApiSecurity.bearer }
}) {}
