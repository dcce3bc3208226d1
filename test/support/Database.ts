import pg from "pg"

/** The real PostgreSQL the machines run (CI starts it when stopped). */
export const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

/** A fresh database per test file, so files run in parallel without sharing rows. */
export const createTestDatabase = async (): Promise<{ url: string; drop: () => Promise<void> }> => {
  const name = `t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  const admin = new pg.Client({ connectionString: ADMIN_URL })
  await admin.connect()
  await admin.query(`create database ${name}`)
  await admin.end()
  const url = new URL(ADMIN_URL)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: ADMIN_URL })
      await c.connect()
      await c.query(`drop database if exists ${name} with (force)`)
      await c.end()
    }
  }
}

/** Row counts of every table of ours, to prove that a refused request wrote nothing. */
export const countRows = async (url: string): Promise<Record<string, number>> => {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    const tables = await c.query<{ table_name: string }>(
      "select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by 1"
    )
    const counts: Record<string, number> = {}
    for (const { table_name } of tables.rows) {
      const r = await c.query<{ n: string }>(`select count(*)::text as n from "${table_name}"`)
      counts[table_name] = Number(r.rows[0]?.n ?? 0)
    }
    return counts
  } finally {
    await c.end()
  }
}
