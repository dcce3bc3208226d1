import { Context, type Effect } from "effect"

/** How much of an answer's body each attempt keeps for the delivery log (characters, after UTF-8 decoding). */
export const RESPONSE_BODY_KEPT = 4096

/** How one delivery attempt ended. */
export interface DeliveryOutcome {
  readonly ok: boolean
  readonly status?: number | undefined
  readonly errorKind?:
    | "timeout"
    | "connection"
    | "dns"
    | "ssrf_refused"
    | "redirect_refused"
    | "non_2xx"
    | "tls"
    | undefined
  readonly errorMessage?: string | undefined
  /** The start of the answer's body (RESPONSE_BODY_KEPT characters at most), when an answer came. */
  readonly responseBody?: string | undefined
  /** True when the answer's body was longer than `responseBody`. */
  readonly responseTruncated?: boolean | undefined
  readonly durationMs: number
}

/**
 * Sends one signed POST to a merchant's endpoint: the port the dispatcher uses. Its one implementation is
 * `HttpsWebhookSender.ts` (`WebhookSenderLive`), which re-checks the URL rules (HTTPS, public addresses only, the
 * connection pinned to the checked address, no redirects, timeouts, capped response); tests supply fakes.
 */
export class WebhookSender extends Context.Tag("deposits/WebhookSender")<
  WebhookSender,
  {
    readonly send: (request: {
      readonly url: string
      readonly headers: Record<string, string>
      readonly body: string
    }) => Effect.Effect<DeliveryOutcome>
  }
>() {}
