import pg from "pg"
import { v7 } from "uuid"
import type { Address } from "viem"
import { MACHINE_VERSION } from "../../machines/DepositRequest"
import { start, step } from "../../machines/step"

/**
 * Requests in status `ready`, written straight into deposit_requests in one statement (for bursts too large to make
 * through the API): request i has deposit key index i and deposit address `deposits[i]` (derive them with the
 * service's vault, so its treasury can sign for them), pays out to `payouts[i]`, and was attested from `wallet`
 * (where returns go). The snapshots are the real machine's (`start`, then `payer.wallet_attested`); the `ready`
 * lifecycle events are left out. Returns the bare UUIDs, in order.
 */
export const seedReadyRequests = async (
  url: string,
  options: {
    readonly accountId: string
    readonly wallet: Address
    readonly deposits: ReadonlyArray<Address>
    readonly payouts: ReadonlyArray<Address>
    readonly amount: bigint
  }
): Promise<ReadonlyArray<string>> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  const created = new Date()
  const expires = new Date(created.getTime() + 24 * 3600_000)
  try {
    const rows = options.deposits.map((address, i) => {
      const id = v7()
      const first = start({
        id: `dr_${id}`,
        amount_base_units: options.amount.toString(),
        payout_address: options.payouts[i]!,
        payer_policy_mode: "none",
        expires_at: expires.toISOString(),
        created_at: created.toISOString()
      })
      const ready = step(first.snapshot, {
        type: "payer.wallet_attested",
        at: created.toISOString(),
        wallet: options.wallet,
        address
      })
      if (ready.status !== "ready") throw new Error(`seeded request is ${ready.status}, not ready`)
      return { id, snapshot: JSON.stringify(ready.snapshot), address }
    })
    await client.query(
      `insert into deposit_requests (
         id, account_id, status, version, machine_version, snapshot, amount_base_units, received_base_units,
         heading, reference, metadata, customer_id, issuer_id, payout_address_id, payer_policy_mode,
         expected_email, payer_reference, deposit_index, deposit_address, expires_at, created_at, updated_at)
       select t.id, $1, 'ready', 2, $2, t.snapshot, $3, 0, '', '', '{}'::jsonb, null, gen_random_uuid(),
         gen_random_uuid(), 'none', null, null, t.n - 1, t.address, $4, $5, $5
       from unnest($6::uuid[], $7::jsonb[], $8::text[]) with ordinality as t(id, snapshot, address, n)`,
      [
        options.accountId,
        MACHINE_VERSION,
        options.amount.toString(),
        expires,
        created,
        rows.map((r) => r.id),
        rows.map((r) => r.snapshot),
        rows.map((r) => r.address)
      ]
    )
    return rows.map((r) => r.id)
  } finally {
    await client.end()
  }
}
