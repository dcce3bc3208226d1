import { execFile } from "node:child_process"
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { servedDocument } from "../../src/client/generateTypes"
import { packageRoot } from "../support/MerchantFolder"
import { ChainServiceFixture, chainServiceLayer } from "../support/scopedChainService"

// The kit as a merchant gets it (decision 0096): each package packed with `npm pack` (its `prepack` builds it),
// installed from the tarballs into empty projects outside the repository (third-party packages from the npm cache
// or registry), counted, type-checked under strict NodeNext, and run from an API key to a settled payment against
// a live sandbox with its embedded chain.

const run = promisify(execFile)
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")
const ChainLive = chainServiceLayer({ blockTime: 0.2 })
/** Packing, installing, tsc and a payment each take tens of seconds on a shared machine. */
const slow = 300_000

const tsconfig = {
  compilerOptions: {
    module: "NodeNext",
    moduleResolution: "NodeNext",
    target: "ES2022",
    lib: ["ES2023", "DOM"],
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    noEmit: true,
    skipLibCheck: true,
    types: []
  }
}

/** Packs the three packages and installs them into two empty projects: the fetch client and webhooks, and the Effect client. */
const installKit = async () => {
  const root = mkdtempSync(join(tmpdir(), "kit-packages-"))
  const tarballs = join(root, "tarballs")
  mkdirSync(tarballs)
  for (const name of ["fetch", "webhooks", "client"])
    await run("npm", ["pack", "--silent", "--pack-destination", tarballs], {
      cwd: join(packageRoot, "src", "client", "packages", name)
    })
  const project = async (name: string, installs: ReadonlyArray<string>) => {
    const folder = join(root, name)
    mkdirSync(folder)
    writeFileSync(join(folder, "package.json"), JSON.stringify({ name, private: true, type: "module" }))
    writeFileSync(join(folder, "tsconfig.json"), JSON.stringify(tsconfig))
    await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", ...installs], { cwd: folder })
    const { stdout } = await run("npm", ["ls", "--all", "--parseable"], { cwd: folder })
    const tree = stdout
      .trim()
      .split("\n")
      .slice(1)
      .map((line) => line.slice(line.lastIndexOf("node_modules/") + "node_modules/".length))
      .sort()
    return { folder, tree }
  }
  const tarball = (name: string) => join(tarballs, `deposits-${name}-0.1.0.tgz`)
  return {
    root,
    tarballs: readdirSync(tarballs).sort(),
    plain: await project("merchant-fetch", [tarball("fetch"), tarball("webhooks")]),
    effect: await project("merchant-effect", [tarball("client"), "effect@3.22.4", "@effect/platform@0.97.2"])
  }
}

let installed: ReturnType<typeof installKit> | undefined
const kit = Effect.promise(() => {
  installed ??= installKit()
  return installed
})

/** tsc over a project: its error lines, by file and line. */
const typecheck = async (folder: string) => {
  const out = await run(process.execPath, [tsc, "-p", "tsconfig.json", "--pretty", "false"], {
    cwd: folder
  }).then(
    () => "",
    (e: { stdout?: string }) => e.stdout ?? String(e)
  )
  return out
    .split("\n")
    .filter((l) => l.includes("error TS"))
    .map((l) => {
      const [, file, line, code] = /^(.+?)\((\d+),\d+\): error (TS\d+)/.exec(l) ?? []
      return { file, line: Number(line), code, text: l }
    })
}

/** The codes the served document lists for an operation, from its error responses' envelopes. */
const contractCodes = (method: string, path: string): ReadonlyArray<string> => {
  const document = JSON.parse(JSON.stringify(servedDocument())) as {
    paths: Record<
      string,
      Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>
    >
    components: {
      schemas: Record<string, { properties?: { error?: { properties?: { code?: { enum?: string[] } } } } }>
    }
  }
  const refs = (schema: unknown): Array<string> => {
    const s = schema as { $ref?: string; anyOf?: unknown[]; oneOf?: unknown[] }
    if (s.$ref !== undefined) return [s.$ref.split("/").at(-1) ?? ""]
    return [...(s.anyOf ?? []), ...(s.oneOf ?? [])].flatMap(refs)
  }
  const responses = document.paths[path]?.[method]?.responses ?? {}
  return [
    ...new Set(
      Object.entries(responses)
        .filter(([status]) => Number(status) >= 400)
        .flatMap(([, r]) => refs(r.content?.["application/json"]?.schema ?? {}))
        .flatMap((name) => document.components.schemas[name]?.properties?.error?.properties?.code?.enum ?? [])
    )
  ].sort()
}
const anyOperationCodes = ["internal_error", "request_headers_too_large", "service_unavailable"]

/** Each misuse must be refused: marked with @ts-expect-error here, and copied without the mark to `refused.ts`. */
const fetchMisuses = [
  `isApiError(e, "POST /v1/no-such-route")`,
  `isApiError(e, "POST /v1/deposit-requests") && e.code === "sandbox_only"`,
  `client.list("/v1/issuers", { query: { limit: "10" } })`,
  `client.list("/v1/account")`,
  `client.list("/v1/webhooks/{id}/deliveries")`,
  `client.waitForStatus("dr_1", ["setled"])`,
  `client.createDepositRequest({ amount: "1.000000", heading: "h", issuer_id: "i", payout_address_id: "p", colour: "red" })`,
  `client.getDepositRequest("dr_1", { timeoutMs: "5s" })`,
  `client.api.GET("/v1/deposit-requests", { params: { query: { timeout: "25" } } })`,
  `((event: Event) => event)(verify("{}", {}, "whsec_x"))`
]
const effectMisuses = [
  `Effect.flatMap(makeClient({ baseUrl: "b", apiKey: "k" }), (c) => c.waitForStatus("dr_1", ["setled"]))`,
  `Effect.flatMap(makeClient({ baseUrl: "b", apiKey: "k" }), (c) => c.createDepositRequest({ amount: 1.5, heading: "h", issuer_id: "i", payout_address_id: "p" }))`,
  `Effect.flatMap(makeClient({ baseUrl: "b", apiKey: "k" }), (c) => c.getDepositRequest("dr_1"))`
]

const fixture = (imports: string, misuses: ReadonlyArray<string>, marked: boolean) =>
  [
    imports,
    ...misuses.map(
      (m, i) => `${marked ? "// @ts-expect-error: refused\n" : ""}export const misuse${i} = ${m}`
    )
  ].join("\n")

const fetchImports = `import { createClient, isApiError } from "@deposits/fetch"
import { verify, type Event } from "@deposits/webhooks"
const client = createClient({ baseUrl: "https://deposits.example", apiKey: "service_test_x" })
declare const e: unknown`
const effectImports = `import { Effect } from "effect"
import { makeClient } from "@deposits/client"`

/** A switch over every code of the create, exhaustive by `never`; and one that forgets a code, refused there. */
const exhaustive = (
  codes: ReadonlyArray<string>
) => `import { createClient, isApiError, type ErrorCode } from "@deposits/fetch"
const client = createClient({ baseUrl: "https://deposits.example", apiKey: "service_test_x" })
export const create = async (issuer_id: string, payout_address_id: string): Promise<string> => {
  try {
    return (await client.createDepositRequest({ amount: "1.000000", heading: "h", issuer_id, payout_address_id })).id
  } catch (e) {
    if (!isApiError(e, "POST /v1/deposit-requests")) throw e
    switch (e.code) {
${codes.map((c) => `      case "${c}":\n        return \`${c}: \${e.message} \${e.docUrl ?? ""}\``).join("\n")}
      default: {
        const unhandled: never = e.code
        return unhandled
      }
    }
  }
}
export const forgetful = (code: ErrorCode<"POST /v1/deposit-requests">): string => {
  switch (code) {
${codes
  .slice(1)
  .map((c) => `    case "${c}":\n      return "${c}"`)
  .join("\n")}
    default: {
      // @ts-expect-error: "${codes[0]}" is not handled, so the code is not \`never\` here
      const unhandled: never = code
      return unhandled
    }
  }
}
`

/** Runs one app of a project in plain node with a merchant's shell: the service, its key and the chain. */
const runApp = (folder: string, app: string) =>
  Effect.gen(function* () {
    const { service, merchant, api, local } = yield* ChainServiceFixture
    const refs = yield* Effect.promise(() => api.setup())
    copyFileSync(join(packageRoot, "test", "e2e", "kitPackages", app), join(folder, app))
    const { stdout } = yield* Effect.promise(() =>
      run(process.execPath, [app], {
        cwd: folder,
        env: {
          ...process.env,
          NODE_OPTIONS: "",
          BASE_URL: service.baseUrl,
          API_KEY: merchant.apiKey,
          ISSUER_ID: refs.issuerId,
          PAYOUT_ADDRESS_ID: refs.payoutAddressId,
          DEPOSITS_BIN: join(packageRoot, "src", "cli", "deposits.mjs"),
          DATABASE_URL: service.databaseUrl,
          CHAIN_RPC_URL: local.node.rpcUrl,
          TOKEN_ADDRESS: local.token
        }
      })
    )
    return JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as Seen
  })

interface Seen {
  readonly created: { readonly id: string; readonly status: string; readonly version: string }
  readonly replayedId: string
  readonly idle: { readonly status: string; readonly version: string }
  readonly ready: { readonly status: string; readonly address: string | null }
  readonly paid: { readonly to: string; readonly amount_base_units: string }
  readonly settled: { readonly status: string; readonly received_base_units: string }
  readonly secondId: string
  readonly listedIds: ReadonlyArray<string>
  readonly issuerIds?: ReadonlyArray<string>
  readonly unverified?: { readonly isWebhookError: boolean; readonly code: string }
  readonly refused: Record<string, unknown>
}

const assertStory = (seen: Seen, baseUnits: string) => {
  assert.match(seen.created.id, /^dr_/)
  assert.strictEqual(seen.created.status, "awaiting_payer")
  assert.strictEqual(seen.replayedId, seen.created.id)
  assert.strictEqual(seen.idle.version, seen.created.version)
  assert.strictEqual(seen.ready.status, "ready")
  assert.strictEqual(seen.ready.address?.toLowerCase(), seen.paid.to.toLowerCase())
  assert.strictEqual(seen.paid.amount_base_units, baseUnits)
  assert.deepStrictEqual(seen.settled, { status: "settled", received_base_units: baseUnits })
  assert.strictEqual(seen.listedIds[0], seen.secondId)
  assert.include(seen.listedIds, seen.created.id)
  assert.strictEqual(new Set(seen.listedIds).size, seen.listedIds.length)
}

layer(ChainLive, { timeout: 300_000, excludeTestServices: true })(
  "the kit's packages, packed and installed",
  (it) => {
    it.effect(
      "install from their tarballs with nothing of the service's: the trees counted",
      () =>
        Effect.gen(function* () {
          const { tarballs, plain, effect } = yield* kit
          assert.deepStrictEqual(tarballs, [
            "deposits-client-0.1.0.tgz",
            "deposits-fetch-0.1.0.tgz",
            "deposits-webhooks-0.1.0.tgz"
          ])
          // The fetch client and the verifier: themselves, openapi-fetch and its one helper package.
          assert.deepStrictEqual(plain.tree, [
            "@deposits/fetch",
            "@deposits/webhooks",
            "openapi-fetch",
            "openapi-typescript-helpers"
          ])
          // The Effect client adds itself alone to what effect and @effect/platform bring.
          const { stdout } = yield* Effect.promise(() =>
            run("npm", ["ls", "--all", "--parseable", "effect", "@effect/platform"], { cwd: effect.folder })
          )
          assert.include(effect.tree, "@deposits/client")
          const server = [
            "pg",
            "@effect/sql",
            "@effect/sql-pg",
            "viem",
            "xstate",
            "@nats-io/transport-node",
            "ws"
          ]
          for (const name of server) assert.notInclude(effect.tree, name)
          assert.isAtMost(effect.tree.length, 14)
          assert.isTrue(stdout.includes("node_modules/effect"))
        }),
      slow
    )

    it.effect(
      "tsc under strict NodeNext: an exhaustive switch per operation, and every misuse refused",
      () =>
        Effect.gen(function* () {
          const { plain, effect } = yield* kit
          const codes = [
            ...new Set([...contractCodes("post", "/v1/deposit-requests"), ...anyOperationCodes])
          ].sort()
          assert.includeMembers(codes, ["idempotency_conflict", "invalid_request", "unauthenticated"])
          writeFileSync(join(plain.folder, "exhaustive.ts"), exhaustive(codes))
          writeFileSync(join(plain.folder, "misuse.ts"), fixture(fetchImports, fetchMisuses, true))
          writeFileSync(join(plain.folder, "refused.ts"), fixture(fetchImports, fetchMisuses, false))
          // The guard of the guards: a @ts-expect-error over a correct call fails, so a misuse that compiled would too.
          writeFileSync(
            join(plain.folder, "guard.ts"),
            `${fetchImports}\n// @ts-expect-error: nothing is wrong here\nexport const fine = client.list("/v1/issuers", { query: { limit: 10 } })\n`
          )
          const errors = yield* Effect.promise(() => typecheck(plain.folder))
          assert.deepStrictEqual(
            errors.filter((e) => e.file !== "refused.ts").map((e) => `${e.file}:${e.line} ${e.code}`),
            ["guard.ts:5 TS2578"]
          )
          // Without the marks, each misuse is an error on its own line.
          const firstMisuse = fetchImports.split("\n").length + 1
          assert.deepStrictEqual(
            [...new Set(errors.filter((e) => e.file === "refused.ts").map((e) => e.line))],
            fetchMisuses.map((_, i) => firstMisuse + i)
          )

          writeFileSync(join(effect.folder, "misuse.ts"), fixture(effectImports, effectMisuses, true))
          writeFileSync(join(effect.folder, "refused.ts"), fixture(effectImports, effectMisuses, false))
          const effectErrors = yield* Effect.promise(() => typecheck(effect.folder))
          assert.deepStrictEqual(
            effectErrors.filter((e) => e.file !== "refused.ts"),
            []
          )
          const firstEffectMisuse = effectImports.split("\n").length + 1
          assert.deepStrictEqual(
            [...new Set(effectErrors.filter((e) => e.file === "refused.ts").map((e) => e.line))],
            effectMisuses.map((_, i) => firstEffectMisuse + i)
          )
        }),
      slow
    )

    it.effect(
      "@deposits/fetch and @deposits/webhooks: key to settled, every list walked, typed errors",
      () =>
        Effect.gen(function* () {
          const { plain } = yield* kit
          const seen = yield* runApp(plain.folder, "fetchApp.mjs")
          assertStory(seen, "1750000")
          assert.isAtLeast(seen.issuerIds?.length ?? 0, 1)
          assert.deepStrictEqual(seen.unverified, {
            isWebhookError: true,
            code: "timestamp_outside_tolerance"
          })
          const { requestId, docUrl, ...refused } = seen.refused
          assert.deepStrictEqual(refused, {
            isApiError: true,
            ofCreate: true,
            operation: "POST /v1/deposit-requests",
            status: 400,
            code: "invalid_request",
            message: "'amount' must be above zero.",
            param: "amount"
          })
          assert.isString(requestId)
          assert.match(String(docUrl), /\/docs\/errors#invalid_request$/)
        }),
      slow
    )

    it.effect(
      "@deposits/client on the app's own effect: key to settled and a typed error with its doc_url",
      () =>
        Effect.gen(function* () {
          const { effect } = yield* kit
          const seen = yield* runApp(effect.folder, "effectApp.mjs")
          assertStory(seen, "1250000")
          const { docUrl, ...refused } = seen.refused
          assert.deepStrictEqual(refused, {
            tag: "InvalidRequest",
            isInvalidRequest: true,
            message: "'amount' must be above zero.",
            param: "amount"
          })
          assert.match(String(docUrl), /\/docs\/errors#invalid_request$/)
        })
    )

    it.effect(
      "leaves nothing behind",
      () =>
        Effect.promise(async () => {
          const { root } = await (installed ?? installKit())
          rmSync(root, { recursive: true, force: true })
        }),
      slow
    )
  }
)
