import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { spawnService, environmentWithout } from "../support/Process"

/**
 * Issue 35: the README's quickstart works as written. The blocks marked `<!-- quickstart -->` are run, in order, in
 * one bash with `set -euo pipefail`, against `WEBHOOKS_ALLOW_PRIVATE=true npm start` on its embedded defaults (the
 * only difference: the port, which `API` names for curl and `PORT` for the CLI, as they would on 8080).
 */
const README = readFileSync(new URL("../../README.md", import.meta.url), "utf8")

/** The fenced blocks that follow a `<!-- quickstart -->` line, in order. */
const quickstartBlocks = (markdown: string): Array<string> =>
  [...markdown.matchAll(/<!-- quickstart -->\n```sh\n([\s\S]*?)\n```/g)].map((m) => m[1]!)

const dataDir = mkdtempSync(join(tmpdir(), "deposits-quickstart-"))
const bare = environmentWithout(["DATABASE_URL", "NATS_URL", "CHAIN_RPC_URL"])
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const portIsFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = createServer()
    server.once("error", () => resolve(false))
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)))
  })

/** Runs the script as one bash session; the receiver it starts is stopped whatever happens. */
const bash = (script: string, env: Record<string, string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const guarded = `set -euo pipefail\ntrap 'kill \${RECEIVER:-} 2>/dev/null || true' EXIT\n${script}`
    const child = spawn("bash", ["-c", guarded], {
      env,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => {
      stdout += d
    })
    child.stderr.on("data", (d) => {
      stderr += d
    })
    child.once("exit", (code) => resolve({ code, stdout, stderr }))
  })

describe("the README's quickstart", () => {
  it("has its blocks: the account and receiver, the request, the payment", () => {
    const blocks = quickstartBlocks(README)
    expect(blocks).toHaveLength(3)
    expect(blocks.join("\n")).toMatch(/devnet pay --request \$DR --mode exact/)
  })

  it("runs as written: the request is settled and the receiver verified its webhooks", async () => {
    // The receiver listens where the quickstart says.
    expect(await portIsFree(9000)).toBe(true)
    const service = await spawnService({
      ...bare,
      DATA_DIR: dataDir,
      DATABASE_URL: "",
      NATS_URL: "",
      CHAIN_RPC_URL: "",
      WEBHOOKS_ALLOW_PRIVATE: "true"
    })
    try {
      const run = await bash(quickstartBlocks(README).join("\n"), {
        ...bare,
        DATA_DIR: dataDir,
        PORT: new URL(service.baseUrl).port,
        API: service.baseUrl
      })
      expect(run.code, `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`).toBe(0)
      const lines = run.stdout.trim().split("\n")
      // The request as created, then its transfers, then the receiver's log.
      expect(lines.filter((l) => /^\{"kind":"payment","amount":"25.000000"/.test(l))).toHaveLength(1)
      expect(lines[0]).toBe("awaiting_payer")
      expect(lines[1]).toMatch(new RegExp(`^${service.baseUrl}/checkout/dr_`))
      expect(lines.filter((l) => /^\{"kind":"settlement","amount":"25.000000"/.test(l))).toHaveLength(1)
      const verified = lines.filter((l) => l.startsWith("verified "))
      expect(verified.map((l) => l.split(" ")[1])).toEqual([
        "deposit_request.ready",
        "deposit_request.deposited",
        "deposit_request.settled"
      ])
      expect(verified.at(-1)).toMatch(/ dr_\S+ settled$/)
      // The service logged each change in one line.
      expect(service.output()).toMatch(/lifecycle dr_\S+ .*→ settled/)
    } finally {
      await service.stop()
    }
  }, 240_000)
})
