import { randomUUID } from "node:crypto"
import { assert, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { typedData } from "../../../services/payer/WalletAttestation"
import { MerchantReferences, sandboxWithReferences } from "../../support/MerchantReferences"
import { sandboxCall, sandboxLayer, sandboxPayerCall } from "../../support/Sandbox"

type Answer = Record<string, unknown> & {
  id: string
  address: string | null
  error: { code: string; message: string; param?: string }
}

/** The repository's example address, EIP-55 checksummed (its letters happen to be all upper case). */
const CHECKSUMMED = "0x52908400098527886E0F7030069857D2E4169EE7"

/**
 * The address with the case of one hex letter flipped (the `at`-th, or the next that keeps the spelling mixed case):
 * a one-letter typo of a checksummed spelling.
 */
const typoOf = (address: string, at = 0) => {
  const letters = [...address.slice(2)].flatMap((c, i) => (/[a-fA-F]/.test(c) ? [i + 2] : []))
  for (let k = 0; k < letters.length; k++) {
    const i = letters[(at + k) % letters.length]!
    const c = address[i]!
    const typo = `${address.slice(0, i)}${c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()}${address.slice(i + 1)}`
    const digits = typo.slice(2)
    if (digits !== digits.toLowerCase() && digits !== digits.toUpperCase()) return typo
  }
  throw new Error(`${address} has no mixed-case spelling`)
}

const allUpper = (address: string) => `0x${address.slice(2).toUpperCase()}`

/** A refusal of a checksum typo, as the error table has it: 400 `invalid_request` naming the field. */
const assertChecksumRefused = (res: { status: number; body: Answer }, param: string) => {
  assert.strictEqual(res.status, 400, JSON.stringify(res.body))
  assert.strictEqual(res.body.error.code, "invalid_request")
  assert.strictEqual(res.body.error.param, param)
  assert.include(res.body.error.message, `'${param}'`)
  assert.include(res.body.error.message, "EIP-55 checksum")
}

const SandboxLive = sandboxWithReferences(
  sandboxLayer(() => ({
    config: {
      rateLimitCapacity: 10_000,
      tokenAddress: Option.some("0x1c7d4b196cb0c7b01d743fbc6116a902379c7238")
    }
  }))
)

layer(SandboxLive, { timeout: 120_000, excludeTestServices: true })(
  "a mixed-case address with a wrong EIP-55 checksum, wherever the API takes an address",
  (it) => {
    it.effect(
      "POST /v1/payout-addresses refuses it naming address; one-case and checksummed spellings are stored EIP-55",
      () =>
        Effect.gen(function* () {
          // One letter lowered: the old rule re-checksummed it into the valid address and stored that.
          const typo = "0x52908400098527886E0F7030069857D2E4169Ee7"
          assertChecksumRefused(
            yield* sandboxCall<Answer>("POST", "/v1/payout-addresses", { address: typo }),
            "address"
          )
          const mixed = privateKeyToAccount(generatePrivateKey()).address
          assertChecksumRefused(
            yield* sandboxCall<Answer>("POST", "/v1/payout-addresses", { address: typoOf(mixed, 3) }),
            "address"
          )
          for (const [spelling, stored] of [
            [CHECKSUMMED, CHECKSUMMED],
            [CHECKSUMMED.toLowerCase(), CHECKSUMMED],
            [mixed, mixed],
            [mixed.toLowerCase(), mixed],
            [allUpper(mixed), mixed]
          ] as const) {
            const made = yield* sandboxCall<Answer>("POST", "/v1/payout-addresses", { address: spelling })
            assert.strictEqual(made.status, 201, spelling)
            assert.strictEqual(made.body.address, stored)
          }
        })
    )

    it.effect(
      "the payer's wallet statement refuses it naming wallet; the same statement spelled right attests, and the list filters find it only by right spellings",
      () =>
        Effect.gen(function* () {
          const refs = yield* MerchantReferences
          const made = yield* sandboxCall<Answer>(
            "POST",
            "/v1/deposit-requests",
            { amount: "1.000000", issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId },
            { "idempotency-key": randomUUID() }
          )
          assert.strictEqual(made.status, 201)
          const payer = privateKeyToAccount(generatePrivateKey())
          const statement = {
            depositRequest: made.body.id,
            wallet: payer.address,
            chainId: 10143,
            expiresAt: Math.floor(Date.now() / 1000) + 600
          }
          const body = {
            wallet: payer.address,
            chain_id: statement.chainId,
            expires_at: statement.expiresAt,
            signature: yield* Effect.promise(() => payer.signTypedData(typedData(statement)))
          }
          const path = `/v1/payer/deposit-requests/${made.body.id}/wallet`
          assertChecksumRefused(
            yield* sandboxPayerCall<Answer>("POST", path, { ...body, wallet: typoOf(payer.address) }),
            "wallet"
          )
          const still = yield* sandboxPayerCall<Answer>("GET", `/v1/payer/deposit-requests/${made.body.id}`)
          assert.strictEqual(still.body.status, "awaiting_payer")
          const attested = yield* sandboxPayerCall<Answer>("POST", path, {
            ...body,
            wallet: allUpper(payer.address)
          })
          assert.strictEqual(attested.status, 200, JSON.stringify(attested.body))
          const depositAddress = attested.body.address
          assert.isString(depositAddress)
          const merchantView = yield* sandboxCall<Answer>("GET", `/v1/deposit-requests/${made.body.id}`)
          assert.strictEqual(merchantView.body.payer_wallet, payer.address)

          const listed = (query: string) =>
            sandboxCall<Answer & { deposit_requests: Array<{ id: string }> }>(
              "GET",
              `/v1/deposit-requests?${query}`
            )
          for (const [param, address] of [
            ["payer_wallet", payer.address],
            ["deposit_address", depositAddress!]
          ] as const) {
            for (const spelling of [address, address.toLowerCase(), allUpper(address)]) {
              const found = yield* listed(`${param}=${spelling}`)
              assert.strictEqual(found.status, 200, `${param}=${spelling}`)
              assert.deepStrictEqual(
                found.body.deposit_requests.map((r) => r.id),
                [made.body.id]
              )
            }
            assertChecksumRefused(yield* listed(`${param}=${typoOf(address, 1)}`), param)
          }
        })
    )
  }
)
