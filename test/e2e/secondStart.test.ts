import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { environmentWithout, spawnService } from "../support/Process"

/**
 * Issue 48: a second `npm start` in the folder of a running one, or on its port, says in one line what is running
 * and exits 1, before it starts anything of its own (no second chain on the first one's files, no stack).
 */
const dataDir = mkdtempSync(join(tmpdir(), "deposits-first-"))
const otherDir = mkdtempSync(join(tmpdir(), "deposits-other-"))
const bare = environmentWithout([
  "DATABASE_URL",
  "NATS_URL",
  "CHAIN_RPC_URL",
  "PORT",
  "PUBLIC_BASE_URL",
  "HOST"
])
const embedded = { DATABASE_URL: "", NATS_URL: "", CHAIN_RPC_URL: "" }
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true })
  rmSync(otherDir, { recursive: true, force: true })
})

/** `npm start` run to its end: its exit code, what it printed, and how long it took. */
const startToEnd = (env: Record<string, string>) =>
  new Promise<{ code: number | null; output: string; ms: number }>((done) => {
    const began = Date.now()
    const child = spawn(process.execPath, ["--import", "tsx", "src/app/main.ts"], {
      env: { ...bare, ...embedded, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.on("data", (d) => {
      output += d
    })
    child.stderr.on("data", (d) => {
      output += d
    })
    // A start that was not refused would run until stopped.
    const limit = setTimeout(() => child.kill("SIGKILL"), 60_000)
    child.once("exit", (code) => {
      clearTimeout(limit)
      done({ code, output, ms: Date.now() - began })
    })
  })

describe("a second npm start", () => {
  it("in the same folder, or on the same port, names what runs and exits 1; the first keeps running", async () => {
    const first = await spawnService({ ...bare, ...embedded, DATA_DIR: dataDir })
    try {
      const port = new URL(first.baseUrl).port
      const chainNote = readFileSync(join(dataDir, "chain", "node.json"), "utf8")

      const sameFolder = await startToEnd({ DATA_DIR: dataDir, PORT: "0" })
      expect(sameFolder.code, sameFolder.output).toBe(1)
      expect(sameFolder.output.trim().split("\n"), sameFolder.output).toHaveLength(1)
      expect(sameFolder.output).toMatch(
        new RegExp(
          `^refusing to start: \`npm start\` \\(pid ${first.child.pid}, ${first.baseUrl}\\) is already running in this folder \\(DATA_DIR=${dataDir}\\), .*: stop it first, or give this one its own DATA_DIR\\n$`
        )
      )

      const samePort = await startToEnd({ DATA_DIR: otherDir, PORT: port })
      expect(samePort.code, samePort.output).toBe(1)
      expect(samePort.output).toBe(
        `refusing to start: port ${port} on 127.0.0.1 is already in use by a deposits service (sandbox): stop it first, or start this one with another PORT\n`
      )
      // Refused before starting anything: no database, no chain in the other folder.
      expect(existsSync(join(otherDir, "chain")), samePort.output).toBe(false)

      // The first still serves, and still tells the CLI where its chain is.
      expect((await fetch(`${first.baseUrl}/v1/health`)).status).toBe(200)
      expect(readFileSync(join(dataDir, "chain", "node.json"), "utf8")).toBe(chainNote)
    } finally {
      await first.stop()
    }
    // Stopped, it leaves no note behind, and the folder starts again.
    expect(existsSync(join(dataDir, "run", "service.json"))).toBe(false)
    const again = await spawnService({ ...bare, ...embedded, DATA_DIR: dataDir })
    await again.stop()
  }, 240_000)
})
