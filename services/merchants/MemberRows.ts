import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { type Account, Accounts } from "./Accounts"

export interface Member {
  readonly id: string
  readonly accountId: string
  readonly email: string
  readonly createdAt: Date
  readonly passkeys: number
}

/** What a successful sign-in hands back: a fresh session of the member, with who they are and where. */
export interface SignedIn {
  readonly token: string
  readonly expiresAt: Date
  readonly member: Member
  readonly account: Account
}

/** The client signing in, as the sign-in limits count it. */
export interface SignInClient {
  readonly client: string
  readonly userAgent: string | undefined
}

const MemberRow = Schema.Struct({
  id: Schema.String,
  account_id: Schema.String,
  email: Schema.String,
  created_at: Schema.DateFromSelf,
  passkeys: Schema.Number
})
const toMember = (row: typeof MemberRow.Type): Member => ({
  id: row.id,
  accountId: row.account_id,
  email: row.email,
  createdAt: row.created_at,
  passkeys: row.passkeys
})

const NewMember = Schema.Struct({
  id: Schema.String,
  account_id: Schema.String,
  email: Schema.String,
  created_at: Schema.DateFromSelf,
  invited_by: Schema.NullOr(Schema.String)
})

/**
 * The members rows every part of `Members` reads, and the session a sign-in hands back. An address is a live
 * member of at most one account (a unique index on live addresses): `insertLive` answers none when it already is.
 */
export const makeMemberRows = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const accounts = yield* Accounts

  const memberColumns = sql`
    m.id, m.account_id, m.email, m.created_at,
    (select count(*)::int from passkeys p where p.member_id = m.id) as passkeys`

  const liveByEmail = SqlSchema.findOne({
    Request: Schema.String,
    Result: MemberRow,
    execute: (email) =>
      sql`select ${memberColumns} from members m where m.email = ${email} and m.removed_at is null`
  })
  const liveOf = SqlSchema.findOne({
    Request: Schema.Struct({ accountId: Schema.String, memberId: Schema.String }),
    Result: MemberRow,
    execute: ({ accountId, memberId }) => sql`
      select ${memberColumns} from members m
      where m.id = ${memberId} and m.account_id = ${accountId} and m.removed_at is null`
  })
  const liveIn = SqlSchema.findAll({
    Request: Schema.String,
    Result: MemberRow,
    execute: (accountId) => sql`
      select ${memberColumns} from members m
      where m.account_id = ${accountId} and m.removed_at is null
      order by m.created_at, m.id`
  })
  const insertLive = SqlSchema.findOne({
    Request: NewMember,
    Result: Schema.Struct({ id: Schema.String }),
    execute: (row) => sql`
      insert into members (id, account_id, email, created_at, invited_by)
      values (${row.id}, ${row.account_id}, ${row.email}, ${row.created_at}, ${row.invited_by})
      on conflict (email) where removed_at is null do nothing
      returning id`
  })

  const liveMemberByEmail = (email: string) => Effect.map(liveByEmail(email), Option.map(toMember))
  const memberOf = (accountId: string, memberId: string) =>
    Effect.map(liveOf({ accountId, memberId }), Option.map(toMember))
  const membersOf = (accountId: string) => Effect.map(liveIn(accountId), (rows) => rows.map(toMember))

  /** A fresh session of a live member, with their account: the answer of every sign-in. */
  const sessionFor = (member: Member, who: SignInClient) =>
    Effect.gen(function* () {
      const account = yield* accounts.get(member.accountId)
      if (Option.isNone(account)) return yield* Effect.die(new Error("a member without an account"))
      const session = yield* accounts.createSession(member.accountId, {
        memberId: member.id,
        ...(who.userAgent === undefined ? {} : { userAgent: who.userAgent })
      })
      return {
        token: session.token,
        expiresAt: session.expiresAt,
        member,
        account: account.value
      } satisfies SignedIn
    })

  return { liveMemberByEmail, memberOf, membersOf, insertLive, sessionFor } as const
})

export type MemberRows = Effect.Effect.Success<typeof makeMemberRows>
