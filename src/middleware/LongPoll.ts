import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { InvalidRequest } from "../api/Errors"

/** Concurrent long polls one client address may hold; past it a poll answers at once (plain polling). */
export const MAX_WAITERS_PER_ADDRESS = 200

const held = new Map<string, number>()

export interface LongPollRequest {
  readonly wait_for?: "change" | undefined
  readonly version?: string | undefined
  readonly timeout: number
}

/**
 * The shared long-poll policy of every read that offers `wait_for=change`: the known version is required, the
 * hold is the client's timeout less up to 10% jitter (so a crowd of pollers does not reconnect in lockstep), a
 * client address holds a bounded number of polls, and the answer is never cached.
 */
export const longPoll = <A, E, R>(
  params: LongPollRequest,
  readNow: Effect.Effect<A, E, R>,
  waitFor: (known: string, timeoutMs: number) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function* () {
    if (params.wait_for !== "change") return yield* readNow
    if (params.version === undefined) {
      return yield* new InvalidRequest({
        message: "wait_for=change needs the `version` you already have.",
        param: "version"
      })
    }
    const request = yield* HttpServerRequest.HttpServerRequest
    const address = request.remoteAddress._tag === "Some" ? request.remoteAddress.value : "unknown"
    const holding = held.get(address) ?? 0
    if (holding >= MAX_WAITERS_PER_ADDRESS) return yield* readNow
    const timeoutMs = Math.round(params.timeout * 1000 * (1 - Math.random() * 0.1))
    held.set(address, holding + 1)
    const result = yield* waitFor(params.version, timeoutMs).pipe(
      Effect.ensuring(
        Effect.sync(() => {
          const n = (held.get(address) ?? 1) - 1
          if (n <= 0) held.delete(address)
          else held.set(address, n)
        })
      )
    )
    return result
  })

/** Long-poll answers must not be cached by anything between the service and the client. */
export const noStore = (body: unknown) =>
  HttpServerResponse.unsafeJson(body, { status: 200, headers: { "cache-control": "no-store" } })
