import type pg from "pg"

/** What one call read from a table: its sequential scans, and the rows those scans and its indexes' scans fetched. */
export interface TableReads {
  readonly seqScans: number
  readonly tuples: number
}

/**
 * What `call` read from the tables and indexes named, counted from the session's own statistics, so a test of
 * plans times nothing. The counts not yet reported include earlier statements', so they are taken before and after
 * `call` in one transaction (nothing is reported until it ends). For an index, the entries its scans returned.
 */
export const readsDuring = async <A>(
  client: pg.Client,
  relations: { readonly tables?: ReadonlyArray<string>; readonly indexes?: ReadonlyArray<string> },
  call: () => Promise<A>
) => {
  const tables = relations.tables ?? []
  const indexes = relations.indexes ?? []
  const counts = async () => {
    const t = await client.query<{ relname: string; seq_scan: string; tuples: string }>(
      `select relname, seq_scan::text, (seq_tup_read + coalesce(idx_tup_fetch, 0))::text as tuples
       from pg_stat_xact_user_tables where relname = any($1)`,
      [tables]
    )
    const i = await client.query<{ name: string; entries: string }>(
      `select name, pg_stat_get_xact_tuples_returned(name::regclass)::text as entries from unnest($1::text[]) name`,
      [indexes]
    )
    return {
      tables: new Map(
        t.rows.map((r) => [r.relname, { seqScans: Number(r.seq_scan), tuples: Number(r.tuples) }])
      ),
      indexes: new Map(i.rows.map((r) => [r.name, Number(r.entries)]))
    }
  }
  await client.query("begin")
  const before = await counts()
  const value = await call()
  const after = await counts()
  await client.query("commit")
  const tableReads: Record<string, TableReads> = {}
  for (const name of tables) {
    const [b, a] = [before.tables.get(name)!, after.tables.get(name)!]
    tableReads[name] = { seqScans: a.seqScans - b.seqScans, tuples: a.tuples - b.tuples }
  }
  const indexEntries: Record<string, number> = {}
  for (const name of indexes) indexEntries[name] = after.indexes.get(name)! - before.indexes.get(name)!
  return { value, tables: tableReads, indexEntries }
}
