import { Effect } from "effect"
import {
  type ConsumerDefinition,
  CONSUMERS,
  DUPLICATE_WINDOW_MS,
  STREAMS
} from "../../../infra/jetstream/Streams"
import type { EventStreamShape, StreamMessage } from "./Contract"

interface Stored {
  readonly seq: number
  readonly subject: string
  readonly data: string
  deliveries: number
}

interface Listener {
  readonly buffer: number
  readonly onMessage: (message: StreamMessage) => void
  inFlight: number
}

/**
 * The embedded defaults' stand-in for JetStream, with the same behaviour the service relies on: work-queue
 * streams, message-id dedupe within the window, durable consumers shared round-robin by their listeners, explicit
 * acks, `nak` with a delay, redelivery after the ack wait, and per-listener buffers. It lives and dies with the
 * process, so its epoch is the process's start: the relays publish again whatever PostgreSQL still holds open.
 */
export const makeInProcessStream = (): EventStreamShape => {
  const startedAt = Date.now()
  const seen = new Map<string, { seq: number; at: number }>()
  let seq = 0
  let lastPrune = startedAt
  const queues = new Map(
    CONSUMERS.map((c) => [
      c.name,
      { definition: c, ready: [] as Array<Stored>, listeners: [] as Array<Listener>, next: 0 }
    ])
  )
  const subjectMatches = (filter: string, subject: string) =>
    filter.endsWith(".*")
      ? subject.startsWith(filter.slice(0, -1)) && !subject.slice(filter.length - 1).includes(".")
      : filter === subject
  const streamOf = (subject: string) =>
    STREAMS.find((s) => s.subjects.some((f) => subjectMatches(f, subject)))

  /** Hands ready messages to listeners with room, round-robin. */
  const pump = (queue: NonNullable<ReturnType<typeof queues.get>>) => {
    while (queue.ready.length > 0) {
      const n = queue.listeners.length
      let listener: Listener | undefined
      for (let i = 0; i < n; i++) {
        const candidate = queue.listeners[(queue.next + i) % n]!
        if (candidate.inFlight < candidate.buffer) {
          listener = candidate
          queue.next = (queue.next + i + 1) % n
          break
        }
      }
      if (listener === undefined) return
      deliver(queue, listener, queue.ready.shift()!)
    }
  }

  const deliver = (queue: NonNullable<ReturnType<typeof queues.get>>, listener: Listener, stored: Stored) => {
    stored.deliveries += 1
    listener.inFlight += 1
    let settled = false
    const settle = () => {
      if (settled) return false
      settled = true
      clearTimeout(timer)
      listener.inFlight -= 1
      return true
    }
    const again = (delayMs: number) => {
      const back = () => {
        queue.ready.push(stored)
        queue.ready.sort((a, b) => a.seq - b.seq)
        pump(queue)
      }
      if (delayMs <= 0) back()
      else setTimeout(back, delayMs).unref()
    }
    let timer = setTimeout(() => {
      if (settle()) again(0)
    }, queue.definition.ackWaitMs)
    timer.unref()
    const message: StreamMessage = {
      subject: stored.subject,
      data: stored.data,
      seq: stored.seq,
      deliveries: stored.deliveries,
      ack: () => {
        if (settle()) pump(queue)
      },
      term: () => {
        if (settle()) pump(queue)
      },
      nak: (delayMs = 0) => {
        if (settle()) {
          again(delayMs)
          pump(queue)
        }
      },
      working: () => {
        if (settled) return
        clearTimeout(timer)
        timer = setTimeout(() => {
          if (settle()) again(0)
        }, queue.definition.ackWaitMs)
        timer.unref()
      }
    }
    listener.onMessage(message)
  }

  const publishOne = (subject: string, data: string, msgId: string) => {
    const now = Date.now()
    if (now - lastPrune > DUPLICATE_WINDOW_MS) {
      for (const [id, entry] of seen) if (now - entry.at > DUPLICATE_WINDOW_MS) seen.delete(id)
      lastPrune = now
    }
    const known = seen.get(msgId)
    if (known !== undefined && now - known.at <= DUPLICATE_WINDOW_MS) return known.seq
    if (streamOf(subject) === undefined) throw new Error(`no stream takes ${subject}`)
    seq += 1
    seen.set(msgId, { seq, at: now })
    for (const queue of queues.values()) {
      if (!subjectMatches(queue.definition.filterSubject, subject)) continue
      queue.ready.push({ seq, subject, data, deliveries: 0 })
      pump(queue)
      break
    }
    return seq
  }

  return {
    kind: "in-process",
    publish: (messages) => Effect.sync(() => messages.map((m) => publishOne(m.subject, m.data, m.msgId))),
    consume: (consumer: ConsumerDefinition, buffer, onMessage) =>
      Effect.acquireRelease(
        Effect.sync(() => {
          const queue = queues.get(consumer.name)!
          const listener: Listener = { buffer, onMessage, inFlight: 0 }
          queue.listeners.push(listener)
          pump(queue)
          return { queue, listener }
        }),
        ({ queue, listener }) =>
          Effect.sync(() => {
            queue.listeners = queue.listeners.filter((l) => l !== listener)
          })
      ).pipe(Effect.asVoid),
    epoch: () => Effect.succeed(startedAt)
  }
}
