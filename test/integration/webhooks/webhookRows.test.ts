import { assert, describe, layer } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Cause, Context, Effect, Exit, Layer, Option, Redacted, Schema } from "effect"
import { migrate } from "../../../infra/migrations"
import { Ids, newUuid7 } from "../../../services/platform/Ids"
import { countPublications, dueOutboxRows } from "../../../services/webhooks/OutboxRelay"
import { claimJob, jobState } from "../../../services/webhooks/WebhookDispatcher"
import { WebhookEndpoints } from "../../../services/webhooks/WebhookEndpoints"
import { WebhookListeners } from "../../../services/webhooks/WebhookListeners"
import {
  ClaimedJobRow,
  JobStateRow,
  RelayRow,
  UnpublishedJobRow,
  WebhookEndpoint
} from "../../../services/webhooks/WebhookRows"
import { WebhookResolver } from "../../../services/webhooks/WebhookUrlRules"
import { createTestDatabase } from "../../support/Database"

// The webhook room's rows against a migrated database: the CRUD reads decode through their schemas (a renamed
// column is an SqlError, never an `undefined`), and the delivery hot path's statements, which type their rows
// without decoding them, answer exactly the columns and types their schemas name.

class TestDatabase extends Context.Tag("test/WebhookRowsDatabase")<
  TestDatabase,
  { readonly url: string }
>() {}

const DatabaseLive = Layer.unwrapScoped(
  Effect.gen(function* () {
    const db = yield* Effect.acquireRelease(Effect.promise(createTestDatabase), (d) => Effect.promise(d.drop))
    return Layer.effectDiscard(migrate).pipe(
      Layer.provideMerge(PgClient.layer({ url: Redacted.make(db.url) })),
      Layer.merge(Layer.succeed(TestDatabase, { url: db.url }))
    )
  })
)

// Names resolve to a public address here (these machines have no DNS); nothing is ever sent to it.
const PublicResolver = Layer.succeed(WebhookResolver, {
  resolve: () => Effect.succeed([{ address: "93.184.216.34", family: 4 } as const])
})

const FixtureLive = Layer.mergeAll(WebhookEndpoints.Default, WebhookListeners.Default, Ids.Default).pipe(
  Layer.provide(PublicResolver),
  Layer.provideMerge(DatabaseLive)
)

/** Decodes exactly: a column the schema does not name fails as surely as one it names and misses. */
const decodeExactly = <A, I>(schema: Schema.Schema<A, I>, rows: ReadonlyArray<unknown>) =>
  Schema.decodeUnknown(Schema.Array(schema), { onExcessProperty: "error" })(rows).pipe(Effect.orDie)

const seedAccount = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const id = newUuid7()
  yield* sql`insert into accounts (id, name, environment, created_at) values (${id}, 'Rows', 'sandbox', now())`
  return id
})

const seedEvent = (accountId: string, body: string) =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const id = newUuid7()
    yield* sql`
      insert into lifecycle_events (id, account_id, deposit_request_id, type, dedupe, body, occurred_at)
      values (${id}, ${accountId}, null, 'webhook.test', ${id}, ${body}, now())`
    return id
  })

layer(FixtureLive, { timeout: 120_000, excludeTestServices: true })((it) => {
  describe("webhook rows", () => {
    it.effect("an endpoint is read back through its schema, and a listener's event types with it", () =>
      Effect.gen(function* () {
        const sql = yield* PgClient.PgClient
        const webhooks = yield* WebhookEndpoints
        const listeners = yield* WebhookListeners
        const accountId = yield* seedAccount
        const created = yield* webhooks.create(accountId, "https://receiver.example/hooks")
        const uuid = created.id.slice("wh_".length)
        const got = yield* webhooks.get(accountId, uuid)
        assert.deepStrictEqual(got, {
          id: created.id,
          url: "https://receiver.example/hooks",
          enabled_events: ["*"],
          created_at: created.created_at,
          disabled_at: null
        })
        const listed = yield* webhooks.list(accountId, 10, undefined)
        assert.deepStrictEqual(
          listed.webhooks.map((w) => w.id),
          [created.id]
        )
        // The row as the schema decodes it: every column, timestamps as dates, the array column as an array.
        const listener = yield* listeners.create(accountId, ["webhook.test", "webhook.test"])
        assert.deepStrictEqual(listener.event_types, ["webhook.test"])
        const rows = yield* sql`select * from webhook_endpoints where account_id = ${accountId} order by id`
        const decoded = yield* decodeExactly(WebhookEndpoint, rows)
        assert.strictEqual(decoded.length, 2)
        assert.instanceOf(decoded[0]!.created_at, Date)
        assert.deepStrictEqual(decoded[1]!.event_types, ["webhook.test"])
        assert.isTrue(decoded[1]!.listener)
      })
    )

    it.effect("the event list answers each stored body, fields beyond the envelope included", () =>
      Effect.gen(function* () {
        const webhooks = yield* WebhookEndpoints
        const accountId = yield* seedAccount
        const body = {
          id: "evt_x",
          type: "webhook.test",
          occurred_at: "2026-01-01T00:00:00Z",
          data: {},
          extra: 1
        }
        yield* seedEvent(accountId, JSON.stringify(body))
        const page = yield* webhooks.events(accountId, { limit: 10 })
        assert.deepStrictEqual(page.events, [body])
      })
    )

    it.effect("a renamed column fails the read loudly as an SqlError, never as undefined", () =>
      Effect.gen(function* () {
        const sql = yield* PgClient.PgClient
        const webhooks = yield* WebhookEndpoints
        const accountId = yield* seedAccount
        const created = yield* webhooks.create(accountId, "https://receiver.example/renamed")
        const uuid = created.id.slice("wh_".length)
        yield* sql`alter table webhook_endpoints rename column url to endpoint_url`
        const exit = yield* Effect.exit(webhooks.get(accountId, uuid)).pipe(
          Effect.ensuring(Effect.orDie(sql`alter table webhook_endpoints rename column endpoint_url to url`))
        )
        assert.isTrue(Exit.isFailure(exit))
        if (Exit.isSuccess(exit)) return
        // The room's infrastructure error, a defect at the service's edge (a logged 500).
        const defect = Option.getOrThrow(Cause.dieOption(exit.cause)) as { _tag: string; message: string }
        assert.strictEqual(defect._tag, "SqlError")
        assert.include(defect.message, "webhook_endpoints: a row did not decode")
        assert.include(defect.message, "url: missing")
        assert.notInclude(defect.message, "whsec_")
        // Renamed back, the same read works again.
        assert.strictEqual((yield* webhooks.get(accountId, uuid)).url, "https://receiver.example/renamed")
      })
    )

    it.effect("the relay's and the dispatcher's statements answer exactly their row schemas", () =>
      Effect.gen(function* () {
        const sql = yield* PgClient.PgClient
        const webhooks = yield* WebhookEndpoints
        const accountId = yield* seedAccount
        const endpoint = yield* webhooks.create(accountId, "https://receiver.example/hot")
        const endpointUuid = endpoint.id.slice("wh_".length)
        const eventId = yield* seedEvent(accountId, "{}")
        // One outbox row for an event with an endpoint, one for an event nobody listens to (null columns).
        const quiet = yield* seedAccount
        const quietEvent = yield* seedEvent(quiet, "{}")
        for (const id of [eventId, quietEvent]) {
          yield* sql`
            insert into outbox (topic, payload, created_at, trace_parent)
            values ('lifecycle', ${JSON.stringify({ event_id: id })}::jsonb, now(), null)`
        }
        const relayRows = yield* decodeExactly(RelayRow, yield* dueOutboxRows(sql))
        assert.deepStrictEqual(
          relayRows.map((r) => [r.event_id, r.endpoint_id, r.account_id, r.listener]),
          [
            [eventId, endpointUuid, accountId, false],
            [quietEvent, null, null, null]
          ]
        )

        const jobId = newUuid7()
        const past = new Date(Date.now() - 60_000)
        yield* sql`
          insert into webhook_jobs (id, account_id, endpoint_id, event_id, redelivery, state, next_attempt_at,
            created_at, trace_parent)
          values (${jobId}, ${accountId}, ${endpointUuid}, ${eventId}, false, 'pending', ${past}, ${past},
            '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01')`
        const counted = yield* countPublications(sql, sql`select id from webhook_jobs where id = ${jobId}`)
        assert.deepStrictEqual(yield* decodeExactly(UnpublishedJobRow, counted), [
          { id: jobId, endpoint_id: endpointUuid, publications: 1 }
        ])

        const now = new Date()
        const claimed = yield* claimJob(
          sql,
          { job_id: jobId, endpoint_id: endpointUuid, publication: 1 },
          now,
          new Date(now.getTime() + 60_000)
        )
        const claimedRows = yield* decodeExactly(ClaimedJobRow, claimed)
        assert.strictEqual(claimedRows.length, 1)
        assert.strictEqual(claimedRows[0]!.url, "https://receiver.example/hot")
        assert.strictEqual(claimedRows[0]!.attempts, 0)
        assert.strictEqual(claimedRows[0]!.type, "webhook.test")

        // Locked now: the claim takes nothing, and the job's state says how long the message waits.
        const again = yield* claimJob(
          sql,
          { job_id: jobId, endpoint_id: endpointUuid, publication: 1 },
          now,
          now
        )
        assert.strictEqual(again.length, 0)
        const state = yield* decodeExactly(JobStateRow, yield* jobState(sql, jobId))
        assert.strictEqual(state[0]!.state, "pending")
        assert.instanceOf(state[0]!.locked_until, Date)
      })
    )
  })
})
