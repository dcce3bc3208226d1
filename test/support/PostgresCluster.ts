import { execFile, execFileSync, spawn } from "node:child_process"
import { chownSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { freePort } from "./Process"

const run = promisify(execFile)
const BIN = "/usr/lib/postgresql/15/bin"

/**
 * A PostgreSQL cluster of the test's own, in a temporary directory on a free port, so a test can kill and restart
 * it without touching the machine's server. Run as the `postgres` user (initdb refuses root), trust auth on
 * 127.0.0.1 only.
 */
export interface PostgresCluster {
  readonly url: string
  readonly port: number
  /** Stops the server: `immediate` is a crash (no checkpoint; recovery on the next start). */
  readonly stop: (mode?: "immediate" | "fast") => Promise<void>
  readonly start: () => Promise<void>
  /** Stops it for good and removes its directory. */
  readonly destroy: () => Promise<void>
}

const asPostgres = (command: string, args: ReadonlyArray<string>) =>
  run("runuser", ["-u", "postgres", "--", join(BIN, command), ...args])

export const startPostgresCluster = async (): Promise<PostgresCluster> => {
  const dir = mkdtempSync(join(tmpdir(), "deposits-pg-"))
  const data = join(dir, "data")
  chownSync(dir, uidOf("postgres"), gidOf("postgres"))
  await asPostgres("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"])
  const port = await freePort()
  const start = async () => {
    // Stopped with pg_ctl, not through this child: runuser's pid is not the postmaster's.
    spawn(
      "runuser",
      [
        "-u",
        "postgres",
        "--",
        join(BIN, "postgres"),
        "-D",
        data,
        "-p",
        String(port),
        "-k",
        dir,
        "-c",
        "listen_addresses=127.0.0.1",
        "-c",
        "fsync=off",
        "-c",
        "max_connections=100"
      ],
      { stdio: "ignore" }
    )
    const until = Date.now() + 30_000
    for (;;) {
      try {
        await run(join(BIN, "pg_isready"), ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres"])
        return
      } catch (error) {
        if (Date.now() > until) throw error
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }
  }
  const stop = async (mode: "immediate" | "fast" = "fast") => {
    await asPostgres("pg_ctl", ["stop", "-D", data, "-m", mode, "-w"]).catch(() => undefined)
  }
  await start()
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stop,
    start,
    destroy: async () => {
      await stop("immediate")
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

const idOf = (flag: "-u" | "-g", name: string) => Number(execFileSync("id", [flag, name]).toString().trim())
const uidOf = (name: string) => idOf("-u", name)
const gidOf = (name: string) => idOf("-g", name)
