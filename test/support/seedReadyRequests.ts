import pg from "pg"
import { v7 } from "uuid"
import { type Address, getAddress } from "viem"
import { MACHINE_VERSION } from "../../machines/DepositRequest"
import { start, step } from "../../machines/step"

const TEMPLATE_ID = "00000000-0000-7000-8000-00000000beef"
const TEMPLATE_ADDRESS = getAddress("0x00000000000000000000000000000000c0ffee42")
const TEMPLATE_PAYOUT = getAddress("0x00000000000000000000000000000000c0ffee43")
/** Rows per insert statement. */
const CHUNK = 2_000

/**
 * Requests in status `ready`, written straight into deposit_requests (for bursts too large to make through the
 * API, up to the 100,000 of the watcher bench): request i has deposit key index i and deposit address
 * `deposits[i]` (derive them with the service's vault, so its treasury can sign for them), pays out to
 * `payouts[i]` (checksummed), and was attested from `wallet` (where returns go). The snapshots are the real
 * machine's (`start`, then `payer.wallet_attested`), made once and given each request's id and addresses: the
 * same bytes as stepping each, without 100,000 steps. The `ready` lifecycle events are left out. Returns the bare
 * UUIDs, in order.
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
  const first = start({
    id: `dr_${TEMPLATE_ID}`,
    amount_base_units: options.amount.toString(),
    payout_address: TEMPLATE_PAYOUT,
    payer_policy_mode: "none",
    expires_at: expires.toISOString(),
    created_at: created.toISOString()
  })
  const ready = step(first.snapshot, {
    type: "payer.wallet_attested",
    at: created.toISOString(),
    wallet: options.wallet,
    address: TEMPLATE_ADDRESS
  })
  if (ready.status !== "ready") throw new Error(`seeded request is ${ready.status}, not ready`)
  const template = JSON.stringify(ready.snapshot)
  const ids: Array<string> = []
  try {
    for (let from = 0; from < options.deposits.length; from += CHUNK) {
      const rows = options.deposits.slice(from, from + CHUNK).map((address, i) => {
        const id = v7()
        ids.push(id)
        const snapshot = template
          .replaceAll(TEMPLATE_ID, id)
          .replaceAll(TEMPLATE_ADDRESS, address)
          .replaceAll(TEMPLATE_PAYOUT, options.payouts[from + i]!)
        return { id, snapshot, address }
      })
      await client.query(
        `insert into deposit_requests (
           id, account_id, status, version, machine_version, snapshot, amount_base_units, received_base_units,
           heading, reference, metadata, customer_id, issuer_id, payout_address_id, payer_policy_mode,
           expected_email, payer_reference, deposit_index, deposit_address, expires_at, created_at, updated_at)
         select t.id, $1, 'ready', 2, $2, t.snapshot, $3, 0, '', '', '{}'::jsonb, null, gen_random_uuid(),
           gen_random_uuid(), 'none', null, null, $4 + t.n - 1, t.address, $5, $6, $6
         from unnest($7::uuid[], $8::jsonb[], $9::text[]) with ordinality as t(id, snapshot, address, n)`,
        [
          options.accountId,
          MACHINE_VERSION,
          options.amount.toString(),
          from,
          expires,
          created,
          rows.map((r) => r.id),
          rows.map((r) => r.snapshot),
          rows.map((r) => r.address)
        ]
      )
    }
    return ids
  } finally {
    await client.end()
  }
}
