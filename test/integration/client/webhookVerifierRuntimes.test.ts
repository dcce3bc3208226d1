import { spawnSync } from "node:child_process"
import { once } from "node:events"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { build } from "esbuild"
import { launchChromium } from "../../support/Browser"
import { checkVectors, type VectorResult, type WebhookVector } from "../../support/webhookVectors/check"
import { VECTORS_FILE, webhookVectors } from "../../support/webhookVectors/generate"

// One webhook verifier (src/client/webhooks.ts, WebCrypto only) and one test vector
// (test/fixtures/webhookVectors.json, from the service's signer), checked in Node in process, in Deno and Bun
// (their npm packages, node_modules/.bin) running the TypeScript as it is, and in Chromium loading an esbuild bundle
// (decision 0090). In each runtime a copy of the vector with wrong expected outcomes must fail exactly those cases.

const vectors = JSON.parse(readFileSync(VECTORS_FILE, "utf8")) as ReadonlyArray<WebhookVector>

/** Two cases whose expected outcome is made wrong: a valid delivery said refused, a v2 header said valid. */
const MUTATED = ["a valid delivery", "another scheme (v2)"]
const mutated: ReadonlyArray<WebhookVector> = vectors.map((vector) =>
  !MUTATED.includes(vector.name)
    ? vector
    : vector.expected.ok
      ? { ...vector, expected: { ok: false, code: "signature_mismatch" } }
      : { ...vector, expected: { ok: true, eventId: "evt_0193a1f4a8a87c3a9f1f7a1e2b3c4d5e" } }
)
const scratch = mkdtempSync(join(tmpdir(), "webhook-vectors-"))
const MUTATED_FILE = join(scratch, "mutated.json")
writeFileSync(MUTATED_FILE, JSON.stringify(mutated))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

const everyCasePasses = (results: ReadonlyArray<VectorResult>) => {
  expect(results.map((r) => r.name)).toEqual(vectors.map((v) => v.name))
  expect(results.filter((r) => !r.pass)).toEqual([])
}

const onlyTheMutantsFail = (results: ReadonlyArray<VectorResult>) => {
  expect(results.map((r) => r.name)).toEqual(vectors.map((v) => v.name))
  expect(results.filter((r) => !r.pass).map((r) => r.name)).toEqual(MUTATED)
}

/** A runtime's runner over a vectors file: its exit code and the one JSON line it prints. */
const runner = (bin: string, args: ReadonlyArray<string>, file: string) => {
  const { NODE_OPTIONS: _, ...env } = process.env
  const run = spawnSync(resolve("node_modules/.bin", bin), [...args, file], {
    env: { ...env, DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
    encoding: "utf8",
    timeout: 60_000
  })
  const line = run.stdout.split("\n").find((l) => l.startsWith("{"))
  if (line === undefined)
    throw new Error(`${bin} printed no result (${run.status}): ${run.stdout}\n${run.stderr}`)
  return {
    status: run.status,
    ...(JSON.parse(line) as { runtime: string; results: ReadonlyArray<VectorResult> })
  }
}

const deno = (file: string) =>
  runner(
    "deno",
    ["run", "--sloppy-imports", "--no-lock", `--allow-read=${file}`, "test/support/webhookVectors/deno.ts"],
    file
  )
const bun = (file: string) => runner("bun", ["run", "test/support/webhookVectors/bun.ts"], file)

describe("the webhook verifier in every runtime", () => {
  it("the committed vector is what the service's signer gives (generate.ts), with every outcome covered", () => {
    expect(vectors).toEqual(webhookVectors)
    const outcomes = new Set(vectors.map((v) => (v.expected.ok ? "ok" : v.expected.code)))
    expect([...outcomes].sort()).toEqual([
      "body_reserialised",
      "missing_header",
      "ok",
      "signature_mismatch",
      "timestamp_outside_tolerance",
      "unsupported_scheme"
    ])
    // The rotation cases carry two sha256 elements (decision 0083).
    expect(vectors.filter((v) => v.header.split("sha256=").length === 3).length).toBe(3)
  })

  it("Node, in process", async () => {
    everyCasePasses(await checkVectors(vectors))
    onlyTheMutantsFail(await checkVectors(mutated))
  })

  it("Deno (deno run, the TypeScript as it is)", () => {
    const good = deno(VECTORS_FILE)
    expect(good.runtime).toMatch(/^deno 2\./)
    everyCasePasses(good.results)
    expect(good.status).toBe(0)
    const bad = deno(MUTATED_FILE)
    onlyTheMutantsFail(bad.results)
    expect(bad.status).toBe(1)
  })

  it("Bun (bun run, the TypeScript as it is)", () => {
    const good = bun(VECTORS_FILE)
    expect(good.runtime).toMatch(/^bun 1\./)
    everyCasePasses(good.results)
    expect(good.status).toBe(0)
    const bad = bun(MUTATED_FILE)
    onlyTheMutantsFail(bad.results)
    expect(bad.status).toBe(1)
  })

  it("Chromium (an esbuild bundle for the browser, through page.evaluate)", async () => {
    // platform "browser": a Node import anywhere in the verifier would fail this build.
    const bundle = await build({
      entryPoints: ["test/support/webhookVectors/browser.ts"],
      bundle: true,
      write: false,
      format: "iife",
      platform: "browser",
      target: "es2022",
      logLevel: "silent"
    })
    const script = bundle.outputFiles[0]!.text
    // Served from 127.0.0.1, a secure context as an https page is (WebCrypto's subtle needs one), as a script file.
    const server = createServer((req, res) => {
      if (req.url === "/verifier.js") res.writeHead(200, { "content-type": "text/javascript" }).end(script)
      else
        res
          .writeHead(200, { "content-type": "text/html", "content-security-policy": "script-src 'self'" })
          .end('<!doctype html><title>webhook vectors</title><script src="/verifier.js"></script>')
    })
    server.listen(0, "127.0.0.1")
    await once(server, "listening")
    const browser = await launchChromium()
    try {
      const page = await browser.newPage()
      const errors: Array<string> = []
      page.on("pageerror", (e) => errors.push(e.message))
      await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`)
      const check = (input: ReadonlyArray<WebhookVector>) =>
        page.evaluate(async (v) => {
          const run = (globalThis as { checkWebhookVectors?: typeof checkVectors }).checkWebhookVectors
          return {
            // No Node shims on the page: the verifier stands on the browser's own WebCrypto.
            node: typeof (globalThis as { Buffer?: unknown }).Buffer !== "undefined",
            secure: (globalThis as { isSecureContext?: boolean }).isSecureContext,
            results: run === undefined ? [] : await run(v)
          }
        }, input)
      const good = await check(vectors)
      expect(good.node).toBe(false)
      expect(good.secure).toBe(true)
      everyCasePasses(good.results)
      onlyTheMutantsFail((await check(mutated)).results)
      expect(errors).toEqual([])
    } finally {
      await browser.close()
      server.close()
    }
  })
})
