/**
 * The payer routes' shapes, taken from the generated contract (src/client/openapi.d.ts): a field the contract
 * renames or drops fails `npm run typecheck` where the checkout reads it.
 */
import type { components, paths } from "../../../client/openapi"

/** The payer read of a deposit request, as every payer route answers it. */
export type PayerRead = components["schemas"]["PayerDepositRequest"]

type Json<R> = R extends { readonly content: { readonly "application/json": infer B } } ? B : never
type Payer = "/v1/payer/deposit-requests/{id}"

/** The payer's steps, by their path below the request. */
export type PayerStep = {
  [P in keyof paths]: P extends `${Payer}${infer Step}` ? (Step extends "" ? never : Step) : never
}[keyof paths]

type StepOperation<S extends PayerStep> = paths[`${Payer}${S}`]["post"]

/** The JSON a step takes (`{}` for a step that takes none). */
export type StepBody<S extends PayerStep> =
  StepOperation<S> extends { readonly requestBody: infer B } ? Json<B> : Record<string, never>

/** What a step answers on success. */
export type StepAnswer<S extends PayerStep> =
  StepOperation<S> extends { readonly responses: infer R } ? Json<R[Extract<keyof R, 200 | 202>]> : never
