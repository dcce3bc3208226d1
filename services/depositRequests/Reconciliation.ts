import { PgClient } from "@effect/sql-pg"
import { Effect, Option } from "effect"
import {
  type Address,
  createPublicClient,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  type Hex,
  hexToBigInt,
  isHex
} from "viem"
import { ChainEndpoints } from "../chain/ChainEndpoints"
import { chainSettings } from "../chain/ChainSettings"
import { chainCall, finalBlock } from "../chain/ChainRpc"
import { NotFound, ServiceUnavailable } from "../domain/Errors"
import { uuidFromId } from "../domain/PrefixedId"
import type { JsonRpc } from "../chain/Finality"
import { orDieOnSql } from "../platform/SqlFailure"

export type ReconciliationRule = "settlement" | "recoveries" | "chain_balance"

/** One request's books, every amount in base units. */
export interface ReconciledRequest {
  readonly deposit_request_id: string
  readonly status: string
  readonly amount_base_units: string
  /** Σ finalized payments into the deposit address (the watcher's credits). */
  readonly credited_base_units: string
  /** Σ confirmed settlements to the payout address. */
  readonly settled_base_units: string
  /** Σ confirmed returns to the payer. */
  readonly returned_base_units: string
  /** Σ recovery ledger entries (must equal the returns). */
  readonly recovered_base_units: string
  /** Σ transfers signed but not yet final. */
  readonly pending_base_units: string
  /** What the books say is still on the deposit address: credited − settled − returned − pending. */
  readonly held_base_units: string
  /** The deposit address's token balance at the `finalized` block; null without a chain. */
  readonly chain_balance_base_units: string | null
  /**
   * Transfers the treasury holds back instead of sending (a blacklisted party, or a simulation that kept reverting):
   * still owed and still on the deposit address, so part of `held_base_units`, never a difference.
   */
  readonly held_back: ReadonlyArray<{
    readonly kind: "settlement" | "return"
    readonly code: string
    readonly amount_base_units: string
  }>
  /** Each rule that does not hold, named; empty when the request's books balance. */
  readonly differences: ReadonlyArray<{
    readonly rule: ReconciliationRule
    readonly difference_base_units: string
  }>
}

export interface ReconciliationTotals {
  readonly credited_base_units: string
  readonly settled_base_units: string
  readonly returned_base_units: string
  readonly recovered_base_units: string
  readonly pending_base_units: string
  readonly held_base_units: string
  readonly requests_with_differences: number
}

export interface ReconciliationReport {
  readonly totals: ReconciliationTotals
  /** Requests in the range whose books break a rule, found from the kept books, not by reading every request. */
  readonly differences: ReadonlyArray<ReconciledRequest>
  /** False when more requests break a rule, or hold money to compare with the chain, than one answer examines. */
  readonly differences_complete: boolean
  /** One page of every request in the range, oldest first. */
  readonly requests: ReadonlyArray<ReconciledRequest>
  readonly next_cursor: string | null
}

export interface ReportOptions {
  readonly from?: Date | undefined
  readonly to?: Date | undefined
  readonly limit?: number | undefined
  /** A `dr_` id of the range: the page starts after it. */
  readonly startingAfter?: string | undefined
}

/** At most this many requests of each kind (breaking a ledger rule; holding money) are examined per answer. */
export const DIFFERENCES_EXAMINED = 100

/** `balanceOf` calls per JSON-RPC batch (providers commonly cap a batch at a few hundred calls). */
const BALANCES_PER_BATCH = 100

interface Row {
  readonly id: string
  readonly status: string
  readonly amount_base_units: string
  readonly deposit_address: string | null
  readonly created_at: Date
  readonly credited: string
  readonly settled: string
  readonly returned: string
  readonly recovered: string
  readonly pending: string
  readonly settled_flag: number
  readonly held_back: ReadonlyArray<{
    readonly type: "settle" | "return"
    readonly code: string
    readonly amount: string
  }>
}

interface TotalsRow {
  readonly credited: string
  readonly settled: string
  readonly returned: string
  readonly recovered: string
  readonly pending: string
  readonly differing: string
}

const HOUR_MS = 3_600_000

/** A deposit address as the balances are keyed: lower case, so no row pays a checksum to be looked up. */
const addressKey = (address: string) => address.toLowerCase() as Address
const EARLIEST = new Date(0)
const LATEST = new Date(8.64e15)

/**
 * Reconciliation: for an account (and optionally a creation-time range), what came in on chain, what was settled
 * and returned, and what the recovery ledger says, per request, with the rules that must hold to the base unit:
 * - `settlement`: a settled request's confirmed settlements equal its amount (no other request settles more);
 * - `recoveries`: the recovery ledger equals the confirmed returns;
 * - `chain_balance`: the deposit address holds, at the finalized block, exactly what the books say it holds.
 * After every flow has finished, every request comes out with no differences.
 *
 * The books are kept beside the ledger (migration 0051, infra/decisions/0094-reconciliation-report-and-csv-export.md):
 * totals come from hourly sums, differences from partial indexes, and request rows by keyset page, so no answer
 * reads the account's whole history. The chain is read for the rows of the page and for the requests whose books
 * say money is on their deposit address.
 */
const make = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const config = yield* chainSettings
  const chain = Option.all({ access: (yield* ChainEndpoints).access, token: config.tokenAddress }).pipe(
    Option.map(({ access, token }) => ({
      access,
      client: createPublicClient({ transport: access.transport }),
      token: getAddress(token)
    }))
  )

  /**
   * Token balances at the final block (CHAIN_FINALITY), read once per answer: every request is compared at the
   * same block, the block is fetched once, and the addresses' `balanceOf` calls go in JSON-RPC batches, so a page
   * costs a round trip or two to the node, not one per row.
   */
  const balancesAtFinalized = (addresses: ReadonlyArray<Address>) =>
    Option.match(chain, {
      onNone: () => Effect.succeed(new Map<Address, bigint>()),
      onSome: ({ access, client, token }) =>
        Effect.gen(function* () {
          const balances = new Map<Address, bigint>()
          // Read even for an empty page: a report that cannot reach the chain says so rather than vouch for it.
          const block = `0x${(yield* finalBlock(client.request as JsonRpc, config.chainFinality)).toString(16)}`
          const unique = [...new Set(addresses)]
          for (let i = 0; i < unique.length; i += BALANCES_PER_BATCH) {
            const group = unique.slice(i, i + BALANCES_PER_BATCH)
            const answers = yield* chainCall("balanceOf", () =>
              access.together<ReadonlyArray<unknown>>(
                group.map((address) => ({
                  method: "eth_call",
                  params: [
                    {
                      to: token,
                      data: encodeFunctionData({ abi: erc20Abi, functionName: "balanceOf", args: [address] })
                    },
                    block
                  ]
                })),
                (answers) => answers.every((a) => typeof a === "string" && isHex(a) && a.length === 66),
                "balanceOf"
              )
            )
            for (const [k, address] of group.entries()) balances.set(address, hexToBigInt(answers[k] as Hex))
          }
          return balances
        })
    })

  const rowColumns = sql`
    d.id, d.status, d.amount_base_units, d.deposit_address, d.created_at,
    coalesce(b.credited_base_units, 0) as credited, coalesce(b.settled_base_units, 0) as settled,
    coalesce(b.returned_base_units, 0) as returned, coalesce(b.recovered_base_units, 0) as recovered,
    coalesce(b.pending_base_units, 0) as pending, coalesce(b.settled_flag, 0) as settled_flag,
    coalesce((select jsonb_agg(jsonb_build_object('type', h.payload->>'type', 'code', h.code,
        'amount', h.payload->>'amount_base_units') order by h.held_at)
      from held_transfers h where h.deposit_request_id = d.id), '[]'::jsonb) as held_back`

  const reconcile = (row: Row, balance: bigint | null): ReconciledRequest => {
    const credited = BigInt(row.credited)
    const settled = BigInt(row.settled)
    const returned = BigInt(row.returned)
    const pending = BigInt(row.pending)
    const recovered = BigInt(row.recovered)
    const held = credited - settled - returned - pending
    const differences: Array<{ rule: ReconciliationRule; difference_base_units: string }> = []
    const check = (rule: ReconciliationRule, difference: bigint) => {
      if (difference !== 0n) differences.push({ rule, difference_base_units: difference.toString() })
    }
    // The kept flag, not the status read now, so a row says what the books and the totals say.
    if (row.settled_flag > 0 || settled > 0n) check("settlement", settled - BigInt(row.amount_base_units))
    check("recoveries", recovered - returned)
    // Pending transfers may already be mined but not final: the finalized balance still holds them.
    if (balance !== null) check("chain_balance", balance - (held + pending))
    return {
      deposit_request_id: `dr_${row.id}`,
      status: row.status,
      amount_base_units: BigInt(row.amount_base_units).toString(),
      credited_base_units: credited.toString(),
      settled_base_units: settled.toString(),
      returned_base_units: returned.toString(),
      recovered_base_units: recovered.toString(),
      pending_base_units: pending.toString(),
      held_base_units: held.toString(),
      chain_balance_base_units: balance === null ? null : balance.toString(),
      held_back: row.held_back.map((h) => ({
        kind: h.type === "settle" ? "settlement" : "return",
        code: h.code,
        amount_base_units: BigInt(h.amount).toString()
      })),
      differences
    }
  }

  const withBalances = (rows: ReadonlyArray<Row>, balances: ReadonlyMap<Address, bigint>) =>
    rows.map((row) =>
      reconcile(
        row,
        row.deposit_address === null ? null : (balances.get(addressKey(row.deposit_address)) ?? null)
      )
    )

  /**
   * Totals of a creation-time range: the account's whole-history row when the range is unbounded; else whole hours
   * from the hourly sums, and the part-hours at either edge from the books of the requests created then.
   */
  const totalsOf = (accountId: string, from: Date, to: Date) =>
    Effect.gen(function* () {
      const wholeFrom = new Date(Math.ceil(from.getTime() / HOUR_MS) * HOUR_MS)
      const wholeTo = new Date(Math.floor(to.getTime() / HOUR_MS) * HOUR_MS)
      const sums = sql`
        coalesce(sum(credited_base_units), 0) as credited, coalesce(sum(settled_base_units), 0) as settled,
        coalesce(sum(returned_base_units), 0) as returned, coalesce(sum(recovered_base_units), 0) as recovered,
        coalesce(sum(pending_base_units), 0) as pending`
      const rows =
        from.getTime() === EARLIEST.getTime() && to.getTime() === LATEST.getTime()
          ? yield* sql<TotalsRow>`
              select credited_base_units as credited, settled_base_units as settled,
                returned_base_units as returned, recovered_base_units as recovered,
                pending_base_units as pending, requests_with_differences as differing
              from reconciliation_account_totals where account_id = ${accountId}`
          : wholeFrom < wholeTo
            ? yield* sql<TotalsRow>`
              select ${sums}, coalesce(sum(requests_with_differences), 0) as differing from reconciliation_totals
              where account_id = ${accountId} and hour >= ${wholeFrom} and hour < ${wholeTo}
              union all
              select ${sums}, count(*) filter (where ledger_differs) from reconciliation_books
              where account_id = ${accountId}
                and ((created_at >= ${from} and created_at < ${wholeFrom})
                  or (created_at >= ${wholeTo} and created_at < ${to}))`
            : yield* sql<TotalsRow>`
              select ${sums}, count(*) filter (where ledger_differs) as differing from reconciliation_books
              where account_id = ${accountId} and created_at >= ${from} and created_at < ${to}`
      const sum = (pick: (r: TotalsRow) => string) => rows.reduce((s, r) => s + BigInt(pick(r)), 0n)
      return {
        credited: sum((r) => r.credited),
        settled: sum((r) => r.settled),
        returned: sum((r) => r.returned),
        recovered: sum((r) => r.recovered),
        pending: sum((r) => r.pending),
        differing: Number(sum((r) => r.differing))
      }
    })

  const report = (accountId: string, options: ReportOptions = {}) =>
    Effect.gen(function* () {
      const from = options.from ?? EARLIEST
      const to = options.to ?? LATEST
      const limit = options.limit ?? 20
      const after = options.startingAfter === undefined ? undefined : uuidFromId("dr", options.startingAfter)
      const cursor =
        after === undefined
          ? undefined
          : (yield* sql<{ created_at: Date }>`
              select created_at from deposit_requests where id = ${after} and account_id = ${accountId}`)[0]
      // A cursor is a request id: one this account does not have is not found, as every id is (a shape is 400).
      if (options.startingAfter !== undefined && cursor === undefined)
        return yield* NotFound.of("deposit_request")
      yield* sql`select fold_reconciliation_entries(${accountId})`
      const totals = yield* totalsOf(accountId, from, to)
      const inRange = sql`b.account_id = ${accountId} and b.created_at >= ${from} and b.created_at < ${to}`
      const [breaking, holding] = yield* Effect.all([
        sql<Row>`
          select ${rowColumns} from reconciliation_books b join deposit_requests d on d.id = b.deposit_request_id
          where ${inRange} and b.ledger_differs
          order by b.created_at, b.deposit_request_id limit ${DIFFERENCES_EXAMINED + 1}`,
        sql<Row>`
          select ${rowColumns} from reconciliation_books b join deposit_requests d on d.id = b.deposit_request_id
          where ${inRange} and b.in_custody and not b.ledger_differs
          order by b.created_at, b.deposit_request_id limit ${DIFFERENCES_EXAMINED + 1}`
      ])
      const page = yield* sql<Row>`
        select ${rowColumns} from deposit_requests d
        left join reconciliation_books b on b.deposit_request_id = d.id
        where d.account_id = ${accountId} and d.created_at >= ${from} and d.created_at < ${to}
          ${
            cursor === undefined
              ? sql``
              : sql`and d.created_at >= ${cursor.created_at}
                  and (d.created_at > ${cursor.created_at} or d.id > ${after})`
          }
        order by d.created_at, d.id
        limit ${limit + 1}`
      const examinedRows = [
        ...breaking.slice(0, DIFFERENCES_EXAMINED),
        ...holding.slice(0, DIFFERENCES_EXAMINED)
      ]
      const pageRows = page.slice(0, limit)
      const balances = yield* balancesAtFinalized(
        [...examinedRows, ...pageRows].flatMap((r) =>
          r.deposit_address === null ? [] : [addressKey(r.deposit_address)]
        )
      )
      const examined = withBalances(examinedRows, balances)
      const differences = examined.filter((r) => r.differences.length > 0)
      const chainOnly = differences.filter((r) =>
        r.differences.every((d) => d.rule === "chain_balance")
      ).length
      const requests = withBalances(pageRows, balances)
      return {
        totals: {
          credited_base_units: totals.credited.toString(),
          settled_base_units: totals.settled.toString(),
          returned_base_units: totals.returned.toString(),
          recovered_base_units: totals.recovered.toString(),
          pending_base_units: totals.pending.toString(),
          held_base_units: (totals.credited - totals.settled - totals.returned - totals.pending).toString(),
          requests_with_differences: totals.differing + chainOnly
        },
        differences,
        differences_complete:
          breaking.length <= DIFFERENCES_EXAMINED && holding.length <= DIFFERENCES_EXAMINED,
        requests,
        next_cursor: page.length > limit ? (requests.at(-1)?.deposit_request_id ?? null) : null
      } satisfies ReconciliationReport
    })

  // The chain's balances are part of the report: without the node there is no report, and the caller may retry.
  const reportOrUnavailable = (accountId: string, options?: ReportOptions) =>
    report(accountId, options).pipe(
      Effect.catchTag("ChainRpcError", (e) =>
        Effect.zipRight(
          Effect.logWarning("reconciliation could not read the chain", e),
          Effect.fail(
            new ServiceUnavailable({ message: "The chain node does not answer; try again shortly." })
          )
        )
      )
    )

  return {
    report: Effect.fn("Reconciliation.report")(function* (accountId: string, options?: ReportOptions) {
      return yield* reportOrUnavailable(accountId, options)
    }, orDieOnSql)
  } as const
})

export class Reconciliation extends Effect.Service<Reconciliation>()("deposits/Reconciliation", {
  effect: make,
  dependencies: [ChainEndpoints.Default]
}) {}
