import { randomUUID } from "node:crypto"
import type pg from "pg"

/**
 * An `apply_actor_steps_v3` input stepping `count` requests straight in SQL, for tests of the function itself: their
 * rows as stored, one version on, status and snapshot unchanged, one event each (kept in the step history); with
 * `withLifecycle`, a lifecycle event on the first. Rows are picked at random among those `where` selects.
 */
export const actorStepsInput = async (
  client: pg.Client,
  count: number,
  options: { readonly where?: string; readonly withLifecycle?: boolean } = {}
) => {
  const { rows } = await client.query<{ id: string; version: string; status: string; snapshot: unknown }>(
    `select id, version::text, status, snapshot from deposit_requests ${options.where === undefined ? "" : `where ${options.where}`} order by random() limit $1`,
    [count]
  )
  const at = new Date().toISOString()
  return JSON.stringify({
    at,
    requests: rows.map((r) => ({
      id: r.id,
      expected_version: r.version,
      version: String(BigInt(r.version) + 1n),
      status: r.status,
      snapshot: r.snapshot,
      received_base_units: "0",
      deposit_address: null
    })),
    instance: "test",
    events: rows.map((r) => ({
      deposit_request_id: r.id,
      event_id: randomUUID(),
      version: String(BigInt(r.version) + 1n),
      event: { type: "deposit_request.checked", at }
    })),
    lifecycle:
      options.withLifecycle === true
        ? [
            {
              n: 0,
              id: randomUUID(),
              deposit_request_id: rows[0]!.id,
              type: "deposit_request.checked",
              dedupe: randomUUID(),
              body: "{}"
            }
          ]
        : [],
    commands: []
  })
}

/**
 * Copies of one stored request row, `count` of them (fresh ids, no deposit slot), filling pages as inserts fill
 * them: a table grown without going through the service.
 */
export const copyRequestRows = (client: pg.Client, count: number) =>
  client.query(
    `insert into deposit_requests
     select (jsonb_populate_record(null::deposit_requests, to_jsonb(d) || jsonb_build_object(
       'id', gen_random_uuid(), 'deposit_index', null, 'deposit_address', null))).*
     from (select * from deposit_requests limit 1) d, generate_series(1, $1::int)`,
    [count]
  )
