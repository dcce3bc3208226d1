import { PgClient } from "@effect/sql-pg"
import { Chunk, Effect, Option, Stream } from "effect"
import { orDieOnSql } from "../platform/SqlFailure"
import { DepositRequests, type ListOptions } from "./DepositRequests"
import { csvLine, REQUEST_COLUMNS, requestRow } from "./RequestCsv"

/** Requests read per chunk of an export: one keyset page of the list, then one read of their hashes. */
export const EXPORT_CHUNK = 500

/**
 * The CSV export of an account's requests (infra/decisions/0094-reconciliation-report-and-csv-export.md): the
 * list's own filters and order (newest first), read by keyset page and written chunk by chunk, so memory holds one
 * chunk whatever the range, and a slow reader slows the reads (the stream is pulled as the socket drains).
 */
const make = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const requests = yield* DepositRequests
  const encoder = new TextEncoder()

  /** Each request's transaction hashes: payments in, settlements and returns out, by time then hash. */
  const hashesOf = (uuids: ReadonlyArray<string>) =>
    Effect.map(
      uuids.length === 0
        ? Effect.succeed([])
        : sql<{ deposit_request_id: string; tx_hash: string }>`
            select r.id as deposit_request_id, h.tx_hash
            from unnest(${uuids}::uuid[]) as r(id)
            -- One index probe per request of the chunk, whatever the planner guesses of the tables' sizes.
            cross join lateral (
              select tx_hash, seen_at as at from chain_credits where deposit_request_id = r.id
              union all
              select tx_hash, created_at from transfers where deposit_request_id = r.id
            ) h order by h.at, h.tx_hash`,
      (rows) => {
        const byRequest = new Map<string, Array<string>>()
        for (const r of rows) {
          const list = byRequest.get(r.deposit_request_id)
          if (list === undefined) byRequest.set(r.deposit_request_id, [r.tx_hash])
          else list.push(r.tx_hash)
        }
        return byRequest
      }
    )

  const chunk = (accountId: string, filters: ExportFilters, cursor: string | undefined) =>
    Effect.gen(function* () {
      const page = yield* requests.list(accountId, { ...filters, limit: EXPORT_CHUNK, startingAfter: cursor })
      const hashes = yield* hashesOf(page.deposit_requests.map((r) => r.id.slice("dr_".length)))
      const text = page.deposit_requests
        .map((r) => csvLine(requestRow(r, hashes.get(r.id.slice("dr_".length)) ?? [])))
        .join("")
      return [Chunk.of(encoder.encode(text)), Option.fromNullable(page.next_cursor)] as const
    }).pipe(orDieOnSql)

  return {
    /** The CSV bytes: the header, then one line per request the filters select. */
    csv: (accountId: string, filters: ExportFilters) =>
      Stream.concat(
        Stream.make(encoder.encode(csvLine(REQUEST_COLUMNS))),
        Stream.paginateChunkEffect(undefined as string | undefined, (cursor) =>
          chunk(accountId, filters, cursor)
        )
      )
  } as const
})

/** The list's filters; the export reads every page. */
export type ExportFilters = Omit<ListOptions, "limit" | "startingAfter">

export class RequestExport extends Effect.Service<RequestExport>()("deposits/RequestExport", {
  effect: make,
  dependencies: [DepositRequests.Default]
}) {}
