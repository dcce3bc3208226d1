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
  it("builds to one module importing only node builtins, which a plain-node app imports through exports", async () => {
    const result = (await buildClient()) as {
      metafile: { outputs: Record<string, { imports: Array<{ path: string }> }> }
    }
    const imports = Object.values(result.metafile.outputs).flatMap((output) =>
      output.imports.map((i) => i.path)
    )
    expect(imports.every((path) => path.startsWith("node:"))).toBe(true)

    const app = mkdtempSync(join(tmpdir(), "merchant-app-"))
    try {
      mkdirSync(join(app, "node_modules"))
      symlinkSync(resolve("."), join(app, "node_modules", "deposit-request-service"), "dir")
      writeFileSync(join(app, "package.json"), JSON.stringify({ name: "merchant-app", type: "module" }))
      writeFileSync(
        join(app, "receive.js"),
        `import { sign, verify, WebhookVerificationError } from "deposit-request-service/webhooks"
const body = JSON.stringify({ id: "evt_1", type: "webhook.test", occurred_at: "2026-11-26T10:00:00Z", data: { webhook_id: "wh_1" } })
const headers = sign(body, "whsec_test")
const event = verify(Buffer.from(body), headers, ["whsec_new", "whsec_test"])
let refused
try { verify(JSON.parse(body), headers, "whsec_test") } catch (error) { refused = error instanceof WebhookVerificationError && error.code }
console.log(JSON.stringify({ type: event.type, refused }))
`
      )
      const { NODE_OPTIONS: _, ...env } = process.env
      const out = execFileSync(process.execPath, ["receive.js"], { cwd: app, env, encoding: "utf8" })
      expect(JSON.parse(out)).toEqual({ type: "webhook.test", refused: "body_reserialised" })
    } finally {
      rmSync(app, { recursive: true, force: true })
    }
  })
})
