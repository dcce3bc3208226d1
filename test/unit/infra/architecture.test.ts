import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { cruise, type ICruiseResult, type IForbiddenRuleType } from "dependency-cruiser"

// The rules `npm run lint` enforces, run here on a planted tree, so a rule that stopped catching anything fails.
const { forbidden } = createRequire(import.meta.url)("../../../infra/tooling/architecture.cjs") as {
  forbidden: Array<IForbiddenRuleType>
}

const planted = mkdtempSync(join(tmpdir(), "architecture-"))
afterAll(() => rmSync(planted, { recursive: true, force: true }))

const plant = (files: Record<string, string>) => {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(planted, path)), { recursive: true })
    writeFileSync(join(planted, path), text)
  }
}

const violations = async (roots: Array<string>) => {
  const result = await cruise(roots, { ruleSet: { forbidden }, validate: true, baseDir: planted })
  return (result.output as ICruiseResult).summary.violations.map((v) => `${v.rule.name} ${v.from} → ${v.to}`)
}

describe("the architecture rules", () => {
  it("refuse a service importing the HTTP layer or the composition root", async () => {
    plant({
      "src/Config.ts": "export const config = 1\n",
      "services/Wrong.ts": 'import { config } from "../src/Config"\nexport const wrong = config\n'
    })
    expect(await violations(["services", "src"])).toContain(
      "services-know-no-http services/Wrong.ts → src/Config.ts"
    )
  })

  it("refuse an import cycle", async () => {
    plant({
      "services/Ping.ts": 'import { pong } from "./Pong"\nexport const ping = () => pong\n',
      "services/Pong.ts": 'import { ping } from "./Ping"\nexport const pong = () => ping\n'
    })
    const found = await violations(["services"])
    expect(found.some((v) => v.startsWith("no-cycles services/Ping.ts"))).toBe(true)
  })

  it("refuse a machine or the domain room importing a service", async () => {
    plant({
      "services/Ids.ts": "export const ids = 1\n",
      "services/domain/Leaky.ts": 'import { ids } from "../Ids"\nexport const leaky = ids\n',
      "machines/Impure.ts": 'import { ids } from "../services/Ids"\nexport const impure = ids\n'
    })
    const found = await violations(["services", "machines"])
    expect(found).toContain("domain-depends-on-nothing-of-ours services/domain/Leaky.ts → services/Ids.ts")
    expect(found).toContain("machines-are-pure machines/Impure.ts → services/Ids.ts")
  })
})
