import { SqlClient, SqlSchema } from "@effect/sql"
import { Clock, Duration, Effect, Layer, Option, Schema } from "effect"
import { toId } from "../domain/PrefixedId"
import { Mailer } from "../platform/Mailer"
import { positiveInteger } from "../platform/Settings"
import { runWorker } from "../platform/Worker"
import { dashboardLink, dashboardOriginSetting } from "./MemberSettings"

/** The kinds of notice a member can turn off one by one (infra/decisions/0085-notices-by-email.md). */
export const NOTICE_KINDS = ["request_paused", "endpoint_failing", "return_held"] as const
export type NoticeKind = (typeof NOTICE_KINDS)[number]
export const NoticeKind = Schema.Literal(...NOTICE_KINDS)

/** A member's choice per kind: every kind is on until the member turns it off. */
export type NoticePreferences = Record<NoticeKind, boolean>

/**
 * `NOTICE_BATCH_WINDOW_MS`: how long after an account's first unsent notice its mail waits, so a burst is one mail
 * (default a minute).
 */
export const noticeBatchWindowMs = positiveInteger("NOTICE_BATCH_WINDOW_MS", 60_000)

/** An endpoint whose every attempt has failed for this long, and which is still being tried, is failing. */
export const FAILING_FOR = Duration.hours(1)
/** How often the worker looks for endpoints failing for an hour (or each batch window, when that is shorter). */
export const FAILING_CHECK_EVERY = Duration.minutes(1)
/** Accounts mailed per pass, and notices listed per mail (the rest go in the next mail, a pass later). */
export const ACCOUNTS_PER_PASS = 50
export const NOTICES_PER_MAIL = 200
/** A notice still unsent this long after it was queued (a mailbox refusing it) is given up, with a warning. */
export const GIVE_UP_AFTER = Duration.days(1)
/** Sent notices kept this long (with whom they were mailed to), then deleted. */
export const SENT_KEPT = Duration.days(7)

const NoticeRow = Schema.Struct({
  id: Schema.String,
  kind: NoticeKind,
  subject_id: Schema.String,
  code: Schema.NullOr(Schema.String),
  occurred_at: Schema.DateFromSelf
})
type NoticeRow = typeof NoticeRow.Type

const RecipientRow = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  account_name: Schema.String,
  off: Schema.Array(NoticeKind),
  mailed: Schema.Array(Schema.String)
})

const codeText = (code: string | null) => (code === null ? "" : ` (${code})`)

/** One line of the mail per notice, with where in the dashboard it is dealt with. */
const noticeLine = (notice: NoticeRow, link: (fragment: string) => string) => {
  const at = notice.occurred_at.toISOString()
  switch (notice.kind) {
    case "request_paused": {
      const id = toId("dr", notice.subject_id)
      return `- ${id} paused${codeText(notice.code)} at ${at}: ${link(`/requests/${id}`)}`
    }
    case "return_held": {
      const id = toId("dr", notice.subject_id)
      return `- ${id}: the return to the payer was held${codeText(notice.code)} at ${at}: ${link(`/requests/${id}`)}`
    }
    case "endpoint_failing": {
      const id = toId("wh", notice.subject_id)
      const what =
        notice.code === "failing_for_an_hour"
          ? "every delivery has failed for an hour"
          : "a delivery series failed for good after its last attempt"
      return `- ${id}: ${what} (${at}): ${link(`/webhooks/${id}`)}`
    }
  }
}

const HEADINGS: Record<NoticeKind, string> = {
  request_paused: "Paused requests (automatic movement stopped until the request is resumed):",
  endpoint_failing: "Failing webhook endpoints:",
  return_held: "Held returns (the money stays owed to the payer):"
}

const counted = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

/** The mail listing a burst of notices for one member: what happened and where each is dealt with. */
export const noticesMail = (
  notices: ReadonlyArray<NoticeRow>,
  accountName: string,
  link: (fragment: string) => string
) => {
  const of = (kind: NoticeKind) => notices.filter((n) => n.kind === kind)
  const parts = [
    [of("request_paused").length, "request paused", "requests paused"],
    [of("endpoint_failing").length, "webhook endpoint failing", "webhook endpoint failures"],
    [of("return_held").length, "return held", "returns held"]
  ] as const
  const summary = parts
    .filter(([n]) => n > 0)
    .map(([n, one, many]) => counted(n, one, many))
    .join(", ")
  const sections = NOTICE_KINDS.filter((kind) => of(kind).length > 0).flatMap((kind) => [
    "",
    HEADINGS[kind],
    ...of(kind).map((n) => noticeLine(n, link))
  ])
  return {
    subject: `Notices for ${accountName}: ${summary}`,
    text: [
      `${counted(notices.length, "thing", "things")} on ${accountName} need a look.`,
      ...sections,
      "",
      `You receive these notices because they are on for you; turn any kind off in Team: ${link("/team")}`
    ].join("\n")
  }
}

/**
 * Notices by email to the account's members (infra/decisions/0085-notices-by-email.md): a request paused, a webhook
 * endpoint failed for good or failing for an hour, a return held. Triggers queue each notice in its cause's own
 * transaction (`pending_notices`, one per cause); `send` mails each account's queue once its first notice is
 * `NOTICE_BATCH_WINDOW_MS` old: one mail per member listing every notice of the burst that member has on.
 */
export class MemberNotices extends Effect.Service<MemberNotices>()("deposits/MemberNotices", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const mailer = yield* Mailer
    const windowMs = yield* noticeBatchWindowMs
    const link = dashboardLink(yield* dashboardOriginSetting)

    const offKinds = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ kind: NoticeKind }),
      execute: (memberId) => sql`
        select kind from member_notice_preferences where member_id = ${memberId} and not enabled`
    })

    /** The member's choices, every kind named. */
    const preferences = Effect.fn("MemberNotices.preferences")(function* (memberId: string) {
      const off = new Set((yield* offKinds(memberId).pipe(Effect.orDie)).map((r) => r.kind))
      return Object.fromEntries(NOTICE_KINDS.map((kind) => [kind, !off.has(kind)])) as NoticePreferences
    })

    /** Sets the kinds named (the others stay as they were); the member's choices after. */
    const setPreferences = Effect.fn("MemberNotices.setPreferences")(function* (
      memberId: string,
      changes: { readonly [K in NoticeKind]?: boolean | undefined }
    ) {
      const at = new Date(yield* Clock.currentTimeMillis)
      const named = NOTICE_KINDS.filter((kind) => changes[kind] !== undefined)
      if (named.length > 0) {
        yield* sql`
          insert into member_notice_preferences (member_id, kind, enabled, updated_at)
          select ${memberId}, k.kind, k.enabled, ${at}
          from unnest(${named}::text[], ${named.map((kind) => changes[kind] === true)}::bool[]) as k(kind, enabled)
          on conflict (member_id, kind) do update set enabled = excluded.enabled, updated_at = excluded.updated_at`.pipe(
          Effect.orDie
        )
      }
      return yield* preferences(memberId)
    })

    const dueAccounts = SqlSchema.findAll({
      Request: Schema.DateFromSelf,
      Result: Schema.Struct({ account_id: Schema.String }),
      execute: (before) => sql`
        select account_id from pending_notices where sent_at is null
        group by account_id having min(occurred_at) <= ${before}
        order by min(occurred_at) limit ${ACCOUNTS_PER_PASS}`
    })
    const unsent = SqlSchema.findAll({
      Request: Schema.String,
      Result: NoticeRow,
      execute: (accountId) => sql`
        select id::text as id, kind, subject_id, code, occurred_at from pending_notices
        where account_id = ${accountId} and sent_at is null order by id limit ${NOTICES_PER_MAIL}`
    })
    const recipients = SqlSchema.findAll({
      Request: Schema.Struct({ accountId: Schema.String, ids: Schema.Array(Schema.String) }),
      Result: RecipientRow,
      execute: ({ accountId, ids }) => sql`
        select m.id, m.email, a.name as account_name,
          array(select p.kind from member_notice_preferences p where p.member_id = m.id and not p.enabled) as off,
          array(select d.notice_id::text from notice_deliveries d
                where d.member_id = m.id and d.notice_id = any(${ids}::bigint[])) as mailed
        from members m join accounts a on a.id = m.account_id
        where m.account_id = ${accountId} and m.removed_at is null
        order by m.created_at`
    })

    /** Mails one account's unsent notices, one mail per member; whether every member's mail went. */
    const sendAccount = (accountId: string, now: Date) =>
      Effect.gen(function* () {
        const notices = yield* unsent(accountId)
        if (notices.length === 0) return true
        const ids = notices.map((n) => n.id)
        const members = yield* recipients({ accountId, ids })
        let delivered = true
        for (const member of members) {
          const off = new Set(member.off)
          const mailed = new Set(member.mailed)
          const theirs = notices.filter((n) => !off.has(n.kind) && !mailed.has(n.id))
          if (theirs.length === 0) continue
          const sent = yield* mailer
            .send({ to: member.email, ...noticesMail(theirs, member.account_name, link) })
            .pipe(
              Effect.as(true),
              Effect.catchAll((error) =>
                Effect.as(
                  Effect.logWarning("notice mail not sent").pipe(
                    Effect.annotateLogs({ account: accountId, member: member.id, reason: error.message })
                  ),
                  false
                )
              )
            )
          if (!sent) {
            delivered = false
            continue
          }
          // Recorded right after the relay took it: a crash in between is the one way a member is mailed twice.
          yield* sql`
            insert into notice_deliveries (notice_id, member_id)
            select n, ${member.id} from unnest(${theirs.map((n) => n.id)}::bigint[]) as n
            on conflict do nothing`
        }
        const giveUp = notices[0]!.occurred_at.getTime() <= now.getTime() - Duration.toMillis(GIVE_UP_AFTER)
        if (!delivered && giveUp) {
          yield* Effect.logWarning("notices given up after a day of refused mail").pipe(
            Effect.annotateLogs({ account: accountId, notices: ids.length })
          )
        }
        if (delivered || giveUp) {
          yield* sql`update pending_notices set sent_at = ${now} where id = any(${ids}::bigint[])`
        }
        return delivered
      })

    let lastFailingCheck = 0
    /**
     * Queues a notice for each endpoint failing for an hour: active, not a listener, every attempt since its last
     * success (or ever) failed, the first of them at least FAILING_FOR ago and one within it. One notice per run of
     * failures (the cause names the run's first failed attempt).
     */
    const queueFailingEndpoints = (now: Date) =>
      sql`
        insert into pending_notices (account_id, kind, cause, subject_id, code, occurred_at)
        select e.account_id, 'endpoint_failing', 'failing_for_an_hour:' || e.id || ':' || r.since_id, e.id,
          'failing_for_an_hour', ${now}
        from webhook_endpoints e
        cross join lateral (
          select (array_agg(d.id order by d.attempted_at))[1] as since_id, min(d.attempted_at) as since,
            max(d.attempted_at) as last
          from webhook_deliveries d
          where d.endpoint_id = e.id and d.outcome in ('retrying', 'failed')
            and d.attempted_at > coalesce((select max(s.attempted_at) from webhook_deliveries s
                                          where s.endpoint_id = e.id and s.outcome = 'succeeded'), '-infinity')
        ) r
        where e.disabled_at is null and not e.listener and r.since is not null
          and r.since <= ${new Date(now.getTime() - Duration.toMillis(FAILING_FOR))}
          and r.last > ${new Date(now.getTime() - Duration.toMillis(FAILING_FOR))}
        on conflict (cause) do nothing`

    /** One pass: due accounts mailed; how many accounts were due (a full pass is followed by another at once). */
    const send = Effect.fn("MemberNotices.send")(function* () {
      const now = new Date(yield* Clock.currentTimeMillis)
      if (now.getTime() - lastFailingCheck >= Math.min(Duration.toMillis(FAILING_CHECK_EVERY), windowMs)) {
        yield* queueFailingEndpoints(now)
        yield* sql`delete from pending_notices where sent_at < ${new Date(now.getTime() - Duration.toMillis(SENT_KEPT))}`
        lastFailingCheck = now.getTime()
      }
      const due = yield* dueAccounts(new Date(now.getTime() - windowMs))
      for (const { account_id } of due) yield* sendAccount(account_id, now)
      return due.length
    })

    return { preferences, setPreferences, send } as const
  })
}) {}

/**
 * The notice mailer, on one instance at a time (the lease): passes a quarter of the batch window apart (at most a
 * second), at once while a pass found a full page of due accounts.
 */
export const MemberNoticesLive = Layer.unwrapEffect(
  Effect.map(noticeBatchWindowMs, (windowMs) =>
    runWorker({
      name: "MemberNotices.send",
      lease: "member-notices",
      step: Effect.flatMap(MemberNotices, (notices) => notices.send()),
      every: (due: Option.Option<number>) =>
        Option.getOrElse(due, () => 0) >= ACCOUNTS_PER_PASS
          ? Effect.yieldNow()
          : Effect.sleep(Math.min(1_000, Math.max(20, Math.floor(windowMs / 4)))),
      failure: "notice mail pass failed",
      failureLevel: "Warning"
    })
  )
)
