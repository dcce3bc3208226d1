import { execFile } from "node:child_process"
import { copyFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { merchantFolder, packageRoot } from "../support/MerchantFolder"
import { ChainServiceFixture, chainServiceLayer } from "../support/scopedChainService"

// A merchant's app outside the source tree, on each public client in plain `node` (no tsx): it creates a request,
// waits for `ready` while the sandbox CLI attests the payer, pays it with the CLI, waits for `settled` with long
// polls, walks the list with the cursor helper and gets a typed error for a bad amount.

const ChainLive = chainServiceLayer({ blockTime: 0.2 })
const run = promisify(execFile)

/**
 * The merchant's app folder, with the package installed by path (test/support/MerchantFolder.ts). The clients
 * are built first, as `npm run build` (or `npm run client:build`) does before a package is used.
 */
const merchantApp = Effect.acquireRelease(
  Effect.promise(async () => {
    await run(process.execPath, [join(packageRoot, "infra/tooling/typedClientsBuild.mjs")], {
      cwd: packageRoot
    })
    const folder = merchantFolder("merchant-app-")
    for (const app of ["effectApp.mjs", "fetchApp.mjs"])
      copyFileSync(join(packageRoot, "test", "e2e", "merchantApp", app), join(folder, app))
    return folder
  }),
  (folder) => Effect.sync(() => rmSync(folder, { recursive: true, force: true }))
)

interface Seen {
  readonly created: { readonly id: string; readonly status: string; readonly version: string }
  readonly replayedId: string
  readonly idle: { readonly status: string; readonly version: string }
  readonly ready: { readonly status: string; readonly address: string | null }
  readonly paid: { readonly to: string; readonly amount_base_units: string }
  readonly settled: { readonly status: string; readonly received_base_units: string }
  readonly secondId: string
  readonly listedIds: ReadonlyArray<string>
  readonly refused: Record<string, unknown>
}

/** Runs one app of the folder in plain node with a merchant's shell: the service, its key and the chain. */
const runApp = (app: string) =>
  Effect.gen(function* () {
    const { service, merchant, api, local } = yield* ChainServiceFixture
    const refs = yield* Effect.promise(() => api.setup())
    const folder = yield* merchantApp
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
          DEPOSITS_BIN: join(folder, "node_modules", "deposit-request-service", "src", "cli", "deposits.mjs"),
          DATABASE_URL: service.databaseUrl,
          CHAIN_RPC_URL: local.node.rpcUrl,
          TOKEN_ADDRESS: local.token
        }
      })
    )
    return JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as Seen
  }).pipe(Effect.scoped)

/** What both apps must have seen, from creation to the refused amount. */
const assertStory = (seen: Seen, baseUnits: string) => {
  assert.match(seen.created.id, /^dr_/)
  assert.strictEqual(seen.created.status, "awaiting_payer")
  // The same key twice is one request (the create a retry would replay).
  assert.strictEqual(seen.replayedId, seen.created.id)
  // A long poll with nothing to report answers at its timeout with the same version.
  assert.strictEqual(seen.idle.status, "awaiting_payer")
  assert.strictEqual(seen.idle.version, seen.created.version)
  assert.strictEqual(seen.ready.status, "ready")
  assert.strictEqual(seen.ready.address?.toLowerCase(), seen.paid.to.toLowerCase())
  assert.strictEqual(seen.paid.amount_base_units, baseUnits)
  assert.deepStrictEqual(seen.settled, { status: "settled", received_base_units: baseUnits })
  // One request a page: the walk follows the cursor across every page, newest first, each request once.
  assert.strictEqual(seen.listedIds[0], seen.secondId)
  assert.include(seen.listedIds, seen.created.id)
  assert.strictEqual(new Set(seen.listedIds).size, seen.listedIds.length)
  assert.isAtLeast(seen.listedIds.length, 2)
}

// Real time throughout: the service, the chain, the apps and the CLI they spawn run on the wall clock.
layer(ChainLive, { timeout: 240_000, excludeTestServices: true })(
  "a merchant app on the public clients",
  (it) => {
    it.effect(
      "the Effect client (deposit-request-service/client): key to settled, the walk and a typed error",
      () =>
        Effect.gen(function* () {
          const seen = yield* runApp("effectApp.mjs")
          assertStory(seen, "1250000")
          assert.deepStrictEqual(seen.refused, {
            tag: "InvalidRequest",
            isInvalidRequest: true,
            message: "'amount' must be above zero.",
            param: "amount"
          })
        })
    )

    it.effect(
      "the fetch client (deposit-request-service/fetch): key to settled, the walk and an ApiError",
      () =>
        Effect.gen(function* () {
          const seen = yield* runApp("fetchApp.mjs")
          assertStory(seen, "1750000")
          const { requestId, ...refused } = seen.refused
          assert.deepStrictEqual(refused, {
            isApiError: true,
            status: 400,
            code: "invalid_request",
            message: "'amount' must be above zero.",
            param: "amount"
          })
          assert.isString(requestId)
        })
    )
  }
)
