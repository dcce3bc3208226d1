import { randomUUID } from "node:crypto"
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { HDAccount, LocalAccount } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { anvilDevAccount } from "../../../infra/chain/Anvil"
import type { MerchantClient } from "../../support/Api"
import { readyRequest as readyRequestOver } from "../../support/Payer"
import { ChainServiceFixture, chainServiceLayer } from "../../support/scopedChainService"
import { newMerchantClient } from "../../support/scopedResources"

// Blocks every 0.2 s and `finalized` two blocks behind `latest`: payments, settlements and returns are real.
const ChainLive = chainServiceLayer({ blockTime: 0.2 })

/** The paying payer: a funded dev account, so it pays gas for its own transfer. */
const payer = anvilDevAccount(3)
/** A payer who only attests (no gas needed): a decoy wallet. */
const decoyPayer = privateKeyToAccount(generatePrivateKey())

interface Row {
  readonly id: string
  readonly status: string
  readonly created_at: string
  readonly payer_wallet: string | null
  readonly address: string | null
}
interface Page {
  readonly deposit_requests: ReadonlyArray<Row>
  readonly next_cursor: string | null
  readonly version: string
}
interface Refusal {
  readonly error: { readonly code: string; readonly param?: string }
}

const call = <T>(api: MerchantClient, ...args: Parameters<MerchantClient["call"]>) =>
  Effect.promise(() => api.call<T>(...args))

const create = (api: MerchantClient, fields: Record<string, unknown>) =>
  Effect.gen(function* () {
    const refs = yield* Effect.promise(() => api.setup())
    const made = yield* call<{ id: string }>(
      api,
      "POST",
      "/v1/deposit-requests",
      { amount: "1.000000", issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId, ...fields },
      { "idempotency-key": randomUUID() }
    )
    assert.strictEqual(made.status, 201, JSON.stringify(made.body))
    return made.body.id
  })

const ready = (api: MerchantClient, who: HDAccount | LocalAccount, amount = "1.000000") =>
  Effect.flatMap(ChainServiceFixture, ({ service }) =>
    Effect.promise(() => readyRequestOver({ service, api, payer: who }, amount))
  )

/** The ids a filtered list answers (every page of up to 100), newest first. */
const ids = (api: MerchantClient, query: string) =>
  Effect.gen(function* () {
    const page = yield* call<Page>(api, "GET", `/v1/deposit-requests?limit=100&${query}`)
    assert.strictEqual(page.status, 200, `${query}: ${JSON.stringify(page.body)}`)
    assert.isNull(page.body.next_cursor)
    return page.body.deposit_requests.map((r) => r.id)
  })

const waitFor = <T>(read: Effect.Effect<T>, until: (value: T) => boolean, ms = 40_000) =>
  Effect.gen(function* () {
    const deadline = Date.now() + ms
    let last = yield* read
    while (!until(last) && Date.now() < deadline) {
      yield* Effect.sleep("200 millis")
      last = yield* read
    }
    assert.isTrue(until(last), `gave up waiting: ${JSON.stringify(last)}`)
    return last
  })

/** An address with its hex digits upper case: the same address, spelled otherwise (one case carries no checksum). */
const upperCase = (hex: string) => `0x${hex.slice(2).toUpperCase()}`

layer(ChainLive, { timeout: 120_000, excludeTestServices: true })(
  "listing deposit requests by filter",
  (it) => {
    it.effect(
      "each filter finds exactly the account's matching requests among decoys of the same and another account",
      () =>
        Effect.gen(function* () {
          const { api, service, local } = yield* ChainServiceFixture
          const other = yield* newMerchantClient(service)
          const reference = `order-${randomUUID()}`
          const customer = (yield* call<{ id: string }>(api, "POST", "/v1/customers", { name: "Ada" })).body
            .id
          const otherCustomer = (yield* call<{ id: string }>(other, "POST", "/v1/customers", { name: "Bob" }))
            .body.id

          const byReference = yield* create(api, { reference })
          const byReferenceAndCustomer = yield* create(api, { reference, customer_id: customer })
          const byCustomer = yield* create(api, { reference: `${reference}-2`, customer_id: customer })
          const plain = yield* create(api, {})
          const paid = yield* ready(api, payer, "2.000000")
          const decoyWallet = yield* ready(api, decoyPayer)
          // The other account: the same reference, the same payer wallet, its own customer.
          const foreignReference = yield* create(other, { reference, customer_id: otherCustomer })
          const foreignWallet = yield* ready(other, payer)

          // Pay 3 for 2: a payment in, a settlement out, and the overpayment returned (a recovery).
          yield* Effect.promise(() => local.mint(payer.address, 10_000_000n))
          yield* Effect.promise(() => local.pay(payer, paid.address, 3_000_000n))
          type Transfer = { direction: string; kind: string; transaction_hash: string }
          const transfers = yield* waitFor(
            Effect.map(
              call<{ transfers: ReadonlyArray<Transfer> }>(
                api,
                "GET",
                `/v1/deposit-requests/${paid.id}/transfers`
              ),
              (r) => r.body.transfers
            ),
            (ts) => ts.some((t) => t.kind === "settlement") && ts.some((t) => t.kind === "return")
          )
          const recoveries = yield* waitFor(
            Effect.map(
              call<{ recoveries: ReadonlyArray<{ transaction_hash: string }> }>(
                api,
                "GET",
                `/v1/deposit-requests/${paid.id}/recoveries`
              ),
              (r) => r.body.recoveries
            ),
            (rs) => rs.length === 1
          )
          const hashes = [
            ...transfers.map((t) => t.transaction_hash),
            ...recoveries.map((r) => r.transaction_hash)
          ]
          assert.strictEqual(new Set(hashes).size, 3, "a payment, a settlement and a return")

          // reference: exact, case-sensitive; never the other account's.
          assert.deepStrictEqual(yield* ids(api, `reference=${reference}`), [
            byReferenceAndCustomer,
            byReference
          ])
          assert.deepStrictEqual(yield* ids(api, `reference=${reference.toUpperCase()}`), [])
          assert.deepStrictEqual(yield* ids(other, `reference=${reference}`), [foreignReference])
          // customer, alone and combined.
          assert.deepStrictEqual(yield* ids(api, `customer=${customer}`), [
            byCustomer,
            byReferenceAndCustomer
          ])
          assert.deepStrictEqual(yield* ids(api, `customer=${customer}&reference=${reference}`), [
            byReferenceAndCustomer
          ])
          assert.deepStrictEqual(yield* ids(api, `customer=${otherCustomer}`), [])
          assert.deepStrictEqual(yield* ids(other, `customer=${customer}`), [])
          // payer_wallet, in either case or checksummed.
          assert.deepStrictEqual(yield* ids(api, `payer_wallet=${payer.address.toLowerCase()}`), [paid.id])
          assert.deepStrictEqual(yield* ids(api, `payer_wallet=${upperCase(payer.address)}`), [paid.id])
          assert.deepStrictEqual(yield* ids(api, `payer_wallet=${decoyPayer.address}`), [decoyWallet.id])
          assert.deepStrictEqual(yield* ids(other, `payer_wallet=${payer.address}`), [foreignWallet.id])
          // deposit_address, in either case or checksummed.
          assert.deepStrictEqual(yield* ids(api, `deposit_address=${paid.address.toLowerCase()}`), [paid.id])
          assert.deepStrictEqual(yield* ids(api, `deposit_address=${upperCase(paid.address)}`), [paid.id])
          assert.deepStrictEqual(yield* ids(other, `deposit_address=${paid.address}`), [])
          assert.deepStrictEqual(yield* ids(api, `deposit_address=${foreignWallet.address}`), [])
          // transaction_hash: the payment in, the settlement and the return out, the recovery.
          for (const hash of hashes) {
            assert.deepStrictEqual(yield* ids(api, `transaction_hash=${hash}`), [paid.id])
            assert.deepStrictEqual(
              yield* ids(api, `transaction_hash=${hash.toUpperCase().replace("0X", "0x")}`),
              [paid.id]
            )
            assert.deepStrictEqual(yield* ids(other, `transaction_hash=${hash}`), [])
          }
          assert.deepStrictEqual(yield* ids(api, `transaction_hash=0x${"ab".repeat(32)}`), [])
          // Combined with status: the paid request is settled, the decoy wallet's is ready.
          assert.deepStrictEqual(yield* ids(api, `payer_wallet=${payer.address}&status=ready`), [])
          assert.deepStrictEqual(yield* ids(api, `payer_wallet=${decoyPayer.address}&status=ready`), [
            decoyWallet.id
          ])

          // created_gte / created_lt: exactly the account's requests on each side of an instant.
          const everything = (yield* call<Page>(api, "GET", "/v1/deposit-requests?limit=100")).body
            .deposit_requests
          assert.includeMembers(
            everything.map((r) => r.id),
            [byReference, byReferenceAndCustomer, byCustomer, plain, paid.id, decoyWallet.id]
          )
          const instants = [...new Set(everything.map((r) => r.created_at))].sort()
          for (const at of instants) {
            const atOrAfter = everything.filter((r) => r.created_at >= at).map((r) => r.id)
            const before = everything.filter((r) => r.created_at < at).map((r) => r.id)
            assert.deepStrictEqual(yield* ids(api, `created_gte=${at}`), atOrAfter)
            assert.deepStrictEqual(yield* ids(api, `created_lt=${at}`), before)
            assert.deepStrictEqual(yield* ids(api, `created_gte=${at}&created_lt=${at}`), [])
          }
          // A window around both accounts' requests: each account still sees only its own.
          const foreignAll = (yield* call<Page>(other, "GET", "/v1/deposit-requests?limit=100")).body
            .deposit_requests
          const bothInstants = [...instants, ...foreignAll.map((r) => r.created_at)].sort()
          const from = bothInstants[0]!
          const until = new Date(Date.parse(bothInstants.at(-1)!) + 1000).toISOString().replace(".000Z", "Z")
          assert.deepStrictEqual(
            yield* ids(api, `created_gte=${from}&created_lt=${until}`),
            everything.map((r) => r.id)
          )
          assert.deepStrictEqual(yield* ids(api, `created_gte=${until}`), [])
          assert.deepStrictEqual(
            yield* ids(other, `created_gte=${from}&created_lt=${until}`),
            foreignAll.map((r) => r.id)
          )
          assert.deepStrictEqual(
            yield* ids(api, `created_gte=${from}&reference=${reference}&customer=${customer}`),
            [byReferenceAndCustomer]
          )
        })
    )

    it.effect("pages a filtered list with the cursor: every match once, newest first, nothing else", () =>
      Effect.gen(function* () {
        const { api, service } = yield* ChainServiceFixture
        const other = yield* newMerchantClient(service)
        const reference = `paged-${randomUUID()}`
        const made: Array<string> = []
        for (let i = 0; i < 5; i++) {
          made.push(yield* create(api, { reference }))
          // Decoys between the matches: another reference in the account, the same one in another account.
          yield* create(api, { reference: `${reference}-x` })
          yield* create(other, { reference })
        }
        const walked: Array<string> = []
        let cursor: string | null = null
        let pages = 0
        do {
          const page: { body: Page } = yield* call<Page>(
            api,
            "GET",
            `/v1/deposit-requests?reference=${reference}&limit=2${cursor === null ? "" : `&starting_after=${cursor}`}`
          )
          assert.isAtMost(page.body.deposit_requests.length, 2)
          walked.push(...page.body.deposit_requests.map((r) => r.id))
          cursor = page.body.next_cursor
          pages++
        } while (cursor !== null && pages < 10)
        assert.strictEqual(pages, 3)
        assert.deepStrictEqual(walked, [...made].reverse())
        // The cursor and a created bound together.
        const created = (yield* call<Row>(api, "GET", `/v1/deposit-requests/${made[0]}`)).body.created_at
        const after = yield* call<Page>(
          api,
          "GET",
          `/v1/deposit-requests?reference=${reference}&created_gte=${created}&starting_after=${made[3]}`
        )
        assert.deepStrictEqual(
          after.body.deposit_requests.map((r) => r.id),
          [made[2], made[1], made[0]]
        )
      })
    )

    it.effect(
      "takes a created bound as browsers write it: fractional seconds, Z or any offset, the same instant alike",
      () =>
        Effect.gen(function* () {
          const { api } = yield* ChainServiceFixture
          const made: Array<string> = []
          for (let i = 0; i < 3; i++) {
            made.push(yield* create(api, { reference: `bounds-${i}` }))
            yield* Effect.sleep("1100 millis")
          }
          const everything = (yield* call<Page>(api, "GET", "/v1/deposit-requests?limit=100")).body
            .deposit_requests
          const instants = [...new Set(everything.map((r) => r.created_at))].sort()
          assert.isAtLeast(instants.length, 3)
          // The same instant as UTC to the second, with milliseconds (what toISOString writes), with nine digits,
          // and at two offsets (+ escaped, and + as a query string's unescaped space).
          const spellings = (at: string) => {
            const ms = Date.parse(at)
            const offset = (minutes: number) => {
              const local = new Date(ms + minutes * 60_000).toISOString().slice(0, 19)
              const sign = minutes < 0 ? "-" : "%2B"
              const abs = Math.abs(minutes)
              return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`
            }
            return [
              at,
              new Date(ms).toISOString(),
              `${at.slice(0, 19)}.000000000Z`,
              offset(-8 * 60),
              offset(5 * 60 + 30),
              offset(60).replace("%2B", "+")
            ]
          }
          for (const at of instants) {
            const atOrAfter = everything.filter((r) => r.created_at >= at).map((r) => r.id)
            // Created within the second before `at` (stored to the millisecond): on the other side of `at`.
            const before = everything.filter((r) => r.created_at < at).map((r) => r.id)
            for (const spelled of spellings(at)) {
              assert.deepStrictEqual(yield* ids(api, `created_gte=${spelled}`), atOrAfter, spelled)
              assert.deepStrictEqual(yield* ids(api, `created_lt=${spelled}`), before, spelled)
            }
          }
          // A bound inside a second splits it at the millisecond: the request created in that second is on one side.
          const last = everything.find((r) => r.id === made[2])!
          const exact = yield* ids(
            api,
            `created_gte=${last.created_at}&created_lt=${new Date(Date.parse(last.created_at) + 1000).toISOString()}`
          )
          assert.deepStrictEqual(exact, [last.id])
          const halves = [
            ...(yield* ids(api, `created_gte=${last.created_at.slice(0, 19)}.500Z&reference=bounds-2`)),
            ...(yield* ids(
              api,
              `created_lt=${last.created_at.slice(0, 19)}.500Z&created_gte=${last.created_at}&reference=bounds-2`
            ))
          ]
          assert.deepStrictEqual(halves, [last.id])
          // The dashboard's CSV export and list: an offset midnight and the next one, the page as it sends them.
          const day = last.created_at.slice(0, 10)
          const from = new Date(`${day}T00:00:00-08:00`).toISOString()
          const until = new Date(Date.parse(`${day}T00:00:00-08:00`) + 86_400_000).toISOString()
          const expected = everything
            .filter(
              (r) => r.created_at >= from.replace(".000Z", "Z") && r.created_at < until.replace(".000Z", "Z")
            )
            .map((r) => r.id)
          assert.deepStrictEqual(yield* ids(api, `created_gte=${from}&created_lt=${until}`), expected)
        })
    )

    it.effect("refuses malformed filters with 400 invalid_request naming the parameter", () =>
      Effect.gen(function* () {
        const { api } = yield* ChainServiceFixture
        const cases: ReadonlyArray<readonly [string, string]> = [
          ["created_gte=2026-11-22", "created_gte"],
          ["created_gte=2026-11-22T12:00Z", "created_gte"],
          ["created_gte=2026-11-22T12:00:00", "created_gte"],
          ["created_gte=2026-11-22T12:00:00.Z", "created_gte"],
          ["created_gte=2026-11-22T24:00:00Z", "created_gte"],
          ["created_gte=2026-11-22T12:00:60Z", "created_gte"],
          ["created_gte=2026-11-22T12:00:00%2B24:00", "created_gte"],
          ["created_lt=2026-11-22T12:00:00.1234567890Z", "created_lt"],
          ["created_lt=1763812800", "created_lt"],
          ["created_lt=2026-02-30T00:00:00Z", "created_lt"],
          ["created_lt=yesterday", "created_lt"],
          ["customer=pa_01a21733-49e2-72e0-b061-5bcc55d5997f", "customer"],
          ["customer=cus_nope", "customer"],
          ["deposit_address=0x1234", "deposit_address"],
          ["payer_wallet=52908400098527886E0F7030069857D2E4169EE7", "payer_wallet"],
          // One letter's case off the EIP-55 checksum: a typo, not another spelling.
          ["deposit_address=0x52908400098527886E0F7030069857D2E4169Ee7", "deposit_address"],
          ["payer_wallet=0x52908400098527886e0F7030069857D2E4169EE7", "payer_wallet"],
          [`transaction_hash=0x${"g".repeat(64)}`, "transaction_hash"],
          [`transaction_hash=0x${"a".repeat(63)}`, "transaction_hash"],
          ["reference=", "reference"],
          [`reference=${"r".repeat(201)}`, "reference"]
        ]
        for (const [query, param] of cases) {
          const refused = yield* call<Refusal>(api, "GET", `/v1/deposit-requests?${query}`)
          assert.strictEqual(refused.status, 400, query)
          assert.strictEqual(refused.body.error.code, "invalid_request", query)
          assert.strictEqual(refused.body.error.param, param, query)
        }
      })
    )
  }
)
