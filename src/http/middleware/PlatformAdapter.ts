import type { HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import type { OutgoingHttpHeaders, ServerResponse } from "node:http"

/**
 * The two places where the service reaches under @effect/platform's public API, kept here and nowhere else.
 * `test/integration/platformAdapter.test.ts` fails if the platform's behaviour changes under either.
 */

/**
 * Hands the body the edge read (and counted against the route's limit) to the platform's reader, which caches
 * the text it reads in `textEffect`: the router then decodes these bytes instead of a stream already consumed.
 * The platform offers no public way to give a request a body that was read before it.
 */
export const primeBody = (request: HttpServerRequest.HttpServerRequest, text: string) => {
  ;(request as unknown as { textEffect: Effect.Effect<string> }).textEffect = Effect.succeed(text)
}

/**
 * Takes a request's answer away from the framework, so a long poll can wait outside its fiber: the framework's
 * placeholder answer (one `writeHead` and one `end`) is captured, not sent, and its headers (request id, CORS, rate
 * limit) handed to `onCaptured`; the framework's own "close" listener, which only interrupts the request fiber that
 * is ending anyway, is dropped so that fiber can be collected. Ten thousand held polls then cost about what a bare
 * `node:http` server holding them costs, not ten thousand suspended fibers.
 */
export const captureFrameworkAnswer = (
  res: ServerResponse,
  onCaptured: (headers: OutgoingHttpHeaders) => void,
  onPlaceholderEnded: () => void
) => {
  let headers: OutgoingHttpHeaders = {}
  res.writeHead = function (this: ServerResponse, _status: number, written?: unknown) {
    headers = (written ?? {}) as OutgoingHttpHeaders
    return this
  } as ServerResponse["writeHead"]
  res.end = function (this: ServerResponse, ...args: Array<unknown>) {
    // Back to Node's own methods for the real answer.
    delete (res as Partial<ServerResponse>).writeHead
    delete (res as Partial<ServerResponse>).end
    onCaptured(headers)
    const callback = args.find((a) => typeof a === "function") as (() => void) | undefined
    callback?.()
    onPlaceholderEnded()
    return this
  } as ServerResponse["end"]
  res.removeAllListeners("close")
}
