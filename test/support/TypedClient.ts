import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../src/http/Api"
import type { Merchant } from "./Merchant"
import type { RunningService } from "./Service"

/**
 * The client derived from the `HttpApi` itself, signed in as the merchant with its API key: every call is typed
 * by the contract, and every answer is decoded by the contract's own schemas (an answer that drifts from the
 * schema fails the call).
 */
export const typedMerchantClient = (service: RunningService, merchant: Merchant) =>
  HttpApiClient.make(Api, {
    baseUrl: service.baseUrl,
    transformClient: HttpClient.mapRequest(
      HttpClientRequest.setHeader("authorization", merchant.headers("api_key").authorization ?? "")
    )
  }).pipe(Effect.provide(FetchHttpClient.layer))
