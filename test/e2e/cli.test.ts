import { execFile } from "node:child_process"
import { randomUUID } from "node:crypto"
import { promisify } from "node:util"
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { anvilDevAccount } from "../../infra/chain/Anvil"
import { SANDBOX_PAYER_INDEX } from "../../src/sandbox/devnet"
import { ChainServiceFixture, chainServiceLayer } from "../support/scopedChainService"

// Blocks every 0.2 s and `finalized` one slot behind, so a payment settles within seconds on the wall clock.
const ChainLive = chainServiceLayer({ blockTime: 0.2 })

const run = promisify(execFile)

/** The environment a merchant's shell has: the service's database, the local chain and its token. */
const cliEnv = Effect.map(ChainServiceFixture, ({ service, local }) => ({
  ...process.env,
  DATABASE_URL: service.databaseUrl,
  CHAIN_RPC_URL: local.node.rpcUrl,
  TOKEN_ADDRESS: local.token
}))

/** The CLI as a merchant runs it: the package's bin (a bundle in plain node). Rejects when it exits non-zero. */
const deposits = (args: ReadonlyArray<string>) =>
  Effect.flatMap(cliEnv, (env) =>
    Effect.promise(() => run(process.execPath, ["src/cli/deposits.mjs", ...args], { env }))
  )

/** A failed run's exit code and output, or a defect when it succeeded. */
const refusal = (args: ReadonlyArray<string>, settings: Record<string, string> = {}) =>
  Effect.flatMap(cliEnv, (env) =>
    Effect.tryPromise(() =>
      run(process.execPath, ["src/cli/deposits.mjs", ...args], { env: { ...env, ...settings } })
    ).pipe(
      Effect.flip,
      Effect.map((e) => e.error as { code: number; stdout: string; stderr: string })
    )
  )

const accountOf = (apiKey: string) =>
  Effect.flatMap(ChainServiceFixture, ({ service }) =>
    Effect.promise(async () => {
      const res = await service.request("/v1/account", { headers: { authorization: `Bearer ${apiKey}` } })
      return { status: res.status, body: (await res.json()) as { id?: string } }
    })
  )

const accountCount = Effect.flatMap(ChainServiceFixture, ({ db }) =>
  Effect.promise(() => db.query<{ n: number }>("select count(*)::int as n from accounts"))
).pipe(Effect.map((r) => r.rows[0]?.n ?? 0))

interface Sandbox {
  readonly account_id: string
  readonly session_token: string
  readonly api_key: string
  readonly previous_key_valid_until: string | null
}

const newRequest = (amount: string) =>
  Effect.flatMap(ChainServiceFixture, ({ api }) =>
    Effect.promise(async () => {
      const refs = await api.setup()
      const made = await api.call<{ id: string; status: string }>(
        "POST",
        "/v1/deposit-requests",
        { amount, issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId },
        { "idempotency-key": randomUUID() }
      )
      assert.strictEqual(made.status, 201)
      return made.body
    })
  )

const waitForStatus = (id: string, status: string, ms = 30_000) =>
  Effect.gen(function* () {
    const { api } = yield* ChainServiceFixture
    const until = Date.now() + ms
    let last: { status: string; received_base_units: string; address: string | null } | undefined
    while (Date.now() < until) {
      last = (yield* Effect.promise(() =>
        api.call<NonNullable<typeof last>>("GET", `/v1/deposit-requests/${id}`)
      )).body
      if (last.status === status) return last
      yield* Effect.sleep("100 millis")
    }
    return yield* Effect.dieMessage(`status stayed ${last?.status}`)
  })

const sandboxPayer = anvilDevAccount(SANDBOX_PAYER_INDEX).address

// Real time throughout: the service, the chain and the spawned CLI run on the wall clock.
layer(ChainLive, { timeout: 120_000, excludeTestServices: true })("the command line", (it) => {
  it.effect("prints one JSON object and nothing else with --json, through the bin and npm run -s cli", () =>
    Effect.gen(function* () {
      const env = yield* cliEnv
      const viaBin = yield* deposits(["sandbox", "--json"])
      const viaNpm = yield* Effect.promise(() =>
        run("npm", ["run", "-s", "cli", "--", "sandbox", "--json"], { env })
      )
      for (const { stdout } of [viaBin, viaNpm]) {
        // The whole of stdout is the object: a banner or a log line before or after it fails the parse.
        const out = JSON.parse(stdout) as Sandbox
        assert.match(out.account_id, /^acct_/)
        assert.match(out.api_key, /^service_test_/)
        assert.match(out.session_token, /^session_/)
        const account = yield* accountOf(out.api_key)
        assert.strictEqual(account.status, 200)
        assert.strictEqual(account.body.id, out.account_id)
      }
      const help = yield* deposits(["--help"])
      assert.match(help.stdout, /sandbox \[--name NAME\] \[--account ACCT_ID\]/)
      assert.match(help.stdout, /devnet attest --request DR_ID/)
    })
  )

  it.effect("reuses an account with sandbox --account: a new session and key, the old key in its grace", () =>
    Effect.gen(function* () {
      const first = JSON.parse((yield* deposits(["sandbox", "--json"])).stdout) as Sandbox
      const before = yield* accountCount
      const again = JSON.parse(
        (yield* deposits(["sandbox", "--account", first.account_id, "--json"])).stdout
      ) as Sandbox
      assert.strictEqual(again.account_id, first.account_id)
      assert.strictEqual(yield* accountCount, before)
      assert.notStrictEqual(again.api_key, first.api_key)
      assert.notStrictEqual(again.session_token, first.session_token)
      const graceHours = (Date.parse(again.previous_key_valid_until ?? "") - Date.now()) / 3_600_000
      assert.isTrue(graceHours > 23.9 && graceHours <= 24, `grace of ${graceHours} hours`)
      assert.strictEqual((yield* accountOf(again.api_key)).body.id, first.account_id)
      assert.strictEqual((yield* accountOf(first.api_key)).body.id, first.account_id)

      const unknown = yield* refusal(["sandbox", "--account", `acct_${randomUUID()}`, "--json"])
      assert.strictEqual(unknown.code, 1)
      assert.strictEqual(unknown.stdout, "")
      assert.match(unknown.stderr, /^error: no account acct_/)
      assert.strictEqual(yield* accountCount, before)
    })
  )

  it.effect(
    "pays a new request alone: devnet pay attests the sandbox payer, pays exactly, and it settles",
    () =>
      Effect.gen(function* () {
        const { service } = yield* ChainServiceFixture
        const request = yield* newRequest("3.250000")
        assert.strictEqual(request.status, "awaiting_payer")
        const paid = JSON.parse(
          (yield* deposits([
            "devnet",
            "pay",
            "--request",
            request.id,
            "--mode",
            "exact",
            "--url",
            service.baseUrl,
            "--json"
          ])).stdout
        ) as { attested_wallet: string | null; from: string; to: string; amount_base_units: string }
        assert.strictEqual(paid.attested_wallet, sandboxPayer)
        assert.strictEqual(paid.from, sandboxPayer)
        assert.strictEqual(paid.amount_base_units, "3250000")
        const settled = yield* waitForStatus(request.id, "settled")
        assert.strictEqual(settled.received_base_units, "3250000")
        assert.strictEqual(settled.address?.toLowerCase(), paid.to.toLowerCase())
      })
  )

  it.effect(
    "attests once with devnet attest; a second attestation is refused with the service's reason",
    () =>
      Effect.gen(function* () {
        const { service } = yield* ChainServiceFixture
        const request = yield* newRequest("1.000000")
        const attested = JSON.parse(
          (yield* deposits(["devnet", "attest", "--request", request.id, "--url", service.baseUrl, "--json"]))
            .stdout
        ) as { wallet: string; deposit_address: string }
        assert.strictEqual(attested.wallet, sandboxPayer)
        const ready = yield* waitForStatus(request.id, "ready", 5_000)
        assert.strictEqual(ready.address, attested.deposit_address)

        const twice = yield* refusal(["devnet", "attest", "--request", request.id, "--url", service.baseUrl])
        assert.strictEqual(twice.code, 1)
        assert.match(twice.stderr, /refused the attestation \(409 .*already has a wallet/)
        // Under the refusal, the link to its code's line on the service's error page (decision 0087).
        const code = /\(409 ([a-z_]+)\)/.exec(twice.stderr)?.[1]
        assert.isDefined(code)
        assert.include(twice.stderr, `\n  docs: ${service.baseUrl}/docs/errors#${code}\n`)
        const nobody = yield* refusal([
          "devnet",
          "attest",
          "--request",
          request.id,
          "--url",
          "http://127.0.0.1:9"
        ])
        assert.match(nobody.stderr, /no service answers at http:\/\/127\.0\.0\.1:9/)
        assert.notInclude(nobody.stderr, "docs:")
        // Without --url, `API` names the service (the quickstart's one setting), not PORT.
        const named = yield* refusal(["devnet", "attest", "--request", request.id], {
          API: "http://127.0.0.1:9",
          PORT: new URL(service.baseUrl).port
        })
        assert.match(named.stderr, /no service answers at http:\/\/127\.0\.0\.1:9 .*API=/)
      })
  )
})
