import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { assert, describe, layer } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option, ParseResult, Redacted } from "effect"
import { migrateDatabase } from "../../../infra/tooling/schema"
import { Accounts } from "../../../services/merchants/Accounts"
import { AttachmentRows } from "../../../services/merchants/AttachmentRows"
import { Customers } from "../../../services/merchants/MerchantResources"
import { Members } from "../../../services/merchants/Members"
import { Bus } from "../../../services/platform/Bus"
import { Ids } from "../../../services/platform/Ids"
import { Mailer } from "../../../services/platform/Mailer"
import { createTestDatabase } from "../../support/Database"

// The merchants room reads its rows through SqlSchema: a column renamed or retyped under the service is a decode
// failure (a ParseError, raised as the room's infrastructure defect, so a 500 at the edge), never a row with an
// undefined field. Each test changes one table for its own duration only.

/** A migrated database of this file's own, and the room's services on it. */
const SqlLive = Layer.unwrapScoped(
  Effect.gen(function* () {
    const db = yield* Effect.acquireRelease(Effect.promise(createTestDatabase), (db) =>
      Effect.promise(db.drop)
    )
    yield* migrateDatabase(db.url)
    return PgClient.layer({ url: Redacted.make(db.url) })
  })
)
const RoomLive = Layer.mergeAll(
  Accounts.Default,
  Members.Default,
  Customers.Default,
  AttachmentRows.Default
).pipe(Layer.provide(Layer.mergeAll(Mailer.log, Bus.inProcess, Ids.Default)), Layer.provideMerge(SqlLive))

/** Runs `change` on the table for the scope of the test, and `undo` after it. */
const altered = (change: string, undo: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.acquireRelease(Effect.orDie(sql.unsafe(change)), () => Effect.orDie(sql.unsafe(undo)))
  )

/** The ParseError an exit died with, if it died with one. */
const parseDefect = <A, E>(exit: Exit.Exit<A, E>) =>
  Exit.isFailure(exit)
    ? Option.getOrUndefined(Option.filter(Cause.dieOption(exit.cause), ParseResult.isParseError))
    : undefined

const newAccount = Effect.flatMap(Accounts, (accounts) => accounts.create("Decoding merchant"))

layer(RoomLive, { timeout: 60_000 })((it) => {
  describe("merchant rows are decoded by their schema", () => {
    it.scoped("a renamed column of a `select *` resource fails decoding instead of reading undefined", () =>
      Effect.gen(function* () {
        const customers = yield* Customers
        const account = yield* newAccount
        const made = yield* customers.create(account.id, { name: "Ada" })
        assert.instanceOf(made.created_at, Date)
        yield* altered(
          "alter table customers rename column created_at to made_at",
          "alter table customers rename column made_at to created_at"
        )
        const defect = parseDefect(yield* Effect.exit(customers.find(account.id, made.id)))
        assert.isDefined(defect, "a row without created_at must not decode")
        assert.include(defect?.message ?? "", '["created_at"]')
        assert.include(defect?.message ?? "", "is missing")
      })
    )

    it.scoped(
      "a renamed attachment column is a typed decode failure, not an attachment without a status",
      () =>
        Effect.gen(function* () {
          const rows = yield* AttachmentRows
          const account = yield* newAccount
          const at = new Date()
          const row = yield* rows.insert({
            id: crypto.randomUUID(),
            account_id: account.id,
            file_name: "invoice.pdf",
            size_bytes: "1024",
            declared_sha256: null,
            status: "pending",
            upload_expires_at: at,
            created_at: at,
            updated_at: at
          })
          assert.strictEqual(row.status, "pending")
          yield* altered(
            "alter table attachments rename column status to state",
            "alter table attachments rename column state to status"
          )
          const defect = parseDefect(yield* Effect.exit(rows.byId(row.id)))
          assert.isDefined(defect)
          assert.include(defect?.message ?? "", '["status"]')
        })
    )

    it.scoped("a retyped column named in the query fails decoding: a timestamp read as text is no Date", () =>
      Effect.gen(function* () {
        const members = yield* Members
        const sql = yield* SqlClient.SqlClient
        const account = yield* newAccount
        yield* sql`
          insert into members (id, account_id, email, created_at)
          values (${crypto.randomUUID()}, ${account.id}, ${`decode-${account.id}@example.com`}, now())`
        const listed = yield* members.listMembers(account.id)
        assert.strictEqual(listed.length, 1)
        assert.instanceOf(listed[0]?.createdAt, Date)
        assert.strictEqual(listed[0]?.passkeys, 0)
        yield* altered(
          "alter table members alter column created_at type text using created_at::text",
          "alter table members alter column created_at type timestamptz using created_at::timestamptz"
        )
        const defect = parseDefect(yield* Effect.exit(members.listMembers(account.id)))
        assert.isDefined(defect)
        assert.include(defect?.message ?? "", '["created_at"]')
        assert.include(defect?.message ?? "", "DateFromSelf")
      })
    )
  })
})
