import { PgClient } from "@effect/sql-pg"
import { Config, Effect, Layer, Option } from "effect"
import { dataDir, databaseUrl } from "../../services/platform/Settings"

/**
 * The CLI's SQL client, as `DatabaseForCliLive` builds it (services/platform/Database.ts) but with what only one
 * case needs loaded in that case: the embedded database's module (PGlite) when no `DATABASE_URL` is set, the
 * migrations once connected. One connection: a command writes a row or two.
 */
export const CliDatabase = Layer.unwrapScoped(
  Effect.gen(function* () {
    const config = yield* Config.all({ dataDir, databaseUrl })
    const client = yield* Option.match(config.databaseUrl, {
      onSome: (url) => Effect.succeed(PgClient.layer({ url, maxConnections: 1 })),
      onNone: () =>
        Effect.gen(function* () {
          const embedded = yield* Effect.promise(() => import("../../services/platform/EmbeddedPostgres"))
          const paths = embedded.embeddedPaths(config.dataDir)
          // Through the socket of a running `npm start`, or the files opened here when none runs.
          const served = (yield* Effect.promise(() => embedded.socketAnswers(paths.socketPath)))
            ? paths
            : yield* embedded.serveEmbeddedPostgres(config.dataDir)
          return PgClient.layer({
            host: served.socketDir,
            port: 5432,
            database: "postgres",
            username: "postgres",
            maxConnections: 1
          })
        })
    })
    const { migrate } = yield* Effect.promise(() => import("../../infra/migrations"))
    return Layer.effectDiscard(migrate).pipe(Layer.provideMerge(client))
  })
)
