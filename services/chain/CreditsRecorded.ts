import { Effect, Queue } from "effect"

/**
 * The watcher's word to the relay that it recorded credits (or marked some reorganised): the relay publishes at
 * once instead of at its next poll. One pending word is enough (a sliding queue of one), since the relay then
 * reads everything unpublished. In-process only: a relay on another instance finds the rows at its next poll.
 */
export class CreditsRecorded extends Effect.Service<CreditsRecorded>()("deposits/CreditsRecorded", {
  effect: Effect.gen(function* () {
    const words = yield* Queue.sliding<void>(1)
    return {
      /** Says that there is something to publish. */
      notify: Effect.fn("CreditsRecorded.notify")(function* () {
        yield* words.offer(undefined)
      }),
      /** Returns once something was recorded since the last `next`. */
      next: Effect.fn("CreditsRecorded.next")(function* () {
        yield* Queue.take(words)
      })
    } as const
  })
}) {}
