import type { IncomingMessage } from "node:http"
import { Effect } from "effect"

export const KiB = 1024

/**
 * Body limits per route: the account's own routes (keys, sessions, members) 16 KiB, payer writes and sign-in 8 KiB,
 * every other merchant body 64 KiB.
 */
export const bodyLimitFor = (path: string): number => {
  if (path === "/v1/account" || path.startsWith("/v1/account/")) return 16 * KiB
  if (path.startsWith("/v1/payer/") || path.startsWith("/v1/sign-in/")) return 8 * KiB
  return 64 * KiB
}

// Past this we stop draining an oversized upload and drop the connection instead of reading it for nothing.
const DRAIN_CAP = 1024 * KiB

// Fatal: invalid UTF-8 is refused, not silently turned into U+FFFD (the spec's text is UTF-8).
const utf8 = new TextDecoder("utf-8", { fatal: true })

export type BodyRead =
  | { readonly _tag: "Body"; readonly text: string }
  | { readonly _tag: "NotUtf8" }
  | { readonly _tag: "TooLarge"; readonly drained: boolean }
  | { readonly _tag: "Aborted" }

/**
 * One body being read: its state and its listeners in one object per request.
 */
class BodyReader {
  private readonly chunks: Array<Buffer> = []
  private bytes = 0
  private over = false
  private readonly onData: (chunk: Buffer) => void
  private readonly onEnd: () => void
  private readonly onError: () => void

  constructor(
    private readonly source: IncomingMessage,
    private readonly limit: number,
    private readonly resolve: (result: BodyRead) => void
  ) {
    this.onData = (chunk) => this.data(chunk)
    this.onEnd = () => this.end()
    this.onError = () => this.done({ _tag: "Aborted" })
    source.on("data", this.onData)
    source.once("end", this.onEnd)
    source.once("error", this.onError)
    source.once("aborted", this.onError)
  }

  private data(chunk: Buffer) {
    this.bytes += chunk.length
    if (!this.over && this.bytes > this.limit) {
      this.over = true
      this.chunks.length = 0
    }
    if (this.over) {
      if (this.bytes > DRAIN_CAP) this.done({ _tag: "TooLarge", drained: false })
      return
    }
    this.chunks.push(chunk)
  }

  private end() {
    if (this.over) return this.done({ _tag: "TooLarge", drained: true })
    let text: string
    try {
      text = utf8.decode(Buffer.concat(this.chunks))
    } catch {
      return this.done({ _tag: "NotUtf8" })
    }
    this.done({ _tag: "Body", text })
  }

  private done(result: BodyRead) {
    this.source.off("data", this.onData)
    this.source.off("end", this.onEnd)
    this.source.off("error", this.onError)
    this.source.off("aborted", this.onError)
    this.resolve(result)
  }
}

/**
 * Reads a body counting bytes as they arrive, so an oversized body is refused before it is parsed (and before it
 * is all read). A modest overage is drained so the client reads the 413 cleanly; a huge one is cut off. An Effect
 * resumed by the reader itself (no Promise in between: one microtask hop less per request).
 */
export const readBody = (source: IncomingMessage, limit: number): Effect.Effect<BodyRead> =>
  Effect.async<BodyRead>((resume) => {
    new BodyReader(source, limit, (result) => resume(Effect.succeed(result)))
  })
