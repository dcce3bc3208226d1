import type { PgClient } from "@effect/sql-pg"
import { Effect } from "effect"
import { makeBatcher } from "./Batcher"
import type { DepositRequestRow } from "./DepositRequestView"

/** A create ready to commit: the actor's first row and the Idempotency-Key that must be claimed with it. */
export interface CreateClaim {
  readonly row: DepositRequestRow
  readonly idempotencyKey: string
  readonly fingerprint: Uint8Array
  readonly secretDigest: Uint8Array | null
}

/** Creates that arrive together share one statement (one commit); a few such statements may be under way. */
const MAX_BATCH = 64
const MAX_IN_FLIGHT = 4

/**
 * Group commit of creates. One statement claims every key, only where each request's issuer, payout address and
 * customer are still the account's own and live (a key past its window is taken over), and inserts the requests
 * whose key was claimed. Each caller learns whether its own create went in; one that did not (the key was taken,
 * a reference changed) reads and decides, so the statement never needs to explain a refusal.
 */
export const makeCreateGroupCommit = (sql: PgClient.PgClient, idempotencyWindowMs: number) => {
  const commit = (batch: ReadonlyArray<CreateClaim>) =>
    Effect.gen(function* () {
      // One claim per key per statement (ON CONFLICT cannot touch a row twice); a later one reports "not claimed"
      // and its caller finds the winner. Keys in one order, so two statements never wait on each other in a cycle.
      const byKey = new Map<string, CreateClaim>()
      for (const claim of batch) {
        const key = `${claim.row.account_id}:${claim.idempotencyKey}`
        if (!byKey.has(key)) byKey.set(key, claim)
      }
      const rows = [...byKey.entries()]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([, { row, idempotencyKey, fingerprint, secretDigest }]) => ({
          id: row.id,
          account_id: row.account_id,
          key: idempotencyKey,
          fingerprint: Buffer.from(fingerprint).toString("hex"),
          status: row.status,
          machine_version: row.machine_version,
          snapshot: row.snapshot,
          amount_base_units: row.amount_base_units,
          received_base_units: row.received_base_units,
          heading: row.heading,
          reference: row.reference,
          metadata: row.metadata,
          customer_id: row.customer_id,
          issuer_id: row.issuer_id,
          payout_address_id: row.payout_address_id,
          payer_policy_mode: row.payer_policy_mode,
          expected_email: row.expected_email,
          payer_reference: row.payer_reference,
          expires_at: row.expires_at.toISOString(),
          created_at: row.created_at.toISOString(),
          secret_digest: secretDigest === null ? null : Buffer.from(secretDigest).toString("hex")
        }))
      const inserted = yield* sql<{ id: string }>`
        with input as (
          select * from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as x(
            id uuid, account_id uuid, key text, fingerprint text, status text,
            machine_version integer, snapshot jsonb, amount_base_units numeric, received_base_units numeric,
            heading text, reference text, metadata jsonb, customer_id uuid, issuer_id uuid, payout_address_id uuid,
            payer_policy_mode text, expected_email text, payer_reference text, expires_at timestamptz,
            created_at timestamptz, secret_digest text)
        ),
        claimed as (
          insert into idempotency_keys (account_id, key, fingerprint, resource_id, created_at)
          select i.account_id, i.key, decode(i.fingerprint, 'hex'), i.id, i.created_at from input i
          where exists (select 1 from issuers s
              where s.id = i.issuer_id and s.account_id = i.account_id and s.deleted_at is null)
            and exists (select 1 from payout_addresses p
              where p.id = i.payout_address_id and p.account_id = i.account_id and p.disabled_at is null)
            and (i.customer_id is null or exists (select 1 from customers c
              where c.id = i.customer_id and c.account_id = i.account_id and c.deleted_at is null))
          on conflict (account_id, key) do update
            set fingerprint = excluded.fingerprint, resource_id = excluded.resource_id,
              created_at = excluded.created_at
            where idempotency_keys.created_at <
              excluded.created_at - ${idempotencyWindowMs}::bigint * interval '1 millisecond'
          returning resource_id
        )
        insert into deposit_requests (
          id, account_id, status, version, machine_version, snapshot, amount_base_units, received_base_units,
          heading, reference, metadata, customer_id, issuer_id, payout_address_id, payer_policy_mode,
          expected_email, payer_reference, deposit_index, deposit_address, expires_at, created_at, updated_at,
          merchant_session_secret_digest)
        select i.id, i.account_id, i.status, 1, i.machine_version, i.snapshot, i.amount_base_units,
          i.received_base_units, i.heading, i.reference, i.metadata, i.customer_id, i.issuer_id,
          i.payout_address_id, i.payer_policy_mode, i.expected_email, i.payer_reference, null, null, i.expires_at,
          i.created_at, i.created_at, decode(i.secret_digest, 'hex')
        from input i join claimed c on c.resource_id = i.id
        returning id`
      const committed = new Set(inserted.map((r) => r.id))
      return batch.map((claim) => committed.has(claim.row.id))
    })

  const batcher = makeBatcher({
    maxBatch: MAX_BATCH,
    maxInFlight: MAX_IN_FLIGHT,
    run: (_key: string, batch: ReadonlyArray<CreateClaim>) => commit(batch)
  })

  /** Commits the create with the next statement; `true` when its key was claimed and the request inserted. */
  return { claim: (create: CreateClaim) => batcher.submit("creates", create) } as const
}
