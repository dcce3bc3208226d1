import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { serviceEnv } from "../platform/Settings"
import { Accounts } from "./Accounts"

/** One account of this sandbox instance, as its sign-in page offers it. */
export interface SandboxAccount {
  readonly id: string
  readonly name: string
  readonly createdAt: Date
  /** Its members' addresses (none for an account made by `npm run cli -- sandbox`), oldest first. */
  readonly emails: ReadonlyArray<string>
}

const SandboxAccountRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  created_at: Schema.DateFromSelf,
  emails: Schema.Array(Schema.String)
})

/** The most an instance's sign-in page lists, newest first. */
export const SANDBOX_ACCOUNTS_LISTED = 50

/**
 * The sandbox's way back into the accounts already made (decision 0087): list them, and sign into one with a
 * session of the account, the kind `npm run cli -- sandbox` hands out. Outside the sandbox both answer nothing:
 * production never lists or opens an account without its member signing in (its routes are not even registered).
 */
export class SandboxAccounts extends Effect.Service<SandboxAccounts>()("deposits/SandboxAccounts", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const accounts = yield* Accounts
    const sandbox = (yield* serviceEnv) === "sandbox"

    const listRows = SqlSchema.findAll({
      Request: Schema.Number,
      Result: SandboxAccountRow,
      execute: (limit) => sql`
        select a.id, a.name, a.created_at,
               coalesce(array_agg(m.email order by m.created_at, m.id)
                          filter (where m.id is not null and m.removed_at is null), '{}') as emails
        from accounts a left join members m on m.account_id = a.id
        where a.environment = 'sandbox'
        group by a.id
        order by a.created_at desc, a.id
        limit ${limit}`
    })

    const list = Effect.fn("SandboxAccounts.list")(function* () {
      if (!sandbox) return [] as ReadonlyArray<SandboxAccount>
      const rows = yield* listRows(SANDBOX_ACCOUNTS_LISTED)
      return rows.map(
        (row): SandboxAccount => ({
          id: row.id,
          name: row.name,
          createdAt: row.created_at,
          emails: row.emails
        })
      )
    }, Effect.orDie)

    /** A session of the account (no member), or none when it is not a sandbox account of this instance. */
    const signIn = Effect.fn("SandboxAccounts.signIn")(function* (accountId: string) {
      if (!sandbox) return Option.none<{ readonly token: string; readonly expiresAt: Date }>()
      const account = yield* accounts.get(accountId)
      if (Option.isNone(account) || account.value.environment !== "sandbox") return Option.none()
      const session = yield* accounts.createSession(accountId)
      return Option.some({ token: session.token, expiresAt: session.expiresAt })
    }, Effect.orDie)

    return { list, signIn }
  }),
  dependencies: [Accounts.Default]
}) {}
