import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { spawnService, environmentWithout } from "../support/Process"

/**
 * Issue 35: the README's quickstart works as written. The blocks marked `<!-- quickstart -->` are run, in order, in
 * one bash with `set -euo pipefail`, against `PORT=8181 WEBHOOKS_ALLOW_PRIVATE=true npm start` on its embedded
 * defaults. Issue 48: the second terminal is given `API` alone, the one setting curl and the CLI read (no `PORT`, so
 * a command that fell back to 8080 fails the run); against a plain `npm start` the run stops at the webhook step with
 * the service's refusal printed, rather than carrying `null` on as the secret.
 */
const README = readFileSync(new URL("../../README.md", import.meta.url), "utf8")

/** The fenced blocks that follow a `<!-- quickstart -->` line, in order. */
const quickstartBlocks = (markdown: string): Array<string> =>
  [...markdown.matchAll(/<!-- quickstart -->\n```sh\n([\s\S]*?)\n```/g)].map((m) => m[1]!)

const dataDir = mkdtempSync(join(tmpdir(), "deposits-quickstart-"))
const plainDataDir = mkdtempSync(join(tmpdir(), "deposits-quickstart-plain-"))
const bare = environmentWithout([
  "DATABASE_URL",
  "NATS_URL",
  "CHAIN_RPC_URL",
  "WEBHOOKS_ALLOW_PRIVATE",
  "PORT",
  "HOST",
  "PUBLIC_BASE_URL",
  "API"
])
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true })
  rmSync(plainDataDir, { recursive: true, force: true })
})

/** The port: anything but the 8080 the README and the CLI default to. */
const QUICKSTART_PORT = 8181

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

  it("runs as written on port 8181: the request is settled and the receiver verified its webhooks", async () => {
    // The receiver listens where the quickstart says; the service where the issue put it.
    expect(await portIsFree(9000)).toBe(true)
    expect(await portIsFree(QUICKSTART_PORT)).toBe(true)
    const service = await spawnService({
      ...bare,
      DATA_DIR: dataDir,
      PORT: String(QUICKSTART_PORT),
      DATABASE_URL: "",
      NATS_URL: "",
      CHAIN_RPC_URL: "",
      WEBHOOKS_ALLOW_PRIVATE: "true"
    })
    try {
      expect(service.baseUrl).toBe(`http://localhost:${QUICKSTART_PORT}`)
      // `API` only: `devnet attest` and `devnet pay` find the service through it, not through PORT.
      const run = await bash(quickstartBlocks(README).join("\n"), {
        ...bare,
        DATA_DIR: dataDir,
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

  it("stops at the webhook step with the service's refusal against a plain `npm start`", async () => {
    const service = await spawnService({
      ...bare,
      DATA_DIR: plainDataDir,
      DATABASE_URL: "",
      NATS_URL: "",
      CHAIN_RPC_URL: ""
    })
    try {
      const run = await bash(quickstartBlocks(README).join("\n"), {
        ...bare,
        DATA_DIR: plainDataDir,
        API: service.baseUrl
      })
      const shown = `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`
      expect(run.code, shown).not.toBe(0)
      // The service's own envelope, as it answered, names the setting that fixes it.
      const refusal = run.stderr.split("\n").find((l) => l.startsWith('{"error":'))
      expect(refusal, shown).toBeDefined()
      expect(refusal).toMatch(/WEBHOOKS_ALLOW_PRIVATE=true/)
      // Nothing after the webhook step ran: no issuer, no request, no `null` secret carried on.
      expect(run.stdout, shown).toBe("")
      expect(service.output()).not.toMatch(/lifecycle dr_[0-9A-Za-z]/)
    } finally {
      await service.stop()
    }
  }, 240_000)
})
