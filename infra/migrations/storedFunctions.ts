import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { readdirSync, readFileSync } from "node:fs"

/**
 * The stored functions' current definitions: one file each, `infra/sql/functions/<name>.sql`, holding one
 * `create or replace function` statement with its settings (`create or replace` resets those it does not name).
 * Migration 0031 applies every file; the migrations before it keep the versions deployments ran then.
 *
 * How to change one:
 * - a body or setting: edit the file and add a migration that runs `applyFunctionFiles(["<name>"])`, so databases
 *   migrated already get it (a new database gets the file's text at 0031 already, and again at that migration);
 * - its arguments or result type: a new name (as `apply_actor_steps_v2`), since `create or replace` cannot change
 *   them, and the running build may still call the old one during a deploy;
 * - a function dropped: delete its file, and drop it with `drop function if exists` in the new migration.
 * PL/pgSQL bodies are checked for syntax only when created, so a body may name what a later migration adds.
 * Then `npm run schema:write` (infra/sql/schema.sql shows the change).
 *
 * Run from source, the files are read from disk. `npm run build` inlines the same files into the bundle
 * (esbuild `define`, infra/tooling/build.mjs): the service image ships `.build/` without `infra/`.
 */
declare const BUNDLED_SQL_FUNCTIONS: Readonly<Record<string, string>> | undefined

const functionsDirectory = new URL("../sql/functions/", import.meta.url)

const readFunctionFiles = (): Readonly<Record<string, string>> =>
  Object.fromEntries(
    readdirSync(functionsDirectory)
      .filter((file) => file.endsWith(".sql"))
      .sort()
      .map((file) => [file.slice(0, -".sql".length), readFileSync(new URL(file, functionsDirectory), "utf8")])
  )

/** Every function file's statement, by the function's name, in name order. */
export const functionFiles = (): Readonly<Record<string, string>> =>
  typeof BUNDLED_SQL_FUNCTIONS !== "undefined" ? BUNDLED_SQL_FUNCTIONS : readFunctionFiles()

/** Runs the named function files' statements (every file when no names are given), in name order. */
export const applyFunctionFiles = (names?: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const files = functionFiles()
    const missing = (names ?? []).filter((name) => !(name in files))
    if (missing.length > 0) return yield* Effect.dieMessage(`no infra/sql/functions/${missing[0]}.sql`)
    for (const [name, statement] of Object.entries(files))
      if (names === undefined || names.includes(name)) yield* sql.unsafe(statement)
  })
