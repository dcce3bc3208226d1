/**
 * infra/sql/schema.sql: what an empty database looks like after every migration, as pg_dump prints it.
 *
 *   npm run schema:write   writes it (after adding a migration or changing a file in infra/sql/functions)
 *   npm run schema:check   fails with the diff when the migrations produce anything else (CI runs it)
 *
 * Both create a scratch database on the PostgreSQL the tests use (`TEST_DATABASE_ADMIN_URL`, else the machine's
 * on 127.0.0.1:5432), run the migrations through the service's migrator, dump the schema and drop the database.
 * test/integration/schemaFile.test.ts uses the same functions.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { execFile } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { promisify } from "node:util"
import pg from "pg"
import { migrate } from "../migrations"

export const schemaPath = fileURLToPath(new URL("../sql/schema.sql", import.meta.url))

const adminUrl = () => process.env.TEST_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

const run = promisify(execFile)

const adminQuery = (text: string) =>
  Effect.promise(async () => {
    const client = new pg.Client({ connectionString: adminUrl() })
    await client.connect()
    try {
      return await client.query(text)
    } finally {
      await client.end()
    }
  })

/** An empty database of its own, dropped when the scope closes. Answers its URL. */
export const scratchDatabase = Effect.acquireRelease(
  Effect.gen(function* () {
    const name = `schema_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
    yield* adminQuery(`create database ${name}`)
    const url = new URL(adminUrl())
    url.pathname = `/${name}`
    return { name, url: url.toString() }
  }),
  ({ name }) => adminQuery(`drop database if exists ${name} with (force)`).pipe(Effect.orDie)
).pipe(Effect.map(({ url }) => url))

/** Runs every migration on the database at `url`, as the service does at start-up. */
export const migrateDatabase = (url: string) =>
  migrate.pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })), Effect.orDie)

/** A scratch database with every migration applied, dropped when the scope closes. */
export const migratedScratchDatabase = Effect.tap(scratchDatabase, migrateDatabase)

/** The pg_dump of the server's major version when Debian's layout has it (pg_dump refuses newer servers). */
const pgDumpFor = (url: string) =>
  Effect.promise(async () => {
    if (process.env.PG_DUMP) return process.env.PG_DUMP
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      const { rows } = await client.query<{ v: string }>("select current_setting('server_version_num') as v")
      const debian = `/usr/lib/postgresql/${Math.floor(Number(rows[0]!.v) / 10_000)}/bin/pg_dump`
      return existsSync(debian) ? debian : "pg_dump"
    } finally {
      await client.end()
    }
  })

/**
 * pg_dump's output made deterministic: without the server's and pg_dump's exact versions, the `\restrict` lines
 * (a random key per dump since 15.14) and the session settings (`SET …`, `set_config`) a restore starts with; runs
 * of blank lines collapse to one. A header names pg_dump's major version, whose output the file is.
 */
export const normaliseDump = (dump: string, pgDumpMajor: string): string => {
  const kept = dump
    .split("\n")
    .filter(
      (line) =>
        !/^\\(un)?restrict /.test(line) &&
        !/^-- Dumped (from database|by pg_dump) version /.test(line) &&
        !/^SET /.test(line) &&
        !/^SELECT pg_catalog\.set_config\(/.test(line)
    )
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim()
  return [
    `-- An empty database after every migration in infra/migrations: pg_dump ${pgDumpMajor} --schema-only`,
    "-- --no-owner --no-privileges, normalised by infra/tooling/schema.ts. Not edited by hand: written by",
    "-- `npm run schema:write`, and `npm run schema:check` (CI) fails when the migrations make anything else.",
    "",
    kept,
    ""
  ].join("\n")
}

/** The normalised schema-only dump of the database at `url`. */
export const dumpSchema = (url: string) =>
  Effect.gen(function* () {
    const pgDump = yield* pgDumpFor(url)
    const version = yield* Effect.promise(() => run(pgDump, ["--version"]))
    const major = /\(PostgreSQL\) (\d+)/.exec(version.stdout)?.[1] ?? "unknown"
    const dump = yield* Effect.promise(() =>
      run(pgDump, ["--schema-only", "--no-owner", "--no-privileges", `--dbname=${url}`], {
        maxBuffer: 64 * 1024 * 1024
      })
    )
    return normaliseDump(dump.stdout, major)
  })

/** The normalised schema of a scratch database after every migration (the database is dropped afterwards). */
export const migratedSchema = Effect.scoped(Effect.flatMap(migratedScratchDatabase, dumpSchema))

export type SchemaComparison = { readonly same: true } | { readonly same: false; readonly diff: string }

/** A text's lines; the newline ending the last one does not start another. */
const linesOf = (text: string): ReadonlyArray<string> =>
  text === "" ? [] : text.replace(/\n$/, "").split("\n")

/** Compares the committed schema with a dump; when they differ, a unified diff (committed `-`, migrated `+`). */
export const compareSchema = (committed: string, migrated: string): SchemaComparison =>
  committed === migrated
    ? { same: true }
    : {
        same: false,
        diff: unifiedDiff(linesOf(committed), linesOf(migrated), "infra/sql/schema.sql", "migrated database")
      }

type Op = { readonly kind: " " | "-" | "+"; readonly line: string }

/** The lines' edit script: common prefix and suffix kept, the longest common subsequence of the middle. */
const editScript = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): ReadonlyArray<Op> => {
  let start = 0
  while (start < a.length && start < b.length && a[start] === b[start]) start++
  let endA = a.length
  let endB = b.length
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--
    endB--
  }
  const ma = a.slice(start, endA)
  const mb = b.slice(start, endB)
  const middle: Array<Op> = []
  if (ma.length * mb.length > 25_000_000) {
    for (const line of ma) middle.push({ kind: "-", line })
    for (const line of mb) middle.push({ kind: "+", line })
  } else {
    const width = mb.length + 1
    const common = new Uint32Array((ma.length + 1) * width)
    for (let i = ma.length - 1; i >= 0; i--)
      for (let j = mb.length - 1; j >= 0; j--)
        common[i * width + j] =
          ma[i] === mb[j]
            ? common[(i + 1) * width + j + 1]! + 1
            : Math.max(common[(i + 1) * width + j]!, common[i * width + j + 1]!)
    let i = 0
    let j = 0
    while (i < ma.length || j < mb.length) {
      if (i < ma.length && j < mb.length && ma[i] === mb[j]) {
        middle.push({ kind: " ", line: ma[i++]! })
        j++
      } else if (
        i < ma.length &&
        (j === mb.length || common[(i + 1) * width + j]! >= common[i * width + j + 1]!)
      )
        middle.push({ kind: "-", line: ma[i++]! })
      else middle.push({ kind: "+", line: mb[j++]! })
    }
  }
  return [
    ...a.slice(0, start).map((line): Op => ({ kind: " ", line })),
    ...middle,
    ...a.slice(endA).map((line): Op => ({ kind: " ", line }))
  ]
}

const unifiedDiff = (
  a: ReadonlyArray<string>,
  b: ReadonlyArray<string>,
  nameA: string,
  nameB: string,
  context = 3
): string => {
  const ops = editScript(a, b)
  const out = [`--- ${nameA}`, `+++ ${nameB}`]
  // Where each op starts in a and in b (1-based line numbers).
  const lineA: Array<number> = []
  const lineB: Array<number> = []
  let na = 1
  let nb = 1
  for (const op of ops) {
    lineA.push(na)
    lineB.push(nb)
    if (op.kind !== "+") na++
    if (op.kind !== "-") nb++
  }
  let k = 0
  while (k < ops.length) {
    if (ops[k]!.kind === " ") {
      k++
      continue
    }
    const from = Math.max(0, k - context)
    let to = k
    // Extend the hunk while the next change is within two contexts of the last.
    for (let next = k; next < ops.length; next++)
      if (ops[next]!.kind !== " ") {
        if (next - to > 2 * context) break
        to = next
      }
    const end = Math.min(ops.length, to + context + 1)
    const hunk = ops.slice(from, end)
    const countA = hunk.filter((op) => op.kind !== "+").length
    const countB = hunk.filter((op) => op.kind !== "-").length
    // An empty side names the line before it (as `diff -u` does).
    const startA = countA === 0 ? lineA[from]! - 1 : lineA[from]!
    const startB = countB === 0 ? lineB[from]! - 1 : lineB[from]!
    out.push(`@@ -${startA},${countA} +${startB},${countB} @@`)
    for (const op of hunk) out.push(`${op.kind}${op.line}`)
    k = end
  }
  return out.join("\n")
}

const invokedDirectly =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href

if (invokedDirectly) {
  const mode = process.argv[2]
  if (mode !== "write" && mode !== "check") {
    console.error("usage: tsx infra/tooling/schema.ts write|check")
    process.exit(2)
  }
  const migrated = await Effect.runPromise(migratedSchema)
  if (mode === "write") {
    writeFileSync(schemaPath, migrated)
    console.log(`wrote infra/sql/schema.sql (${migrated.split("\n").length} lines)`)
  } else {
    const committed = existsSync(schemaPath) ? readFileSync(schemaPath, "utf8") : ""
    const comparison = compareSchema(committed, migrated)
    if (comparison.same) console.log("infra/sql/schema.sql is what the migrations make")
    else {
      console.error(comparison.diff)
      console.error(
        "\ninfra/sql/schema.sql is not what the migrations make of an empty database. If the change is meant, " +
          "run `npm run schema:write` and commit the file (a changed function file also needs a migration that " +
          "applies it: infra/migrations/storedFunctions.ts)."
      )
      process.exitCode = 1
    }
  }
}
