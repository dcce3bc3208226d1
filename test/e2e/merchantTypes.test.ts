import { execFile } from "node:child_process"
import { rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { merchantFolder, packageRoot } from "../support/MerchantFolder"
// @ts-expect-error: a plain .mjs build script, without declarations
import { buildTypedClients } from "../../infra/tooling/typedClientsBuild.mjs"

// A merchant's TypeScript app outside the source tree, under NodeNext resolution (what a Node project's
// tsconfig says), typechecked against the package's published declarations only: the calls it gets right
// compile, and the mistakes a typed client is for (a misspelt status, a float amount, an unknown field, a route
// that does not exist) are each refused. A build whose declarations were missing or `any` would accept them all.

const run = promisify(execFile)
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")

const app = `
import { FetchHttpClient } from "@effect/platform"
import { Effect, Stream } from "effect"
import { InvalidRequest, makeClient, type DepositRequestView } from "deposit-request-service/client"
import { ApiError, createClient, type DepositRequest } from "deposit-request-service/fetch"

export const effectApp = Effect.gen(function* () {
  const client = yield* makeClient({ baseUrl: "https://deposits.example", apiKey: "sk_test" })
  const created = yield* client.createDepositRequest(
    { amount: 1_250_000n, heading: "order", issuer_id: "iss_1", payout_address_id: "pa_1" },
    { idempotencyKey: "k" }
  )
  const settled: DepositRequestView = yield* client.waitForStatus(created.id, ["settled"])
  const ids = yield* Stream.runCollect(Stream.map(client.listAll({ limit: 10 }), (r) => r.id))
  const refused = yield* client
    .createDepositRequest({ amount: 0n, heading: "x", issuer_id: "iss_1", payout_address_id: "pa_1" })
    .pipe(Effect.catchTag("InvalidRequest", (e) => Effect.succeed(e.param ?? e.message)))
  return { settled: settled.received_base_units, ids, refused, isClass: InvalidRequest.name }
}).pipe(Effect.provide(FetchHttpClient.layer))

export const fetchApp = async () => {
  const client = createClient({ baseUrl: "https://deposits.example", apiKey: "sk_test" })
  const created = await client.createDepositRequest({
    amount: "12.50",
    heading: "order",
    issuer_id: "iss_1",
    payout_address_id: "pa_1"
  })
  const settled: DepositRequest = await client.waitForStatus(created.id, ["settled"])
  for await (const r of client.listAll({ limit: 10 })) console.log(r.id, r.status)
  const { data } = await client.api.GET("/v1/deposit-requests/{id}", { params: { path: { id: created.id } } })
  try {
    await client.getDepositRequest("dr_missing")
  } catch (e) {
    if (e instanceof ApiError) console.log(e.status, e.code)
  }
  return [settled.status, data?.version]
}
`

/** Each mistake on its own line of a second file, so every refusal is seen. */
const mistakes = [
  `Effect.flatMap(makeClient({ baseUrl: "b", apiKey: "k" }), (c) => c.waitForStatus("dr_1", ["setled"]))`,
  `Effect.flatMap(makeClient({ baseUrl: "b", apiKey: "k" }), (c) => c.createDepositRequest({ amount: 1.5, heading: "h", issuer_id: "i", payout_address_id: "p" }))`,
  `createClient({ baseUrl: "b", apiKey: "k" }).createDepositRequest({ amount: "1", heading: "h", issuer_id: "i", payout_address_id: "p", colour: "red" })`,
  `createClient({ baseUrl: "b", apiKey: "k" }).api.GET("/v1/no-such-route")`,
  `createClient({ baseUrl: "b", apiKey: "k" }).waitForStatus("dr_1", ["paid"])`
]
const wrong = `
import { Effect } from "effect"
import { makeClient } from "deposit-request-service/client"
import { createClient } from "deposit-request-service/fetch"
${mistakes.map((m, i) => `export const mistake${i} = ${m}`).join("\n")}
`

/** The package an import names (a scoped one has two segments). */
const packageOf = (path: string) =>
  path
    .split("/")
    .slice(0, path.startsWith("@") ? 2 : 1)
    .join("/")

let folder = ""
let built: { metafile: { outputs: Record<string, { imports: Array<{ path: string }> }> } }

beforeAll(async () => {
  built = await buildTypedClients(join(packageRoot, ".build", "client"))
  folder = merchantFolder("merchant-types-")
  writeFileSync(
    join(folder, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        module: "NodeNext",
        moduleResolution: "NodeNext",
        target: "ES2022",
        lib: ["ES2023", "DOM"],
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: []
      }
    })
  )
}, 120_000)

afterAll(() => {
  if (folder !== "") rmSync(folder, { recursive: true, force: true })
})

/** tsc over one file of the app: its error lines (empty when it compiles). */
const typecheck = async (name: string, source: string) => {
  writeFileSync(join(folder, name), source)
  const result = await run(process.execPath, [tsc, "-p", "tsconfig.json", "--pretty", "false"], {
    cwd: folder
  }).then(
    () => "",
    (e: { stdout?: string }) => e.stdout ?? String(e)
  )
  rmSync(join(folder, name))
  return result.split("\n").filter((l) => l.includes("error TS"))
}

describe("the typed clients' declarations, as a merchant's NodeNext project reads them", () => {
  it("an app using both clients compiles", { timeout: 120_000 }, async () => {
    expect(await typecheck("app.ts", app)).toEqual([])
  })

  it("each mistake is refused on its own line", { timeout: 120_000 }, async () => {
    const errors = await typecheck("wrong.ts", wrong)
    const lines = new Set(errors.map((e) => Number(/\((\d+),\d+\)/.exec(e)?.[1])))
    const first = wrong.split("\n").findIndex((l) => l.startsWith("export const mistake0")) + 1
    expect([...lines].sort((a, b) => a - b)).toEqual(mistakes.map((_, i) => first + i))
  })

  it("the clients load nothing of the server's: no database, bus, object store or chain client", () => {
    const imported = new Set(
      Object.values(built.metafile.outputs).flatMap((o) => o.imports.map((i) => packageOf(i.path)))
    )
    for (const chunk of imported) if (chunk.startsWith(".")) imported.delete(chunk)
    // viem checks and checksums addresses as the contract's `Address` schema does.
    expect([...imported].filter((p) => !p.startsWith("chunk-")).sort()).toEqual([
      "@effect/platform",
      "effect",
      "openapi-fetch",
      "viem"
    ])
  })
})
