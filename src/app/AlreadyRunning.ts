import { Effect, Option } from "effect"
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { join, resolve } from "node:path"
import { readEmbeddedChain } from "../../infra/chain/EmbeddedChain"
import { rpcEndpointsOf } from "../../services/chain/ChainSettings"
import { embeddedPaths, socketAnswers } from "../../services/platform/EmbeddedPostgres"
import type { AppConfigShape } from "./Config"

/**
 * A second `npm start` in the same folder, or on a port already taken, is refused before it starts anything, in one
 * line naming what runs (issue 48): started, it would have run a second anvil on the same state file, removed the
 * first one's `chain/node.json` on its way out, and died on the database socket with a stack.
 */

/** What a running service tells a second start in its DATA_DIR: written once its port is open, removed on stop. */
interface RunningService {
  readonly pid: number
  readonly url: string
  readonly started_at: string
}

const runningFile = (dataDir: string) => join(embeddedPaths(dataDir).socketDir, "service.json")

/** Leaves the note a second start reads, for as long as the scope is open. */
export const announceRunning = (dataDir: string, url: string, nowMs: number) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const note: RunningService = { pid: process.pid, url, started_at: new Date(nowMs).toISOString() }
      mkdirSync(embeddedPaths(dataDir).socketDir, { recursive: true })
      writeFileSync(runningFile(dataDir), JSON.stringify(note))
    }),
    () =>
      Effect.sync(() => {
        // Only its own: a start refused here never wrote one, and must not take the running one's away.
        if (readNote(dataDir)?.pid === process.pid) rmSync(runningFile(dataDir), { force: true })
      })
  )

const readNote = (dataDir: string): RunningService | undefined => {
  try {
    return JSON.parse(readFileSync(runningFile(dataDir), "utf8")) as RunningService
  } catch {
    return undefined
  }
}

const describeNote = (dataDir: string) => {
  const note = readNote(dataDir)
  return note === undefined ? "another `npm start`" : `\`npm start\` (pid ${note.pid}, ${note.url})`
}

const chainAnswers = async (rpcUrl: string) => {
  try {
    const res = await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      signal: AbortSignal.timeout(1_000)
    })
    return res.ok
  } catch {
    return false
  }
}

const portTaken = (host: string, port: number) =>
  new Promise<boolean>((done) => {
    const probe = createServer()
    probe.once("error", (e: NodeJS.ErrnoException) => done(e.code === "EADDRINUSE"))
    probe.listen(port, host, () => probe.close(() => done(false)))
  })

/** What answers on the port: this service's health route says which environment it serves. */
const whatAnswers = async (host: string, port: number) => {
  const origin = `http://${host.includes(":") ? `[${host}]` : host === "0.0.0.0" ? "127.0.0.1" : host}:${port}`
  try {
    const res = await fetch(`${origin}/v1/health`, { signal: AbortSignal.timeout(1_000) })
    const body = (await res.json()) as { environment?: unknown }
    return typeof body.environment === "string"
      ? `a deposits service (${body.environment})`
      : "another program"
  } catch {
    return "another program"
  }
}

/** The one line saying why this start would collide with a running one, if it would. */
export const alreadyRunning = (
  config: Pick<
    AppConfigShape,
    "dataDir" | "databaseUrl" | "serviceEnv" | "chainRpcUrl" | "chainRpcUrls" | "host" | "port"
  >
): Effect.Effect<Option.Option<string>> =>
  Effect.promise(async () => {
    const folder = resolve(config.dataDir)
    const sameFolder = `${describeNote(config.dataDir)} is already running in this folder (DATA_DIR=${folder})`
    const remedy = "stop it first, or give this one its own DATA_DIR"
    if (Option.isNone(config.databaseUrl) && (await socketAnswers(embeddedPaths(config.dataDir).socketPath)))
      return Option.some(`${sameFolder}, serving its embedded database: ${remedy}`)
    if (config.serviceEnv === "sandbox" && rpcEndpointsOf(config).length === 0) {
      const chain = readEmbeddedChain(config.dataDir)
      if (Option.isSome(chain) && (await chainAnswers(chain.value.rpc_url)))
        return Option.some(`${sameFolder}, serving its embedded chain at ${chain.value.rpc_url}: ${remedy}`)
    }
    if (config.port !== 0 && (await portTaken(config.host, config.port)))
      return Option.some(
        `port ${config.port} on ${config.host} is already in use by ${await whatAnswers(config.host, config.port)}: stop it first, or start this one with another PORT`
      )
    return Option.none()
  })
