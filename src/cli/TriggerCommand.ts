import { randomUUID } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { Effect, Either } from "effect"
import { withRunningChain } from "../../infra/chain/EmbeddedChain"
import { uuidFromId } from "../../services/domain/PrefixedId"
import { serviceEnv } from "../../services/platform/Settings"
import { loadConfig } from "../app/Config"
import { attestWallet, NO_WALLET_YET, type PayMode, payRequest, payTargetOf } from "../sandbox/devnet"
import { apiCaller, type ApiCall, apiKeyOf, expectJson } from "./ApiClient"
import { CliDatabase } from "./Database"
import { CliError, type CliValues } from "./Output"
import { attempt, runCommand } from "./Run"
import { serviceUrlOf } from "./ServiceUrl"

/**
 * `deposits trigger <event type>`, as `stripe trigger`: a new sandbox request driven through the steps that emit
 * that event, with the devnet helpers (`devnet attest`, `devnet pay`) and, for an expiry, the deadline pulled to now
 * (infra/decisions/0091-cli-developer-loop.md). The request is created with the API key over HTTP, so a running
 * `deposits listen` gets the events as the merchant's app would.
 */

/** What each supported type takes: a payment mode after the attestation, and whether the deadline is pulled in. */
interface Steps {
  readonly pay?: PayMode
  readonly expire?: boolean
  readonly describe: string
}

export const triggers: Readonly<Record<string, Steps>> = {
  "deposit_request.ready": { describe: "the sandbox payer attests its wallet" },
  "deposit_request.deposited": { pay: "exact", describe: "attested, then paid exactly (it settles next)" },
  "deposit_request.settled": {
    pay: "exact",
    describe: "attested, then paid exactly; settles once finalized"
  },
  "deposit_request.expired": { expire: true, describe: "attested, then its deadline pulled to now" },
  "deposit_request.returned": {
    pay: "partial",
    expire: true,
    describe: "attested, paid half, then its deadline pulled to now: the balance goes back to the payer"
  },
  "deposit_request.recovered_funds": {
    pay: "over",
    describe: "attested, then paid 1 USDC too much: settled, and the remainder goes back to the payer"
  },
  "deposit_request.likely_unsolicited": {
    pay: "stranger",
    describe: "attested, then paid from a wallet other than the attested one"
  }
}

/** The refusal of a type this command cannot produce: every supported one, one a line. */
export const unsupported = (type: string | undefined) =>
  `${type === undefined ? "name an event type" : `cannot trigger '${type}'`}; supported:\n${Object.entries(
    triggers
  )
    .map(([t, s]) => `  ${t.padEnd(36)} ${s.describe}`)
    .join("\n")}`

/** The amount every triggered request asks for. */
const AMOUNT = "1.000000"
/** A payout address for an account that has none yet (EIP-55's example address: no one's money). */
const SANDBOX_PAYOUT_ADDRESS = "0x52908400098527886e0f7030069857d2e4169ee7"

/** The account's first issuer and payout address, created when it has none, as the quickstart does. */
const references = async (call: ApiCall) => {
  const issuers = await expectJson<{ issuers: ReadonlyArray<{ id: string }> }>(
    await call("GET", "/v1/issuers?limit=1"),
    200,
    "the issuers list"
  )
  const issuerId =
    issuers.issuers[0]?.id ??
    (
      await expectJson<{ id: string }>(
        await call("POST", "/v1/issuers", { display_name: "Sandbox trigger" }),
        201,
        "a new issuer"
      )
    ).id
  const payouts = await expectJson<{
    payout_addresses: ReadonlyArray<{ id: string; disabled_at?: string | null }>
  }>(await call("GET", "/v1/payout-addresses?limit=100"), 200, "the payout addresses list")
  const payoutId =
    payouts.payout_addresses.find((p) => p.disabled_at === null || p.disabled_at === undefined)?.id ??
    (
      await expectJson<{ id: string }>(
        await call("POST", "/v1/payout-addresses", { address: SANDBOX_PAYOUT_ADDRESS }),
        201,
        "a new payout address"
      )
    ).id
  return { issuerId, payoutId }
}

/** Polls the request until `done` holds (the chain finalizes a payment within seconds in the sandbox). */
const waitFor = async (
  call: ApiCall,
  id: string,
  done: (request: { status: string; received_base_units: string }) => boolean,
  what: string
) => {
  const until = Date.now() + 120_000
  for (;;) {
    const request = await expectJson<{ status: string; received_base_units: string }>(
      await call("GET", `/v1/deposit-requests/${id}`),
      200,
      "reading the request"
    )
    if (done(request)) return request
    if (Date.now() > until) throw new CliError(`${id} did not reach ${what} in 2 minutes (${request.status})`)
    await new Promise((r) => setTimeout(r, 500))
  }
}

const program = (values: CliValues, type: string) =>
  Effect.gen(function* () {
    const steps = triggers[type]!
    // Before the rest of the configuration, which a production one would need more of.
    if ((yield* serviceEnv) !== "sandbox")
      return yield* Effect.fail(
        new CliError(
          "trigger is for the sandbox only: it pays with the local chain's test USDC. In production, real payments emit the events."
        )
      )
    const config = withRunningChain(yield* loadConfig())
    const api = yield* serviceUrlOf(values.api)
    const key = yield* attempt(async () => apiKeyOf(values))
    const call = apiCaller(api, key)
    const out = (text: string) => process.stdout.write(`${text}\n`)

    const id = yield* attempt(async () => {
      const { issuerId, payoutId } = await references(call)
      const created = await expectJson<{ id: string }>(
        await call(
          "POST",
          "/v1/deposit-requests",
          { amount: AMOUNT, issuer_id: issuerId, payout_address_id: payoutId },
          { "idempotency-key": randomUUID() }
        ),
        201,
        "the request"
      )
      out(`created   ${created.id} for ${AMOUNT} USDC`)
      const attested = await attestWallet(config, api, created.id)
      out(`attested  ${attested.wallet} (deposit address ${attested.deposit_address})`)
      return created.id
    })
    const uuid = uuidFromId("dr", id)!

    if (steps.pay !== undefined) {
      const mode = steps.pay
      const target = yield* payTargetOf(uuid).pipe(Effect.provide(CliDatabase), Effect.scoped)
      if (Either.isLeft(target))
        return yield* Effect.fail(
          new CliError(target.left === NO_WALLET_YET ? `${id} has no deposit address` : target.left)
        )
      const paid = yield* attempt(() => payRequest(config, target.right, mode, undefined))
      out(
        `paid      ${paid.amount_base_units} base units (${mode}) from ${paid.from}: ${paid.transaction_hash}`
      )
    }
    if (steps.expire === true) {
      // A partial payment is returned only once credited: wait for the finalized credit before the deadline.
      if (steps.pay !== undefined)
        yield* attempt(() => waitFor(call, id, (r) => BigInt(r.received_base_units) > 0n, "a credit"))
      yield* Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        // The sandbox plays the clock: the deadline due now, which the service's expiry sweep finds.
        yield* sql`update deposit_requests set expires_at = now() where id = ${uuid} and expires_at > now()`
      }).pipe(Effect.provide(CliDatabase), Effect.scoped, Effect.orDie)
      out(`expiring  ${id}: its deadline is now`)
    }
    out(`triggered ${type} for ${id}`)
  })

export const run = (values: CliValues, type: string | undefined) => {
  if (type === undefined || triggers[type] === undefined) {
    process.stderr.write(`error: ${unsupported(type)}\n`)
    process.exit(2)
  }
  return runCommand(program(values, type))
}
