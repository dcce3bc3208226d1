import { jetstreamManager } from "@nats-io/jetstream"
import { connect } from "@nats-io/transport-node"
import pg from "pg"
import { deploymentStreamName, STREAMS } from "../../infra/jetstream/Streams"

/** The real PostgreSQL the machines run (CI starts it when stopped). */
export const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

/** The machines' NATS, where services under test that name `NATS_URL` declare their streams. */
const MACHINE_NATS = "127.0.0.1:4222"

/**
 * The streams a test database's deployment declared on the machines' NATS (named by its `deployment` row), deleted
 * with the database, so test runs do not pile up streams there. Nothing to do when it never ran migrations or
 * NATS is not there.
 */
const dropDeploymentStreams = async (databaseUrl: string) => {
  const c = new pg.Client({ connectionString: databaseUrl })
  let namespace: string | undefined
  try {
    await c.connect()
    namespace = (await c.query<{ stream_namespace: string }>("select stream_namespace from deployment"))
      .rows[0]?.stream_namespace
  } catch {
    return
  } finally {
    await c.end().catch(() => undefined)
  }
  if (namespace === undefined) return
  const nc = await connect({ servers: MACHINE_NATS, timeout: 1_000, reconnect: false }).catch(() => undefined)
  if (nc === undefined) return
  try {
    const jsm = await jetstreamManager(nc)
    for (const stream of STREAMS)
      await jsm.streams.delete(deploymentStreamName(stream.name, namespace)).catch(() => false)
  } catch {
    // JetStream off on that server: nothing was declared there.
  } finally {
    await nc.close()
  }
}

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
      await dropDeploymentStreams(url.toString())
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
