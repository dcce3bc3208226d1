import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Data, Effect } from "effect"
import { existsSync, mkdirSync, rmSync } from "node:fs"
import { connect } from "node:net"
import { resolve } from "node:path"

export class EmbeddedPostgresError extends Data.TaggedError("EmbeddedPostgresError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/** Where the embedded database keeps its files and its socket, below DATA_DIR. */
export const embeddedPaths = (dataDir: string) => {
  const root = resolve(dataDir)
  const socketDir = resolve(root, "run")
  return { pgdata: resolve(root, "pgdata"), socketDir, socketPath: resolve(socketDir, ".s.PGSQL.5432") }
}

/** True when a process already serves the embedded database on its socket (the service, for the CLI). */
export const socketAnswers = (socketPath: string): Promise<boolean> =>
  new Promise((done) => {
    if (!existsSync(socketPath)) return done(false)
    const socket = connect(socketPath)
    socket.once("connect", () => {
      socket.destroy()
      done(true)
    })
    socket.once("error", () => done(false))
  })

/**
 * PGlite served on a Unix socket, so the same `pg` driver and `@effect/sql-pg` client talk to it as to a real
 * server. One process owns the files; others (the CLI) connect through the socket.
 */
export const serveEmbeddedPostgres = (dataDir: string) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const paths = embeddedPaths(dataDir)
        if (await socketAnswers(paths.socketPath)) {
          throw new Error(`another process already serves the embedded database at ${paths.socketPath}`)
        }
        mkdirSync(paths.pgdata, { recursive: true })
        mkdirSync(paths.socketDir, { recursive: true })
        rmSync(paths.socketPath, { force: true })
        const db = await PGlite.create(paths.pgdata)
        // Above the pool size: PGlite closes connections beyond the limit instead of queueing them.
        const server = new PGLiteSocketServer({ db, path: paths.socketPath, maxConnections: 64 })
        await server.start()
        return { db, server, ...paths }
      },
      catch: (cause) =>
        new EmbeddedPostgresError({
          message: `cannot start the embedded database: ${cause instanceof Error ? cause.message : String(cause)}`,
          cause
        })
    }),
    ({ db, server, socketPath }) =>
      Effect.promise(async () => {
        await server.stop().catch(() => undefined)
        await db.close().catch(() => undefined)
        rmSync(socketPath, { force: true })
      })
  )
