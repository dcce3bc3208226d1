import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Exit, Option, Schema } from "effect"
import type { OutgoingHttpHeaders, ServerResponse } from "node:http"
import { ChangeFeed } from "../../../services/platform/ChangeFeed"
import { headersOf, InvalidRequest, NotFound, statusOf } from "../Errors"
import type { ResourceName } from "../../../services/domain/PrefixedId"
import { ApiSettings } from "./ApiSettings"
import { errorBody, logUnexpected, unexpectedError } from "./ErrorBody"
import { LongPollRegistry, type Parked } from "./LongPollRegistry"
import { captureFrameworkAnswer } from "./PlatformAdapter"

export interface LongPollRequest {
  readonly wait_for?: "change" | undefined
  readonly version?: string | undefined
  readonly timeout: number
}

/** What a versioned read offers for `wait_for=change`. */
export interface Poll<A extends { readonly version: string }, I, E> {
  /**
   * What wakes the poll. A request's uuid: its change notices, subscribed before the first read. Or, for a read
   * whose requests are known only once read (a list page), a subscription made after it: it subscribes `wake`
   * and returns its cancel, then checks that nothing changed since the read, calling `wake` itself if something did.
   */
  readonly wakeOn:
    | { readonly _tag: "Request"; readonly uuid: string }
    | {
        readonly _tag: "AfterRead"
        readonly subscribe: (first: A, wake: () => void) => Effect.Effect<() => void, E>
      }
  /** The resource now, as the route returns it. */
  readonly read: Effect.Effect<Option.Option<A>, E>
  /** The resource after a wake; may be one read shared by every poll woken by the same change. */
  readonly readAfter: Effect.Effect<Option.Option<A>, E>
  /** The route's success schema: a parked answer is encoded exactly as the route would encode it. */
  readonly schema: Schema.Schema<A, I>
  readonly resource: ResourceName
}

const noStore = <A>(wire: A): A | HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(wire, { headers: { "cache-control": "no-store" } })

interface Rendered {
  readonly status: number
  readonly headers?: Readonly<Record<string, string>>
  readonly body: string
}

/**
 * A long poll parked outside the HTTP fiber. The fiber answers an empty placeholder that is captured here, not
 * sent (its headers — request id, CORS, rate limit — are kept for the real answer), and ends; what is left while
 * the poll waits is this object, its change-feed callback and its timer. Ten thousand held polls then cost about
 * what a bare `node:http` server holding them costs, not ten thousand suspended fibers.
 */
class ParkedPoll implements Parked {
  headers: OutgoingHttpHeaders | undefined
  pending: Rendered | undefined
  placeholderSent = false
  finished = false
  woken = false
  parkedNow = false
  timer: ReturnType<typeof setTimeout> | undefined
  unsubscribe: () => void = () => {}

  render: () => Promise<Rendered> = () => Promise.resolve({ status: 204, body: "" })

  constructor(
    readonly res: ServerResponse,
    readonly address: string,
    readonly registry: LongPollRegistry
  ) {}

  /** The change-feed callback: registered before the first read, so a change in between is not missed. */
  readonly wake = () => {
    this.woken = true
    if (this.parkedNow) this.finish()
  }

  park(timeoutMs: number) {
    captureFrameworkAnswer(
      this.res,
      (headers) => {
        this.headers = headers
      },
      () => {
        this.placeholderSent = true
        if (this.pending !== undefined) this.send(this.pending)
      }
    )
    this.parkedNow = true
    this.res.once("close", this.abandon)
    this.timer = setTimeout(() => this.finish(), timeoutMs)
    // A registry that is closing takes no new poll: it is answered at once, like a woken one.
    if (!this.registry.park(this) || this.woken) this.finish()
  }

  /** The client went away: nothing to answer, only to forget. */
  readonly abandon = () => {
    if (this.finished) return
    this.finished = true
    this.forget()
  }

  forget() {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.unsubscribe()
    this.registry.release(this.address)
    this.registry.unpark(this)
  }

  /** A change, the timeout or a closing instance: answer with the resource as it now is. */
  readonly finish = () => {
    if (this.finished) return
    this.finished = true
    this.forget()
    this.render().then((rendered) => {
      if (this.placeholderSent) this.send(rendered)
      else this.pending = rendered
    })
  }

  send(rendered: Rendered) {
    const res = this.res
    this.res.off("close", this.abandon)
    if (res.destroyed || res.writableEnded) return
    // Once the instance is closing, every answer ends its connection, however the poll was finished (the request
    // began before the close, so it would otherwise keep the connection alive for the client's next poll, which
    // no handler would be left to answer).
    if (this.registry.closing()) res.shouldKeepAlive = false
    const {
      "content-length": _length,
      "content-type": _type,
      "cache-control": _cache,
      ...kept
    } = this.headers ?? {}
    res.writeHead(rendered.status, {
      ...kept,
      ...rendered.headers,
      "content-type": "application/json",
      "content-length": Buffer.byteLength(rendered.body),
      "cache-control": "no-store"
    })
    res.end(rendered.body)
  }
}

const requestIdOf = (poll: ParkedPoll) => String(poll.headers?.["x-request-id"] ?? "")

/**
 * The answer of a woken poll: the resource as the route encodes it, or the error envelope. A top-level function,
 * so the closure it returns keeps only these arguments, not the request fiber's scope.
 */
const renderAfterWake =
  <A, I, E>(
    readAfter: Effect.Effect<Option.Option<A>, E>,
    schema: Schema.Schema<A, I>,
    resource: ResourceName,
    poll: ParkedPoll,
    base: string
  ) =>
  (): Promise<Rendered> =>
    Effect.runPromise(
      readAfter.pipe(
        Effect.flatMap(
          Option.match({
            onNone: () =>
              Effect.succeed({
                status: 404,
                body: JSON.stringify(errorBody(NotFound.of(resource), requestIdOf(poll), base))
              }),
            onSome: (wire) =>
              Effect.map(Schema.encode(schema)(wire), (encoded) => ({
                status: 200,
                body: JSON.stringify(encoded)
              }))
          })
        ),
        // The read after a wake or the timeout meets the same failures as any read: the database away is a 503
        // with its Retry-After, as every other route answers it, not a 500.
        Effect.catchAllCause((cause) => {
          const error = unexpectedError(cause)
          return Effect.as(logUnexpected(cause, requestIdOf(poll)), {
            status: statusOf(error),
            headers: headersOf(error),
            body: JSON.stringify(errorBody(error, requestIdOf(poll), base))
          })
        })
      )
    )

/**
 * The shared long-poll policy of every read that offers `wait_for=change`: the known version is required, the
 * hold is the client's timeout less up to 10% jitter (so a crowd of pollers does not reconnect in lockstep), a
 * client address holds a bounded number of polls (past it a poll is a plain read: the client polls again, nobody
 * is refused), and the answer is never cached. A poll that has to wait is parked outside its fiber.
 */
export const longPoll = <A extends { readonly version: string }, I, E>(
  params: LongPollRequest,
  poll: Poll<A, I, E>
) =>
  Effect.gen(function* () {
    if (params.wait_for !== "change") {
      return Option.map(yield* poll.read, (wire): A | HttpServerResponse.HttpServerResponse => wire)
    }
    if (params.version === undefined) {
      return yield* new InvalidRequest({
        message: "wait_for=change needs the `version` you already have.",
        param: "version"
      })
    }
    const request = yield* HttpServerRequest.HttpServerRequest
    const address = request.remoteAddress._tag === "Some" ? request.remoteAddress.value : "unknown"
    const { longPollMaxPerAddress: maxPerAddress, publicBaseUrl } = yield* ApiSettings
    const feed = yield* ChangeFeed
    const registry = yield* LongPollRegistry
    // Counted before the first read, not after it: a burst of polls would otherwise all pass the check while
    // their reads are under way. Every way out but parking gives the place back; a parked poll gives it back when
    // it is answered.
    if (!registry.take(address, maxPerAddress)) return Option.map(yield* poll.read, noStore)

    const waiter = new ParkedPoll(NodeHttpServerRequest.toServerResponse(request), address, registry)
    waiter.render = renderAfterWake(poll.readAfter, poll.schema, poll.resource, waiter, publicBaseUrl)
    const wakeOn = poll.wakeOn
    // Subscribed before the read, so a change committed in between wakes the poll.
    if (wakeOn._tag === "Request") waiter.unsubscribe = feed.subscribe(wakeOn.uuid, waiter.wake)
    const giveBack = Effect.sync(() => {
      waiter.unsubscribe()
      registry.release(address)
    })
    const first = yield* poll.read.pipe(
      Effect.onExit((exit) =>
        Exit.isSuccess(exit) && Option.isSome(exit.value) && exit.value.value.version === params.version
          ? Effect.void
          : giveBack
      )
    )
    if (Option.isNone(first) || first.value.version !== params.version) return Option.map(first, noStore)
    if (wakeOn._tag === "AfterRead") {
      waiter.unsubscribe = yield* wakeOn
        .subscribe(first.value, waiter.wake)
        .pipe(Effect.onError(() => giveBack))
    }
    waiter.park(Math.round(params.timeout * 1000 * (1 - Math.random() * 0.1)))
    // The placeholder the framework "sends"; the parked poll keeps its headers and answers later.
    return Option.some<A | HttpServerResponse.HttpServerResponse>(HttpServerResponse.empty({ status: 200 }))
  })
