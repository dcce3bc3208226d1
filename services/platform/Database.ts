import { PgClient } from "@effect/sql-pg"
import { Config, Effect, Layer, Option, Redacted } from "effect"
import { migrate } from "../../infra/migrations"
import { embeddedPaths, serveEmbeddedPostgres, socketAnswers } from "./EmbeddedPostgres"
import { dataDir, databaseUrl } from "./Settings"

// pg hands int8 and numeric back as strings, so amounts never pass through a float on the way in.

/** Runs the migrations in order; each is recorded in `effect_sql_migrations`. */
export { migrate }

/**
 * The SQL client: real PostgreSQL when `DATABASE_URL` is set, else the embedded PGlite under `DATA_DIR`,
 * served on a socket so both go through the same driver. Migrations run before anything else uses it.
 */
export const makeDatabaseLayer = (options: { readonly attachToRunningEmbedded: boolean }) =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const config = yield* Config.all({ dataDir, databaseUrl })
      const paths = embeddedPaths(config.dataDir)
      const attach =
        Option.isNone(config.databaseUrl) &&
        options.attachToRunningEmbedded &&
        (yield* Effect.promise(() => socketAnswers(paths.socketPath)))
      const client = Option.isSome(config.databaseUrl)
        ? PgClient.layer({ url: config.databaseUrl.value, maxConnections: 16 })
        : yield* Effect.map(
            attach ? Effect.succeed(paths) : serveEmbeddedPostgres(config.dataDir),
            (embedded) =>
              PgClient.layer({
                host: embedded.socketDir,
                port: 5432,
                database: "postgres",
                username: "postgres",
                // One connection: PGlite has one backend for all connections, and concurrent statements from several
                // connections interleave on it (seen: "portal does not exist"). The pool queues them instead.
                maxConnections: 1
              })
          )
      return Layer.effectDiscard(migrate).pipe(Layer.provideMerge(client))
    })
  )

/** The service owns the embedded database; a second process on the same DATA_DIR is refused. */
export const DatabaseLive = makeDatabaseLayer({ attachToRunningEmbedded: false })

/** The CLI goes through the socket of a running service, or opens the files itself when none runs. */
export const DatabaseForCliLive = makeDatabaseLayer({ attachToRunningEmbedded: true })

export const describeDatabase = (config: {
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  readonly dataDir: string
}) =>
  Option.match(config.databaseUrl, {
    onNone: () => `embedded PostgreSQL (PGlite) in ${config.dataDir}/pgdata`,
    onSome: (url) => {
      const parsed = new URL(Redacted.value(url))
      return `PostgreSQL at ${parsed.hostname}:${parsed.port || "5432"}${parsed.pathname}`
    }
  })
