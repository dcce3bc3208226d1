import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { describe, expect, it } from "@effect/vitest"
// @ts-expect-error: a plain .mjs build script, without declarations
import { buildClient } from "../../../infra/tooling/clientBuild.mjs"

// A merchant app outside the source tree, with the package installed by path (a link in its node_modules, as
// `npm install ../deposits` makes), imports `deposit-request-service/webhooks` in plain node: no tsx, no loader.

describe("the webhooks entry point", () => {
  it("builds to one module importing nothing, which a plain-node app imports through exports and a strict NodeNext project type-checks", async () => {
    const result = (await buildClient()) as {
      metafile: { outputs: Record<string, { imports: Array<{ path: string }> }> }
    }
    const imports = Object.values(result.metafile.outputs).flatMap((output) =>
      output.imports.map((i) => i.path)
    )
    // WebCrypto and TextEncoder are globals in every runtime: the module imports nothing, not even node:crypto.
    expect(imports).toEqual([])

    const app = mkdtempSync(join(tmpdir(), "merchant-app-"))
    try {
      mkdirSync(join(app, "node_modules"))
      symlinkSync(resolve("."), join(app, "node_modules", "deposit-request-service"), "dir")
      writeFileSync(join(app, "package.json"), JSON.stringify({ name: "merchant-app", type: "module" }))
      writeFileSync(
        join(app, "receive.js"),
        `import { sign, verify, WebhookVerificationError } from "deposit-request-service/webhooks"
const body = JSON.stringify({ id: "evt_1", type: "webhook.test", occurred_at: "2026-11-26T10:00:00Z", data: { webhook_id: "wh_1" } })
const headers = await sign(body, "whsec_test")
const event = await verify(Buffer.from(body), headers, ["whsec_new", "whsec_test"])
let refused
try { await verify(JSON.parse(body), headers, "whsec_test") } catch (error) { refused = error instanceof WebhookVerificationError && error.code }
console.log(JSON.stringify({ type: event.type, refused }))
`
      )
      const { NODE_OPTIONS: _, ...env } = process.env
      const out = execFileSync(process.execPath, ["receive.js"], { cwd: app, env, encoding: "utf8" })
      expect(JSON.parse(out)).toEqual({ type: "webhook.test", refused: "body_reserialised" })

      // Its declarations, under a strict NodeNext project: the event narrows by type to the contract's fields.
      writeFileSync(
        join(app, "receive.ts"),
        `import { verify, type Event } from "deposit-request-service/webhooks"
export const amountSettled = async (raw: Buffer, headers: Record<string, string>): Promise<string | undefined> => {
  const event: Event = await verify(raw, headers, ["whsec_new", "whsec_old"], { tolerance: 60 })
  if (event.type === "deposit_request.settled") return event.data.deposit_request.amount
  if (event.type === "webhook.test") return event.data.webhook_id
  return undefined
}
// Fails to compile if Event were any: a test event carries no deposit request.
export const noRequest = (event: Event) =>
  // @ts-expect-error
  event.type === "webhook.test" ? event.data.deposit_request : undefined
`
      )
      writeFileSync(
        join(app, "tsconfig.json"),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            module: "nodenext",
            moduleResolution: "nodenext",
            target: "es2022",
            noEmit: true,
            types: ["node"],
            typeRoots: [resolve("node_modules/@types")]
          },
          files: ["receive.ts"]
        })
      )
      execFileSync(process.execPath, [resolve("node_modules/typescript/bin/tsc"), "-p", "."], {
        cwd: app,
        env,
        encoding: "utf8"
      })
    } finally {
      rmSync(app, { recursive: true, force: true })
    }
  })
})
