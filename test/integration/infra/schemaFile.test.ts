import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import pg from "pg"
import { compareSchema, dumpSchema, migratedScratchDatabase, schemaPath } from "../../../infra/tooling/schema"

/**
 * infra/sql/schema.sql is what the migrations make of an empty database (`npm run schema:check` in CI runs the same
 * comparison), and that comparison notices a change on either side.
 */
const committed = () => readFileSync(schemaPath, "utf8")

const query = (url: string, text: string) =>
  Effect.promise(async () => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      return (await client.query(text)).rows
    } finally {
      await client.end()
    }
  })

describe("infra/sql/schema.sql", () => {
  it.effect("is exactly what the migrations make of an empty database", () =>
    Effect.gen(function* () {
      const url = yield* migratedScratchDatabase
      const comparison = compareSchema(committed(), yield* dumpSchema(url))
      assert.isTrue(comparison.same, comparison.same ? "" : comparison.diff)
    }).pipe(Effect.scoped)
  )

  it.effect(
    "differs, with the drift in the diff, once a migrated database has a column no migration made",
    () =>
      Effect.gen(function* () {
        const url = yield* migratedScratchDatabase
        yield* query(url, "alter table deposit_requests add column drift_probe text")
        const comparison = compareSchema(committed(), yield* dumpSchema(url))
        assert.isFalse(comparison.same)
        if (comparison.same) return
        // Only the added line (before the table's constraints, so with a comma): the rest matches.
        const changed = comparison.diff
          .split("\n")
          .slice(2)
          .filter((l) => l.startsWith("-") || l.startsWith("+"))
        assert.deepStrictEqual(changed, ["+    drift_probe text,"])
      }).pipe(Effect.scoped)
  )

  it("differs, with the drift in the diff, when the committed text was edited", () => {
    const text = committed()
    const edited = text.replace("SET enable_seqscan TO 'off'", "SET enable_seqscan TO 'on'")
    assert.notStrictEqual(edited, text)
    const comparison = compareSchema(edited, text)
    assert.isFalse(comparison.same)
    if (comparison.same) return
    assert.include(comparison.diff, "-    SET enable_seqscan TO 'on'\n+    SET enable_seqscan TO 'off'")
    assert.match(comparison.diff, /^@@ -\d+,7 \+\d+,7 @@$/m)
  })

  it.effect(
    "names each stored function of the schema with its file in infra/sql/functions, and no other",
    () =>
      Effect.gen(function* () {
        const url = yield* migratedScratchDatabase
        const functions = yield* query(
          url,
          "select p.proname from pg_proc p join pg_namespace n on n.oid = p.pronamespace " +
            "where n.nspname = 'public' order by 1"
        )
        const files = readdirSync(new URL("../../../infra/sql/functions/", import.meta.url))
          .filter((f) => f.endsWith(".sql"))
          .map((f) => f.slice(0, -".sql".length))
          .sort()
        assert.deepStrictEqual(
          functions.map((r) => r.proname),
          files
        )
      }).pipe(Effect.scoped)
  )
})
