import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import { InvalidRequest } from "../api/Errors"
import { AppConfig } from "../Config"

const held = new Map<string, number>()

export interface LongPollRequest {
  readonly wait_for?: "change" | undefined
  readonly version?: string | undefined
  readonly timeout: number
}

const noStore = <A>(wire: A): A | HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(wire, { headers: { "cache-control": "no-store" } })

/**
 * The shared long-poll policy of every read that offers `wait_for=change`: the known version is required, the
 * hold is the client's timeout less up to 10% jitter (so a crowd of pollers does not reconnect in lockstep), a
 * client address holds a bounded number of polls (past it a poll is a plain read: the client polls again, nobody
 * is refused), and the answer is never cached.
 */
export const longPoll = <A, E, R, E2, R2>(
  params: LongPollRequest,
  readNow: Effect.Effect<Option.Option<A>, E, R>,
  waitFor: (known: string, timeoutMs: number) => Effect.Effect<Option.Option<A>, E2, R2>
) =>
  Effect.gen(function* () {
    if (params.wait_for !== "change") {
      return Option.map(yield* readNow, (wire): A | HttpServerResponse.HttpServerResponse => wire)
    }
    if (params.version === undefined) {
      return yield* new InvalidRequest({
        message: "wait_for=change needs the `version` you already have.",
        param: "version"
      })
    }
    const request = yield* HttpServerRequest.HttpServerRequest
    const address = request.remoteAddress._tag === "Some" ? request.remoteAddress.value : "unknown"
    const holding = held.get(address) ?? 0
    if (holding >= (yield* AppConfig).longPollMaxPerAddress) return Option.map(yield* readNow, noStore)
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
    return Option.map(result, noStore)
  })
