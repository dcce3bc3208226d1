import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { cruise, type ICruiseResult, type IForbiddenRuleType } from "dependency-cruiser"

// The rules `npm run lint` enforces, run here on a planted tree, so a rule that stopped catching anything fails.
const require = createRequire(import.meta.url)
const { forbidden } = require("../../../infra/tooling/architecture.cjs") as {
  forbidden: Array<IForbiddenRuleType>
}
const { ROOMS, KNOW_THE_MACHINE, SRC_ROOMS } = require("../../../infra/tooling/rooms.cjs") as {
  ROOMS: Record<string, Array<string>>
  KNOW_THE_MACHINE: Array<string>
  SRC_ROOMS: Record<string, Array<string>>
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
      "src/app/Config.ts": "export const config = 1\n",
      "services/Wrong.ts": 'import { config } from "../src/app/Config"\nexport const wrong = config\n'
    })
    expect(await violations(["services", "src"])).toContain(
      "services-know-no-http services/Wrong.ts → src/app/Config.ts"
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

  // Every room imports every other room and the machine from a planted file of its own; exactly the arrows its
  // rule forbids are reported, so a rule that stopped catching (or started refusing an allowed room) fails here.
  it("hold every room to the rooms it may import", async () => {
    const rooms = Object.keys(ROOMS)
    const files: Record<string, string> = { "machines/Machine.ts": "export const machine = 1\n" }
    for (const room of [...rooms, "domain"])
      files[`services/${room}/Target.ts`] = `export const ${room} = 1\n`
    for (const room of rooms) {
      const others = [...rooms.filter((r) => r !== room), "domain"]
      files[`services/${room}/Reaches.ts`] = [
        ...others.map((other) => `import { ${other} } from "../${other}/Target"`),
        'import { machine } from "../../machines/Machine"',
        `export const reaches = [${[...others, "machine"].join(", ")}]`
      ].join("\n")
    }
    plant(files)
    const found = await violations(["services", "machines"])
    for (const room of rooms) {
      const reported = found
        .filter((v) => v.startsWith(`room-${room} `))
        .map((v) => v.split(" → ")[1])
        .sort()
      const expected = [
        ...rooms.filter((r) => r !== room && !ROOMS[room]!.includes(r)).map((r) => `services/${r}/Target.ts`),
        ...(KNOW_THE_MACHINE.includes(room) ? [] : ["machines/Machine.ts"])
      ].sort()
      expect(reported, room).toEqual(expected)
    }
    expect(rooms.sort()).toEqual(
      ["actors", "chain", "depositRequests", "merchants", "payer", "platform", "treasury", "webhooks"].sort()
    )
  })

  it("refuse a service outside every room", async () => {
    plant({
      "services/platform/Ids.ts": "export const ids = 1\n",
      "services/Loose.ts": 'import { ids } from "./platform/Ids"\nexport const loose = ids\n'
    })
    expect(await violations(["services"])).toContain(
      "services-live-in-rooms services/Loose.ts → services/platform/Ids.ts"
    )
  })

  it("keep webhooks away from the chain, the actors and the deposit requests", async () => {
    plant({
      "services/chain/Watch.ts": "export const watch = 1\n",
      "services/actors/Host.ts": "export const host = 1\n",
      "services/depositRequests/Wire.ts": "export const wire = 1\n",
      "services/webhooks/Leak.ts":
        'import { watch } from "../chain/Watch"\nimport { host } from "../actors/Host"\nimport { wire } from "../depositRequests/Wire"\nexport const leak = [watch, host, wire]\n'
    })
    const found = await violations(["services"])
    for (const target of [
      "services/chain/Watch.ts",
      "services/actors/Host.ts",
      "services/depositRequests/Wire.ts"
    ])
      expect(found).toContain(`room-webhooks services/webhooks/Leak.ts → ${target}`)
  })

  // The same for src/: every room imports every other, and exactly the arrows its rule forbids are reported. So
  // nothing but the command line reaches the composition root, and nothing under the HTTP contract reaches a page.
  it("hold every room of src/ to the rooms it may import", async () => {
    const rooms = Object.keys(SRC_ROOMS)
    const files: Record<string, string> = {}
    for (const room of rooms) files[`src/${room}/Target.ts`] = `export const ${room} = 1\n`
    for (const room of rooms) {
      const others = rooms.filter((r) => r !== room)
      files[`src/${room}/Reaches.ts`] = [
        ...others.map((other) => `import { ${other} } from "../${other}/Target"`),
        `export const reaches = [${others.join(", ")}]`
      ].join("\n")
    }
    plant(files)
    const found = await violations(["src"])
    for (const room of rooms) {
      const reported = found
        .filter((v) => v.startsWith(`src-room-${room} `))
        .map((v) => v.split(" → ")[1])
        .sort()
      const expected = rooms
        .filter((r) => r !== room && !SRC_ROOMS[room]!.includes(r))
        .map((r) => `src/${r}/Target.ts`)
        .sort()
      expect(reported, room).toEqual(expected)
    }
    // Only the command line, the other entry point, reaches the composition root.
    expect(rooms.filter((r) => SRC_ROOMS[r]!.includes("app"))).toEqual(["cli"])
    expect(rooms.sort()).toEqual(["app", "cli", "client", "http", "sandbox", "tools", "web"])
  })

  it("refuse a module of src/ outside every room", async () => {
    plant({
      "src/http/Api.ts": "export const api = 1\n",
      "src/Loose.ts": 'import { api } from "./http/Api"\nexport const loose = api\n'
    })
    expect(await violations(["src"])).toContain("src-lives-in-rooms src/Loose.ts → src/http/Api.ts")
  })

  it("keep browser code on its own pages and the contract's generated types", async () => {
    plant({
      "src/client/openapi.d.ts": "export interface components { schemas: { A: { a: string } } }\n",
      "src/http/Errors.ts": "export const errors = 1\n",
      "services/domain/Amount.ts": "export const amount = 1\n",
      "src/web/checkout/page/amounts.ts": "export const usdc = 1\n",
      "src/web/dashboard/page/app.ts": [
        'import type { components } from "../../../client/openapi"',
        'import { usdc } from "../../checkout/page/amounts"',
        'import { errors } from "../../../http/Errors"',
        'import { amount } from "../../../../services/domain/Amount"',
        "export type A = components['schemas']['A']",
        "export const app = [usdc, errors, amount]"
      ].join("\n")
    })
    const found = (await violations(["src"])).filter((v) => v.startsWith("pages-use-only-the-contract "))
    expect(found.sort()).toEqual([
      "pages-use-only-the-contract src/web/dashboard/page/app.ts → services/domain/Amount.ts",
      "pages-use-only-the-contract src/web/dashboard/page/app.ts → src/http/Errors.ts"
    ])
  })

  it("keep the contract, which the client kit bundles, on the domain and the named pure modules", async () => {
    plant({
      "services/depositRequests/StepHistory.ts": "export const STEP_PATTERN = 1\n",
      "services/depositRequests/RequestCsv.ts": "export const COLUMNS = 1\n",
      "services/merchants/MemberNotices.ts": "export type NoticeKind = string\n",
      "services/domain/StepSearch.ts": "export const PATTERN = 1\n",
      "src/http/Steps/Api.ts":
        'import { STEP_PATTERN } from "../../../services/depositRequests/StepHistory"\n' +
        'import { PATTERN } from "../../../services/domain/StepSearch"\n' +
        'import { COLUMNS } from "../../../services/depositRequests/RequestCsv"\n' +
        'import type { NoticeKind } from "../../../services/merchants/MemberNotices"\n' +
        "export const api: Array<NoticeKind | number> = [STEP_PATTERN, PATTERN, COLUMNS]\n"
    })
    const found = (await violations(["src/http"])).filter((v) =>
      v.startsWith("contract-imports-pure-modules")
    )
    expect(found).toEqual([
      "contract-imports-pure-modules src/http/Steps/Api.ts → services/depositRequests/StepHistory.ts"
    ])
  })

  it("keep the local chain out of the contract, the pages, the tools and the client kit", async () => {
    const files: Record<string, string> = { "infra/chain/Anvil.ts": "export const anvil = 1\n" }
    for (const room of Object.keys(SRC_ROOMS))
      files[`src/${room}/Chain.ts`] =
        'import { anvil } from "../../infra/chain/Anvil"\nexport const chain = anvil\n'
    plant(files)
    const found = (await violations(["src"])).filter((v) => v.startsWith("dev-chain-only-at-start-up "))
    expect(found.map((v) => v.split(" ")[1]).sort()).toEqual(
      ["src/client/Chain.ts", "src/http/Chain.ts", "src/tools/Chain.ts", "src/web/Chain.ts"].sort()
    )
  })

  it("refuse the production settings importing the local chain or the token's deployment", async () => {
    plant({
      "infra/chain/Anvil.ts": "export const anvil = 1\n",
      "infra/contracts/Token.ts": "export const token = 1\n",
      "src/app/Config.ts":
        'import { anvil } from "../../infra/chain/Anvil"\nimport { token } from "../../infra/contracts/Token"\nexport const config = [anvil, token]\n',
      "src/app/SandboxStart.ts":
        'import { anvil } from "../../infra/chain/Anvil"\nexport const sandbox = anvil\n'
    })
    const found = (await violations(["src"])).filter((v) =>
      v.startsWith("production-settings-use-no-devnet ")
    )
    expect(found.sort()).toEqual([
      "production-settings-use-no-devnet src/app/Config.ts → infra/chain/Anvil.ts",
      "production-settings-use-no-devnet src/app/Config.ts → infra/contracts/Token.ts"
    ])
  })
})
