import type { IncomingMessage } from "node:http"

export const KiB = 1024

/** Body limits per route: key management 16 KiB, payer writes 8 KiB, every other merchant body 64 KiB. */
export const bodyLimitFor = (path: string): number => {
  if (path === "/v1/account/api-key" || path.startsWith("/v1/account/api-key/")) return 16 * KiB
  if (path.startsWith("/v1/payer/")) return 8 * KiB
  return 64 * KiB
}

// Past this we stop draining an oversized upload and drop the connection instead of reading it for nothing.
const DRAIN_CAP = 1024 * KiB

export type BodyRead =
  | { readonly _tag: "Body"; readonly text: string }
  | { readonly _tag: "TooLarge"; readonly drained: boolean }
  | { readonly _tag: "Aborted" }

/**
 * Reads a body counting bytes as they arrive, so an oversized body is refused before it is parsed (and before it
 * is all read). A modest overage is drained so the client reads the 413 cleanly; a huge one is cut off.
 */
export const readBody = (source: IncomingMessage, limit: number): Promise<BodyRead> =>
  new Promise((resolve) => {
    const chunks: Array<Buffer> = []
    let bytes = 0
    let over = false
    const done = (result: BodyRead) => {
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onError)
      source.off("aborted", onError)
      resolve(result)
    }
    const onData = (chunk: Buffer) => {
      bytes += chunk.length
      if (!over && bytes > limit) {
        over = true
        chunks.length = 0
      }
      if (over) {
        if (bytes > DRAIN_CAP) done({ _tag: "TooLarge", drained: false })
        return
      }
      chunks.push(chunk)
    }
    const onEnd = () =>
      done(
        over
          ? { _tag: "TooLarge", drained: true }
          : { _tag: "Body", text: Buffer.concat(chunks).toString("utf8") }
      )
    const onError = () => done({ _tag: "Aborted" })
    source.on("data", onData)
    source.once("end", onEnd)
    source.once("error", onError)
    source.once("aborted", onError)
  })
