/**
 * The public API's shapes the dashboard reads, taken from the generated contract (src/client/openapi.d.ts, from
 * the `HttpApi` by `npm run client:types`), never written out again: a field the contract renames or drops fails
 * `npm run typecheck` where the dashboard reads it. Amounts are base-unit strings.
 */
import type { components, paths } from "../../../client/openapi"

type Schemas = components["schemas"]
type Method = "get" | "post" | "put" | "patch" | "delete"
type Json<R> = R extends { readonly content: { readonly "application/json": infer B } } ? B : never

/** What a route answers on success (200, 201 or 202), as the contract says: `Answer<"/v1/account", "get">`. */
export type Answer<P extends keyof paths, M extends Method> = paths[P][M] extends {
  readonly responses: infer R
}
  ? Json<R[Extract<keyof R, 200 | 201 | 202>]>
  : never

export type Account = Schemas["Account"]
export type DepositRequest = Schemas["DepositRequest"]
/** The creation answer: a request, with the merchant-session secret once (that policy only). */
export type CreatedDepositRequest = Answer<"/v1/deposit-requests", "post">
export type DepositRequestList = Schemas["DepositRequestList"]
export type Transfer = Schemas["Transfer"]
export type Recovery = Schemas["Recovery"]
export type VerificationAttempt = Schemas["VerificationAttempt"]
export type Attachment = Schemas["Attachment"]
/** Any event, told apart by `type`; `data` names the request, or the endpoint for `webhook.test`. */
export type ApiEvent = Schemas["Event"]
export type WebhookEndpoint = Schemas["WebhookEndpoint"]
/** The registration answer: an endpoint, with its signing secret once. */
export type CreatedWebhookEndpoint = Answer<"/v1/webhooks", "post">
export type RotatedWebhookEndpoint = Answer<"/v1/webhooks/{id}/rotate-secret", "post">
export type Delivery = Schemas["WebhookDelivery"]
/** One attempt with the request it sent (the event's bytes, the headers) and the start of the answer. */
export type DeliveryDetail = Schemas["WebhookDeliveryDetail"]
export type Member = Schemas["Member"]
export type NoticePreferences = Schemas["NoticePreferences"]
export type Invite = Schemas["Invite"]
export type SessionInfo = Schemas["SessionInfo"]
export type Passkey = Schemas["Passkey"]
export type AuditEntry = Schemas["AuditEntry"]
/** What every sign-in answers: the session, the member and the account. */
export type SignedIn = Answer<"/v1/sign-in/link", "post">
