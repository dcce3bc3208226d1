import { randomUUID } from "node:crypto"
import { Statement } from "@effect/sql"
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer, Stream } from "effect"
import pg from "pg"
import { AccountSummary } from "../../../services/depositRequests/AccountSummary"
import { Reconciliation, type ReportOptions } from "../../../services/depositRequests/Reconciliation"
import { type ExportFilters, RequestExport } from "../../../services/depositRequests/RequestExport"
import { DepositRequestLedger } from "../../../services/depositRequests/DepositRequestLedger"
import { DepositRequests, type ListOptions } from "../../../services/depositRequests/DepositRequests"
import { depositRequestStatuses as STATUSES } from "../../../services/domain/Lifecycle"
import { type ListSearch, recogniseSearch } from "../../../services/domain/ListSearch"
import { toId } from "../../../services/domain/PrefixedId"
import { WebhookEndpoints } from "../../../services/webhooks/WebhookEndpoints"
import { WebhookResolver } from "../../../services/webhooks/WebhookUrlRules"
import { actorHostLayer } from "../../support/ActorHostRuntime"
import { createTestDatabase } from "../../support/Database"
import { fillHistory } from "../../support/historyFill"
import { createMerchant } from "../../support/Merchant"
import { seedDepositRequest } from "../../support/seedDepositRequest"

/**
 * Every merchant read's plan (issue 50): an account of 30,000 requests with their events, credits, transfers,
 * wallets and deliveries (the bench's fill), `ANALYZE`d, then each read run through the service itself while a
 * statement transformer keeps the SQL and parameters it sends, and each kept select `EXPLAIN`ed as sent. A
 * sequential scan of a history table fails the read: its cost would grow with the account's history.
 */

const HISTORY_TABLES = [
  "deposit_requests",
  "lifecycle_events",
  "webhook_deliveries",
  "webhook_jobs",
  "transfers",
  "chain_credits",
  "verification_attempts",
  "deposit_request_attachments",
  "reconciliation_books",
  "reconciliation_totals",
  "account_activity"
]
const REQUESTS = 30_000

class Fixture extends Context.Tag("test/ReadPlansFixture")<
  Fixture,
  {
    readonly client: pg.Client
    readonly url: string
    readonly accountId: string
    readonly endpointId: string
    /** A copy with every kind of row (credit, transfers, wallet, delivery) and its identifiers. */
    readonly sample: {
      readonly id: string
      readonly reference: string
      readonly email: string
      readonly depositAddress: string
      readonly wallet: string
      readonly txHash: string
      readonly eventId: string
      readonly deliveryId: string
      readonly customerId: string | null
      readonly issuerId: string
      readonly payoutAddressId: string
      readonly createdAt: Date
      readonly attachmentId: string
    }
  }
>() {}

type Services =
  | DepositRequests
  | DepositRequestLedger
  | WebhookEndpoints
  | AccountSummary
  | Reconciliation
  | RequestExport
  | Fixture

const FixtureLive = Layer.scoped(
  Fixture,
  Effect.gen(function* () {
    const db = yield* Effect.acquireRelease(Effect.promise(createTestDatabase), (d) => Effect.promise(d.drop))
    const accountId = (yield* Effect.promise(() => createMerchant(db.url))).accountId.slice("acct_".length)
    const templateId = yield* seedDepositRequest(accountId).pipe(Effect.provide(actorHostLayer(db.url)))
    const client = yield* Effect.acquireRelease(
      Effect.promise(async () => {
        const c = new pg.Client({ connectionString: db.url })
        await c.connect()
        return c
      }),
      (c) => Effect.promise(() => c.end())
    )
    const endpointId = randomUUID()
    yield* Effect.promise(async () => {
      // What a paid request has and a freshly created one lacks: two events, a credit, a settlement and a return.
      await client.query(
        `insert into webhook_endpoints (id, account_id, url, secret, created_at)
         values ($1, $2, 'https://hooks.example.test/', 'whsec_plans', now())`,
        [endpointId, accountId]
      )
      for (const type of ["deposit_request.ready", "deposit_request.settled"])
        await client.query(
          `insert into lifecycle_events (id, account_id, deposit_request_id, type, dedupe, body, occurred_at)
           values ($1, $2, $3, $4, $4, '{}', now())`,
          [randomUUID(), accountId, templateId, type]
        )
      await client.query(
        `insert into chain_credits (chain_id, tx_hash, log_index, block_number, block_hash, deposit_request_id,
           from_address, amount_base_units, seen_at, applied_at, published_at)
         values (10143, '0x' || repeat('a', 64), 0, 1, '0x' || repeat('b', 64), $1,
           '0x' || repeat('c', 40), 100, now(), now(), now())`,
        [templateId]
      )
      for (const kind of ["settle", "return"])
        await client.query(
          `insert into transfers (command_id, deposit_request_id, kind, to_address, amount_base_units, tx_nonce,
             tx_hash, raw_tx, state, created_at)
           values ($1, $2, $3, '0x' || repeat('d', 40), 100, 0, '0x' || md5($1) || md5($3), '0x', 'confirmed', now())`,
          [`plans-${kind}`, templateId, kind]
        )
      await fillHistory(client, { accountId, templateId, count: REQUESTS, salt: 1, endpointId })
      await client.query("analyze")
    })
    const sample = yield* Effect.promise(async () => {
      const r = (
        await client.query(
          `select d.id, d.deposit_address, d.customer_id, d.issuer_id, d.payout_address_id, d.created_at,
             v.wallet, t.tx_hash, w.id as delivery_id, w.event_id,
             (select reference from deposit_requests where account_id = $1 and reference <> '' limit 1) as reference,
             (select expected_email from deposit_requests where account_id = $1 and expected_email is not null
               limit 1) as email,
             (select a.attachment_id from deposit_request_attachments a
               join deposit_requests x on x.id = a.deposit_request_id where x.account_id = $1 limit 1) as attachment_id
           from deposit_requests d
           join verification_attempts v on v.deposit_request_id = d.id
           join transfers t on t.deposit_request_id = d.id
           join lifecycle_events e on e.deposit_request_id = d.id
           join webhook_deliveries w on w.event_id = e.id
           where d.account_id = $1 and d.created_at < now() - interval '100 days'
           order by d.id desc limit 1`,
          [accountId]
        )
      ).rows[0]
      return {
        id: r.id,
        reference: r.reference,
        email: r.email,
        depositAddress: r.deposit_address,
        wallet: r.wallet,
        txHash: r.tx_hash,
        eventId: r.event_id,
        deliveryId: r.delivery_id,
        customerId: r.customer_id,
        issuerId: r.issuer_id,
        payoutAddressId: r.payout_address_id,
        createdAt: r.created_at,
        attachmentId: r.attachment_id
      }
    })
    return { client, url: db.url, accountId, endpointId, sample }
  })
)

/** The read services over the fixture's database (the actor host's layer with the ledger, webhooks and summary). */
const TestLive = Layer.unwrapEffect(
  Effect.map(Fixture, ({ url }) =>
    Layer.mergeAll(
      DepositRequestLedger.Default,
      WebhookEndpoints.Default,
      AccountSummary.Default,
      Reconciliation.Default,
      RequestExport.Default
    ).pipe(Layer.provideMerge(actorHostLayer(url)), Layer.provide(WebhookResolver.system))
  )
).pipe(Layer.provideMerge(FixtureLive))

interface Plan {
  readonly "Node Type": string
  readonly "Relation Name"?: string
  readonly Plans?: ReadonlyArray<Plan>
}

const seqScans = (plan: Plan): Array<string> => [
  ...(plan["Node Type"] === "Seq Scan" && HISTORY_TABLES.includes(plan["Relation Name"] ?? "")
    ? [plan["Relation Name"]!]
    : []),
  ...(plan.Plans ?? []).flatMap(seqScans)
]

/**
 * Runs `read` through the services with every statement it sends kept, then `EXPLAIN`s each select as sent and
 * fails on a sequential scan of a history table. Returns how many statements were checked.
 */
const assertIndexed = <A, E>(name: string, read: Effect.Effect<A, E, Services>) =>
  Effect.gen(function* () {
    const { client } = yield* Fixture
    const sent: Array<readonly [string, ReadonlyArray<unknown>]> = []
    yield* read.pipe(
      Statement.withTransformer((self) =>
        Effect.sync(() => {
          sent.push(self.compile())
          return self
        })
      ),
      Effect.exit
    )
    const selects = sent.filter(([text]) => /^\s*(select|with)\b/i.test(text))
    assert.isAbove(selects.length, 0, `${name}: no select was sent`)
    for (const [text, params] of selects) {
      const explained = yield* Effect.promise(() =>
        client.query<{ "QUERY PLAN": Array<{ Plan: Plan }> }>(
          `explain (format json) ${text}`,
          params as Array<unknown>
        )
      )
      const plan = explained.rows[0]!["QUERY PLAN"][0]!.Plan
      assert.deepStrictEqual(
        seqScans(plan),
        [],
        `${name}: sequential scan in\n${text}\n${JSON.stringify(plan).slice(0, 2000)}`
      )
    }
    return selects.length
  })

const list = (options: Omit<ListOptions, "limit">) =>
  Effect.flatMap(Fixture, ({ accountId }) =>
    Effect.flatMap(DepositRequests, (s) => s.list(accountId, { limit: 25, ...options }))
  )

const search = (q: string) => {
  const recognised = recogniseSearch(q)
  if (typeof recognised === "string") throw new Error(`${q}: ${recognised}`)
  return list({ search: recognised as ListSearch })
}

const day = 86_400_000

layer(TestLive, { timeout: 300_000, excludeTestServices: true })(
  "every merchant read's plan is bounded by its page",
  (it) => {
    it.effect("the deposit request list, each filter and combination the dashboard offers", () =>
      Effect.gen(function* () {
        const { sample } = yield* Fixture
        const windowFrom = new Date(sample.createdAt.getTime() - day)
        const windowTo = new Date(sample.createdAt.getTime() + day)
        const cases: Array<[string, Omit<ListOptions, "limit">]> = [
          ["newest", {}],
          ["cursor", { startingAfter: toId("dr", sample.id) }],
          ...STATUSES.map((status): [string, Omit<ListOptions, "limit">] => [`status ${status}`, { status }]),
          ["window", { createdGte: windowFrom, createdLt: windowTo }],
          ["window from", { createdGte: windowFrom }],
          ["window to", { createdLt: windowTo }],
          [
            "window with cursor",
            { createdGte: windowFrom, createdLt: windowTo, startingAfter: toId("dr", sample.id) }
          ],
          ...STATUSES.map((status): [string, Omit<ListOptions, "limit">] => [
            `status ${status} in a window`,
            { status, createdGte: windowFrom, createdLt: windowTo }
          ]),
          ["reference", { reference: sample.reference }],
          ["deposit address", { depositAddress: sample.depositAddress }],
          ["payer wallet", { payerWallet: sample.wallet }],
          ["transaction hash", { transactionHash: sample.txHash }]
        ]
        let checked = 0
        for (const [name, options] of cases) checked += yield* assertIndexed(name, list(options))
        assert.isAtLeast(checked, cases.length)
      })
    )

    it.effect("the one search, by every identifier", () =>
      Effect.gen(function* () {
        const { sample } = yield* Fixture
        const cases: Array<[string, string]> = [
          ["dr_", toId("dr", sample.id)],
          ["iss_", toId("iss", sample.issuerId)],
          ["pa_", toId("pa", sample.payoutAddressId)],
          ["att_", toId("att", sample.attachmentId)],
          ["va_", toId("va", randomUUID())],
          ["evt_", toId("evt", sample.eventId)],
          ["whd_", toId("whd", sample.deliveryId)],
          ["reference", sample.reference],
          ["email", sample.email],
          ["deposit address", sample.depositAddress],
          ["payer wallet", sample.wallet],
          ["transaction hash", sample.txHash]
        ]
        if (sample.customerId !== null) cases.push(["cus_", toId("cus", sample.customerId)])
        for (const [name, q] of cases) yield* assertIndexed(`search ${name}`, search(q))
        yield* assertIndexed(
          "search in a window",
          list({
            search: recogniseSearch(sample.reference) as ListSearch,
            createdGte: new Date(sample.createdAt.getTime() - day)
          })
        )
      })
    )

    it.effect("events, deliveries, a request's ledger and the account summary", () =>
      Effect.gen(function* () {
        const { accountId, endpointId, sample } = yield* Fixture
        const hooks = yield* WebhookEndpoints
        const ledger = yield* DepositRequestLedger
        const reads: Array<[string, Effect.Effect<unknown, unknown, Services>]> = [
          ["events", hooks.events(accountId, { limit: 25 })],
          ["events of a type", hooks.events(accountId, { type: "deposit_request.settled", limit: 25 })],
          ["events of a request", hooks.events(accountId, { depositRequest: sample.id, limit: 25 })],
          ["events after a cursor", hooks.events(accountId, { limit: 25, startingAfter: sample.eventId })],
          ["an endpoint's deliveries", hooks.deliveries(accountId, endpointId, 25, undefined)],
          [
            "an endpoint's succeeded deliveries",
            hooks.deliveries(accountId, endpointId, 25, undefined, "succeeded")
          ],
          [
            "an endpoint's failed deliveries",
            hooks.deliveries(accountId, endpointId, 25, undefined, "failed")
          ],
          ["a request's deliveries", hooks.requestDeliveries(accountId, sample.id, 25, undefined)],
          ["a request's transfers", ledger.transfers(accountId, sample.id)],
          ["a request's recoveries", ledger.recoveries(accountId, sample.id)],
          [
            "a request's verification attempts",
            ledger.verificationAttempts(accountId, sample.id, { limit: 25 })
          ],
          ["the account summary", Effect.flatMap(AccountSummary, (s) => s.summary(accountId, "Europe/Paris"))]
        ]
        for (const [name, read] of reads) yield* assertIndexed(name, read)
      })
    )

    it.effect("the reconciliation report's pages and the CSV export's chunks", () =>
      Effect.gen(function* () {
        const { accountId, sample } = yield* Fixture
        const report = (options: ReportOptions) =>
          Effect.flatMap(Reconciliation, (r) => r.report(accountId, options))
        const exported = (filters: ExportFilters) =>
          Effect.flatMap(RequestExport, (e) => Stream.runDrain(Stream.take(e.csv(accountId, filters), 4)))
        const reads: Array<[string, Effect.Effect<unknown, unknown, Services>]> = [
          ["the report's first page", report({ limit: 100 })],
          ["a report page far back", report({ limit: 100, startingAfter: toId("dr", sample.id) })],
          [
            "a report of a window",
            report({
              limit: 100,
              from: new Date(sample.createdAt.getTime() - 3 * day),
              to: new Date(sample.createdAt.getTime() + day / 3)
            })
          ],
          ["the whole export's first chunks", exported({})],
          ["the export of a status", exported({ status: "settled" })],
          [
            "the export of a window",
            exported({
              createdGte: new Date(sample.createdAt.getTime() - 30 * day),
              createdLt: sample.createdAt
            })
          ]
        ]
        for (const [name, read] of reads) yield* assertIndexed(name, read)
      })
    )
  }
)
