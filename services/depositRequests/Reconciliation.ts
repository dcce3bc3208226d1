import { PgClient } from "@effect/sql-pg"
import { Effect, Option } from "effect"
import { type Address, createPublicClient, erc20Abi, getAddress } from "viem"
import { ChainEndpoints } from "../chain/ChainEndpoints"
import type { Recovery } from "../../machines/DepositRequest"
import { chainSettings } from "../chain/ChainSettings"
import { chainCall, finalBlock } from "../chain/ChainRpc"
import { ServiceUnavailable } from "../domain/Errors"
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

export interface ReconciliationReport {
  readonly requests: ReadonlyArray<ReconciledRequest>
  readonly totals: {
    readonly credited_base_units: string
    readonly settled_base_units: string
    readonly returned_base_units: string
    readonly held_base_units: string
    readonly requests_with_differences: number
  }
}

interface Row {
  readonly id: string
  readonly status: string
  readonly amount_base_units: string
  readonly deposit_address: string | null
  readonly snapshot: { context: { recoveries?: ReadonlyArray<Recovery> } }
  readonly credited: string
  readonly settled: string
  readonly returned: string
  readonly pending: string
  readonly held_back: ReadonlyArray<{
    readonly type: "settle" | "return"
    readonly code: string
    readonly amount: string
  }>
}

/**
 * Reconciliation: for an account (and optionally a creation-time range), adds up per request what came in on
 * chain, what was settled and returned, and what the recovery ledger says, and checks the rules that must hold to
 * the base unit:
 * - `settlement`: a settled request's confirmed settlements equal its amount (no other request settles more);
 * - `recoveries`: the recovery ledger equals the confirmed returns;
 * - `chain_balance`: the deposit address holds, at the finalized block, exactly what the books say it holds.
 * After every flow has finished, every request comes out with no differences.
 */
const make = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const config = yield* chainSettings
  const chain = Option.all({ access: (yield* ChainEndpoints).access, token: config.tokenAddress }).pipe(
    Option.map(({ access, token }) => ({
      client: createPublicClient({ transport: access.transport }),
      token: getAddress(token)
    }))
  )

  /**
   * Token balances at the final block (CHAIN_FINALITY), read once per report: every request is compared at the
   * same block, and the block is fetched once, not per request.
   */
  const balancesAtFinalized = Option.match(chain, {
    onNone: () => Effect.succeed((_address: Address) => Effect.succeed<bigint | null>(null)),
    onSome: ({ client, token }) =>
      Effect.map(
        finalBlock(client.request as JsonRpc, config.chainFinality),
        (finalized) => (address: Address) =>
          chainCall("balanceOf", () =>
            client.readContract({
              address: token,
              abi: erc20Abi,
              functionName: "balanceOf",
              args: [address],
              blockNumber: finalized
            })
          )
      )
  })

  const report = (accountId: string, range: { readonly from?: Date; readonly to?: Date } = {}) =>
    Effect.gen(function* () {
      const rows = yield* sql<Row>`
        select d.id, d.status, d.amount_base_units, d.deposit_address, d.snapshot,
          coalesce((select sum(c.amount_base_units) from chain_credits c where c.deposit_request_id = d.id), 0)
            as credited,
          coalesce((select sum(t.amount_base_units) from transfers t
            where t.deposit_request_id = d.id and t.kind = 'settle' and t.state = 'confirmed'), 0) as settled,
          coalesce((select sum(t.amount_base_units) from transfers t
            where t.deposit_request_id = d.id and t.kind = 'return' and t.state = 'confirmed'), 0) as returned,
          coalesce((select sum(t.amount_base_units) from transfers t
            where t.deposit_request_id = d.id and t.state = 'signed'), 0) as pending,
          coalesce((select jsonb_agg(jsonb_build_object('type', h.payload->>'type', 'code', h.code,
              'amount', h.payload->>'amount_base_units') order by h.held_at)
            from held_transfers h where h.deposit_request_id = d.id), '[]'::jsonb) as held_back
        from deposit_requests d
        where d.account_id = ${accountId}
          and d.created_at >= ${range.from ?? new Date(0)}
          and d.created_at < ${range.to ?? new Date(8.64e15)}
        order by d.created_at, d.id`
      const balanceAtFinalized = yield* balancesAtFinalized
      const requests: Array<ReconciledRequest> = []
      for (const row of rows) {
        const credited = BigInt(row.credited)
        const settled = BigInt(row.settled)
        const returned = BigInt(row.returned)
        const pending = BigInt(row.pending)
        const recovered = (row.snapshot.context.recoveries ?? []).reduce(
          (sum, r) => sum + BigInt(r.amount_base_units),
          0n
        )
        const held = credited - settled - returned - pending
        const balance =
          row.deposit_address === null ? null : yield* balanceAtFinalized(getAddress(row.deposit_address))
        const differences: Array<{ rule: ReconciliationRule; difference_base_units: string }> = []
        const check = (rule: ReconciliationRule, difference: bigint) => {
          if (difference !== 0n) differences.push({ rule, difference_base_units: difference.toString() })
        }
        if (row.status === "settled" || settled > 0n)
          check("settlement", settled - BigInt(row.amount_base_units))
        check("recoveries", recovered - returned)
        // Pending transfers may already be mined but not final: the finalized balance still holds them.
        if (balance !== null) check("chain_balance", balance - (held + pending))
        requests.push({
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
        })
      }
      const total = (pick: (r: ReconciledRequest) => string) =>
        requests.reduce((sum, r) => sum + BigInt(pick(r)), 0n).toString()
      return {
        requests,
        totals: {
          credited_base_units: total((r) => r.credited_base_units),
          settled_base_units: total((r) => r.settled_base_units),
          returned_base_units: total((r) => r.returned_base_units),
          held_base_units: total((r) => r.held_base_units),
          requests_with_differences: requests.filter((r) => r.differences.length > 0).length
        }
      } satisfies ReconciliationReport
    })

  // The chain's balances are part of the report: without the node there is no report, and the caller may retry.
  const reportOrUnavailable = (accountId: string, range?: { readonly from?: Date; readonly to?: Date }) =>
    report(accountId, range).pipe(
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
    report: Effect.fn("Reconciliation.report")(function* (
      accountId: string,
      range?: { readonly from?: Date; readonly to?: Date }
    ) {
      return yield* reportOrUnavailable(accountId, range)
    }, orDieOnSql)
  } as const
})

export class Reconciliation extends Effect.Service<Reconciliation>()("deposits/Reconciliation", {
  effect: make,
  dependencies: [ChainEndpoints.Default]
}) {}
