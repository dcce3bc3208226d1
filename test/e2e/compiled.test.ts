import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { spawnService } from "../support/Process"

// `npm run build` emits JavaScript that plain `node` runs: no tsx, no TypeScript at run time.

const run = promisify(execFile)
const dataDir = mkdtempSync(join(tmpdir(), "deposits-compiled-"))
const bare = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !["DATABASE_URL", "NATS_URL", "CHAIN_RPC_URL"].includes(k))
) as Record<string, string>

beforeAll(async () => {
  await run(process.execPath, ["infra/tooling/build.mjs"])
}, 60_000)
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

describe("the compiled service", () => {
  it("is JavaScript that loads no TypeScript tooling", () => {
    const main = readFileSync(".build/main.js", "utf8")
    expect(main).not.toMatch(/from "tsx|require\("tsx/)
    expect(main).not.toMatch(/^import .* from "\.\.?\//m)
  })

  it("runs with plain node on the embedded defaults and serves health, OpenAPI and the pages' built scripts", async () => {
    const service = await spawnService(
      { ...bare, DATA_DIR: dataDir, DATABASE_URL: "", NATS_URL: "", CHAIN_RPC_URL: "" },
      60_000,
      ["--enable-source-maps", ".build/main.js"]
    )
    try {
      const health = (await (await fetch(`${service.baseUrl}/v1/health`)).json()) as { environment: string }
      expect(health.environment).toBe("sandbox")
      expect((await fetch(`${service.baseUrl}/openapi.json`)).status).toBe(200)
      // The pages' scripts come from the build (no esbuild at run time), byte for byte.
      for (const page of ["checkout", "dashboard"]) {
        const res = await fetch(`${service.baseUrl}/${page}/assets/app.js`)
        expect(res.status).toBe(200)
        expect(await res.text()).toBe(readFileSync(`.build/${page}/app.js`, "utf8"))
      }
    } finally {
      await service.stop()
    }
  })

  it("refuses an unsafe production start with exit 78, like the TypeScript entry", async () => {
    const outcome = await run(process.execPath, [".build/main.js"], {
      env: { ...bare, DATA_DIR: dataDir, SERVICE_ENV: "production" }
    }).then(
      () => ({ code: 0, stderr: "" }),
      (e: { code: number; stderr: string }) => e
    )
    expect(outcome.code).toBe(78)
    expect(outcome.stderr).toMatch(/^(refusing to start|invalid configuration): .*DEPOSIT_KEY_MNEMONIC/)
  })

  it("runs the CLI compiled too", async () => {
    const { stdout } = await run(process.execPath, [".build/cli.js", "--help"], {
      env: { ...bare, DATA_DIR: dataDir }
    })
    expect(stdout).toMatch(/sandbox/)
  })
})
