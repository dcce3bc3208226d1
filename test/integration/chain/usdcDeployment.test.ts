import { assert, it, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  getAddress,
  type Hex,
  keccak256,
  maxUint256,
  sliceHex,
  toHex
} from "viem"
import { anvilDevAccount, DEV_ACCOUNT } from "../../../infra/chain/Anvil"
import { holdsUsdcProxy } from "../../../infra/chain/deployUsdc"
import {
  fiatTokenProxyArtifact,
  fiatTokenV2_2Artifact,
  linkBytecode,
  SIGNATURE_CHECKER,
  signatureCheckerArtifact
} from "../../../infra/contracts/artifacts"
import { fiatTokenAbi as abi, fiatTokenProxyAbi } from "../../../infra/contracts/FiatToken"
import { readTokenDomain } from "../../../services/chain/Usdc"
import { type LocalChain, startLocalChain } from "../../support/LocalChain"

const roles = anvilDevAccount(DEV_ACCOUNT.faucetOwner)
const proxyAdmin = anvilDevAccount(DEV_ACCOUNT.proxyAdmin)

// The slots of Circle's AdminUpgradeabilityProxy (zeppelinos naming, before EIP-1967), as its constructor asserts.
const IMPLEMENTATION_SLOT: Hex = "0x7050c9e0f4ca769c69bd3a8ef740bc37934f8e2c036e5a723fd8ee048ed3f8c3"
const ADMIN_SLOT: Hex = "0x10d6a54a4754c8869d6886b5f5d7fbfa5b4522237ea5c60d11bc4e7a1ff9390b"

/** A fresh local chain for the scope, with the token deployed as the sandbox deploys it. */
const scopedLocalChain = (options?: Parameters<typeof startLocalChain>[0]) =>
  Effect.acquireRelease(
    Effect.promise(() => startLocalChain(options)),
    (local) => Effect.promise(() => local.node.stop())
  )

class Deployed extends Context.Tag("test/Deployed")<Deployed, LocalChain>() {}

/** The reason string a call reverts with; dies if it does not revert, or fails otherwise. */
const revertReason = (attempt: () => Promise<unknown>) =>
  Effect.tryPromise(attempt).pipe(
    Effect.flatMap(() => Effect.dieMessage("expected the call to revert")),
    Effect.catchTag("UnknownException", ({ error }) => {
      const reverted =
        error instanceof BaseError ? error.walk((e) => e instanceof ContractFunctionRevertedError) : undefined
      return reverted instanceof ContractFunctionRevertedError
        ? Effect.succeed(reverted.reason)
        : Effect.die(error)
    })
  )

/** The address held in the low 20 bytes of a storage word. */
const addressIn = (word: Hex | undefined): Address => getAddress(sliceHex(word ?? "0x", 12, 32))

layer(Layer.scoped(Deployed, scopedLocalChain()), { timeout: 60_000 })(
  "USDC on a fresh local chain: Circle's FiatTokenV2_2 behind FiatTokenProxy",
  (it) => {
    it.effect("the token's address runs FiatTokenProxy's code, byte for byte", () =>
      Effect.gen(function* () {
        const { chain, token } = yield* Deployed
        const code = yield* Effect.promise(() => chain.getCode({ address: token }))
        assert.strictEqual(code, fiatTokenProxyArtifact().deployedBytecode)
        assert.isTrue(yield* Effect.promise(() => holdsUsdcProxy(chain, token)))
      })
    )

    it.effect(
      "the proxy points at FiatTokenV2_2's code, linked to the deployed SignatureChecker, and is administered by its own admin (dev account 19)",
      () =>
        Effect.gen(function* () {
          const { chain, token, deployed } = yield* Deployed
          assert.strictEqual(IMPLEMENTATION_SLOT, keccak256(toHex("org.zeppelinos.proxy.implementation")))
          assert.strictEqual(ADMIN_SLOT, keccak256(toHex("org.zeppelinos.proxy.admin")))
          const slot = (s: Hex) => Effect.promise(() => chain.getStorageAt({ address: token, slot: s }))
          const implementation = addressIn(yield* slot(IMPLEMENTATION_SLOT))
          assert.strictEqual(implementation, deployed.implementation)
          assert.strictEqual(addressIn(yield* slot(ADMIN_SLOT)), proxyAdmin.address)
          // The proxy's own functions answer only its admin (any other caller is forwarded to the token).
          const asAdmin = (functionName: "implementation" | "admin") =>
            Effect.promise(() =>
              chain.readContract({
                address: token,
                abi: fiatTokenProxyAbi,
                functionName,
                account: proxyAdmin
              })
            )
          assert.strictEqual(yield* asAdmin("implementation"), implementation)
          assert.strictEqual(yield* asAdmin("admin"), proxyAdmin.address)

          const v2_2 = fiatTokenV2_2Artifact()
          const expected = linkBytecode(v2_2.deployedBytecode, v2_2.deployedLinkReferences, {
            [SIGNATURE_CHECKER]: deployed.signatureChecker
          })
          const code = yield* Effect.promise(() => chain.getCode({ address: implementation }))
          assert.strictEqual(code, expected)
          // A library's runtime code is its artifact's with its own address written after the leading PUSH20 (the
          // guard that refuses state-changing calls other than through DELEGATECALL).
          const library = yield* Effect.promise(() => chain.getCode({ address: deployed.signatureChecker }))
          const shipped = signatureCheckerArtifact().deployedBytecode
          assert.strictEqual(
            library,
            `${shipped.slice(0, 4)}${deployed.signatureChecker.slice(2).toLowerCase()}${shipped.slice(44)}`
          )
          // The implementation is not the proxy: a chain holding an older token is told apart by this check.
          assert.isFalse(yield* Effect.promise(() => holdsUsdcProxy(chain, implementation)))
        })
    )

    it.effect("answers version 2, 6 decimals, name and symbol USDC, currency USD", () =>
      Effect.gen(function* () {
        const { chain, token } = yield* Deployed
        const read = <F extends "name" | "symbol" | "currency" | "decimals" | "version" | "paused">(f: F) =>
          Effect.promise(() => chain.readContract({ address: token, abi, functionName: f }))
        assert.strictEqual(yield* read("version"), "2")
        assert.strictEqual(yield* read("decimals"), 6)
        assert.strictEqual(yield* read("name"), "USDC")
        assert.strictEqual(yield* read("symbol"), "USDC")
        assert.strictEqual(yield* read("currency"), "USD")
        assert.strictEqual(yield* read("paused"), false)
        assert.deepStrictEqual(yield* Effect.promise(() => readTokenDomain(chain, token, chain.chain.id)), {
          name: "USDC",
          version: "2",
          chainId: chain.chain.id,
          verifyingContract: token
        })
      })
    )

    it.effect("gives every role to dev account 0, an unlimited minter", () =>
      Effect.gen(function* () {
        const { chain, token } = yield* Deployed
        const read = <F extends "owner" | "masterMinter" | "pauser" | "blacklister">(f: F) =>
          Effect.promise(() => chain.readContract({ address: token, abi, functionName: f }))
        for (const role of ["owner", "masterMinter", "pauser", "blacklister"] as const) {
          assert.strictEqual(yield* read(role), roles.address, role)
        }
        const minter = yield* Effect.promise(() =>
          Promise.all([
            chain.readContract({ address: token, abi, functionName: "isMinter", args: [roles.address] }),
            chain.readContract({
              address: token,
              abi,
              functionName: "minterAllowance",
              args: [roles.address]
            })
          ])
        )
        assert.deepStrictEqual(minter, [true, maxUint256])
      })
    )

    it.effect("refuses the proxy admin calling the token through the proxy", () =>
      Effect.gen(function* () {
        const { chain, token } = yield* Deployed
        const reason = yield* revertReason(() =>
          chain.readContract({ address: token, abi, functionName: "name", account: proxyAdmin })
        )
        assert.strictEqual(reason, "Cannot call fallback function from the proxy admin")
        // Anyone else reaches the token.
        const name = yield* Effect.promise(() =>
          chain.readContract({ address: token, abi, functionName: "name", account: anvilDevAccount(3) })
        )
        assert.strictEqual(name, "USDC")
      })
    )

    it.effect(
      "the implementation was initialised with throwaway values, so nobody can initialise it again",
      () =>
        Effect.gen(function* () {
          const { chain, deployed } = yield* Deployed
          const reason = yield* revertReason(() =>
            chain.simulateContract({
              address: deployed.implementation,
              abi,
              functionName: "initialize",
              args: ["USDC", "USDC", "USD", 6, roles.address, roles.address, roles.address, roles.address],
              account: anvilDevAccount(3)
            })
          )
          assert.strictEqual(reason, "FiatToken: contract is already initialized")
          const owner = yield* Effect.promise(() =>
            chain.readContract({ address: deployed.implementation, abi, functionName: "owner" })
          )
          assert.strictEqual(owner, "0x0000000000000000000000000000000000000001")
        })
    )
  }
)

it.scoped("a token deployed with another name signs for that name: readTokenDomain answers it", () =>
  Effect.gen(function* () {
    const { chain, token } = yield* scopedLocalChain({ usdc: { name: "USD Coin" } })
    const domain = yield* Effect.promise(() => readTokenDomain(chain, token, chain.chain.id))
    assert.deepStrictEqual(domain, {
      name: "USD Coin",
      version: "2",
      chainId: chain.chain.id,
      verifyingContract: token
    })
    const symbol = yield* Effect.promise(() =>
      chain.readContract({ address: token, abi, functionName: "symbol" })
    )
    assert.strictEqual(symbol, "USDC")
  })
)
