import { assert, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Layer, Option } from "effect"
import { hashTypedData } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { type ChainAccess, ChainEndpoints } from "../../../services/chain/ChainEndpoints"
import { type Statement, typedData, WalletAttestation } from "../../../services/payer/WalletAttestation"
import { chainAccessOf } from "../../support/LocalChain"

// The statement check as the wallet proof uses it: this deployment's chain id, the check its chain access
// allows, and a node that does not answer as a 503 rather than a refusal of the payer.

const request = "dr_0193a5b2-7c1d-7e8f-9a0b-1c2d3e4f5a6b"
const now = 1_800_000_000
const account = privateKeyToAccount(generatePrivateKey())
const statementFor = (over: Partial<Statement> = {}): Statement => ({
  depositRequest: request,
  wallet: account.address,
  chainId: 10143,
  expiresAt: now + 600,
  ...over
})

/** The service over the default settings (sandbox) and a twin of the chain access (not its own endpoints). */
const attestationWith = (chain: Option.Option<ChainAccess>) =>
  WalletAttestation.DefaultWithoutDependencies.pipe(
    Layer.provide(ChainEndpoints.Test(chain)),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map())))
  )

layer(attestationWith(Option.none()))("the wallet attestation service, offline", (it) => {
  it.effect("accepts the wallet's signature for the sandbox chain and refuses another chain or signer", () =>
    Effect.gen(function* () {
      const attestation = yield* WalletAttestation
      const expected = { depositRequest: request, nowSeconds: now }
      const good = statementFor()
      const signature = yield* Effect.promise(() => account.signTypedData(typedData(good)))
      assert.isUndefined(yield* attestation.refusal(good, signature, expected))
      const otherChain = statementFor({ chainId: 143 })
      const onOtherChain = yield* Effect.promise(() => account.signTypedData(typedData(otherChain)))
      assert.deepStrictEqual(yield* attestation.refusal(otherChain, onOtherChain, expected), {
        param: "chain_id",
        message: "The statement must name chain 10143."
      })
      const forged = yield* Effect.promise(() =>
        privateKeyToAccount(generatePrivateKey()).sign({ hash: hashTypedData(typedData(good)) })
      )
      assert.strictEqual((yield* attestation.refusal(good, forged, expected))?.param, "signature")
    })
  )
})

layer(attestationWith(Option.some(chainAccessOf("http://127.0.0.1:9"))))(
  "the wallet attestation service, node unreachable",
  (it) => {
    it.effect("answers 503 instead of refusing a signature it could not check on chain", () =>
      Effect.gen(function* () {
        const attestation = yield* WalletAttestation
        const outcome = yield* Effect.either(
          attestation.refusal(statementFor(), `0x${"11".repeat(65)}`, {
            depositRequest: request,
            nowSeconds: now
          })
        )
        assert.isTrue(Either.isLeft(outcome))
        if (Either.isLeft(outcome)) {
          assert.strictEqual(outcome.left._tag, "ServiceUnavailable")
          assert.strictEqual(
            outcome.left.message,
            "The wallet's signature could not be checked on chain; try again."
          )
        }
      })
    )
  }
)
