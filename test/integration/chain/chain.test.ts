import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it, layer } from "@effect/vitest"
import { Context, Effect, Layer, Redacted } from "effect"
import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createTestClient,
  createWalletClient,
  domainSeparator,
  type Hash,
  type Hex,
  http,
  keccak256,
  parseEventLogs,
  parseSignature,
  publicActions,
  toHex
} from "viem"
import {
  english,
  generateMnemonic,
  generatePrivateKey,
  type HDAccount,
  privateKeyToAccount
} from "viem/accounts"
import {
  type AnvilHandle,
  type AnvilOptions,
  anvilChain,
  anvilDevAccount,
  DEFAULT_CHAIN_ID,
  DEV_ACCOUNT,
  startAnvil
} from "../../../infra/chain/Anvil"
import { deployUsdc, mintUsdc, usdcControls } from "../../../infra/chain/deployUsdc"
import { fiatTokenAbi as abi } from "../../../infra/contracts/FiatToken"
import { KeyVault } from "../../../services/chain/KeyVault"
import { readTokenDomain, signTransferAuthorization, type TokenDomain } from "../../../services/chain/Usdc"

// Dev account 0 holds every role of the sandbox token (owner, master minter, minter, pauser, blacklister).
const owner = anvilDevAccount(DEV_ACCOUNT.faucetOwner)
const relayer = anvilDevAccount(DEV_ACCOUNT.treasury)
const payee = anvilDevAccount(2)

// A fresh seed per run: these deposit accounts have never held ETH on any node.
const VaultLive = KeyVault.Test(Redacted.make(generateMnemonic(english)))
let nextDepositIndex = 0
const freshAddress = (): Address => privateKeyToAccount(generatePrivateKey()).address

// Block numbers are read with cacheTime 0: viem otherwise serves the one it fetched within the polling interval.
const clientsFor = (node: AnvilHandle) => {
  const chain = anvilChain(node)
  // Local node: fail fast instead of retrying, poll often so receipts are seen within a block.
  const transport = http(node.rpcUrl, { retryCount: 0 })
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 50 })
  const wallet = (account: HDAccount) =>
    createWalletClient({ chain, transport, account, pollingInterval: 50 }).extend(publicActions)
  const testClient = createTestClient({ chain, transport, mode: "anvil", pollingInterval: 50 })
  return { chain, publicClient, wallet, testClient }
}

type Clients = ReturnType<typeof clientsFor>

/** A local node for the scope, stopped when the scope closes. */
const scopedAnvil = (options?: AnvilOptions) =>
  Effect.acquireRelease(
    Effect.promise(() => startAnvil(options)),
    (node) => Effect.promise(() => node.stop())
  )

const authorizationTypes = (primaryType: "TransferWithAuthorization" | "ReceiveWithAuthorization") =>
  ({
    [primaryType]: [
      { name: "from", type: "address" },
      { name: "to", type: "address" },
      { name: "value", type: "uint256" },
      { name: "validAfter", type: "uint256" },
      { name: "validBefore", type: "uint256" },
      { name: "nonce", type: "bytes32" }
    ]
  }) as const

const cancelTypes = {
  CancelAuthorization: [
    { name: "authorizer", type: "address" },
    { name: "nonce", type: "bytes32" }
  ]
} as const

const randomNonce = (): Hex => keccak256(toHex(`${Math.random()}-${performance.now()}-${nextDepositIndex}`))

/**
 * The reason string a call reverts with (Circle's contracts revert with `require` messages, not custom errors); the
 * test fails if it does not revert, or fails otherwise.
 */
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

/**
 * A node on the sandbox chain id with Circle's FiatToken v2.2 deployed behind its proxy as the sandbox deploys it,
 * the EIP-712 domain as the token answers it, and the clients the tests sign and read with.
 */
class TokenChain extends Context.Tag("test/TokenChain")<
  TokenChain,
  {
    readonly node: AnvilHandle
    readonly c: Clients
    readonly token: Address
    readonly domain: TokenDomain
    /** How long the node took to start. */
    readonly startMs: number
  }
>() {}

const TokenChainLive = Layer.scoped(
  TokenChain,
  Effect.gen(function* () {
    const started = performance.now()
    // Port 0: each vitest fork gets a port of its own from the OS.
    const node = yield* scopedAnvil()
    const startMs = performance.now() - started
    console.log(`anvil ready on port ${node.port} in ${startMs.toFixed(0)} ms`)
    const c = clientsFor(node)
    const token = yield* Effect.promise(() =>
      deployUsdc(c.publicClient, { roles: owner }).then((d) => d.address)
    )
    // Read and proven against DOMAIN_SEPARATOR(), as the treasury does: the name is whatever the token was given.
    const domain = yield* Effect.promise(() => readTokenDomain(c.publicClient, token, node.chainId))
    return { node, c, token, domain, startMs }
  })
)

const usdc = (address: Address) =>
  Effect.flatMap(TokenChain, ({ c, token }) =>
    Effect.promise(() =>
      c.publicClient.readContract({ address: token, abi, functionName: "balanceOf", args: [address] })
    )
  )

/** The receipt of a transaction, once mined. */
const receiptOf = (hash: Hash) =>
  Effect.flatMap(TokenChain, ({ c }) =>
    Effect.promise(() => c.publicClient.waitForTransactionReceipt({ hash }))
  )

/** The sandbox's blacklister and pauser (dev account 0), waiting for each transaction. */
const controls = Effect.map(TokenChain, ({ c, token }) => usdcControls(c.publicClient, token, owner))

/** Either form of `transferWithAuthorization`: the signature split (v, r, s) or as bytes (r ‖ s ‖ v). */
type TransferArgs = SignedAuthorization["args"] | SignedAuthorization["bytesArgs"]

/** The relayer (the treasury's role) sends a signed transfer authorization on chain; its transaction hash. */
const relayTransfer = (args: TransferArgs, gas?: bigint) =>
  Effect.flatMap(TokenChain, ({ c, token }) =>
    Effect.promise(() =>
      c.wallet(relayer).writeContract({
        address: token,
        abi,
        functionName: "transferWithAuthorization",
        args,
        ...(gas === undefined ? {} : { gas })
      })
    )
  )

/** Why the relayer's `transferWithAuthorization` would revert, simulated against the latest block. */
const simulateTransfer = (args: TransferArgs) =>
  Effect.flatMap(TokenChain, ({ c, token }) =>
    revertReason(() =>
      c.publicClient.simulateContract({
        address: token,
        abi,
        functionName: "transferWithAuthorization",
        args,
        account: relayer
      })
    )
  )

const signAuthorization = (
  from: HDAccount,
  primaryType: "TransferWithAuthorization" | "ReceiveWithAuthorization",
  message: { to: Address; value: bigint; validAfter?: bigint; validBefore?: bigint; nonce?: Hex }
) =>
  Effect.flatMap(TokenChain, ({ domain }) =>
    Effect.promise(async () => {
      const full = {
        from: from.address,
        to: message.to,
        value: message.value,
        validAfter: message.validAfter ?? 0n,
        validBefore: message.validBefore ?? BigInt(Math.floor(Date.now() / 1000) + 3600),
        nonce: message.nonce ?? randomNonce()
      }
      const signature = await from.signTypedData({
        domain,
        types: authorizationTypes(primaryType),
        primaryType,
        message: full
      })
      const { r, s, yParity } = parseSignature(signature)
      const fields = [full.from, full.to, full.value, full.validAfter, full.validBefore, full.nonce] as const
      return {
        ...full,
        signature,
        args: [...fields, 27 + yParity, r, s] as const,
        bytesArgs: [...fields, signature] as const
      }
    })
  )

type SignedAuthorization = Effect.Effect.Success<ReturnType<typeof signAuthorization>>

/** The authorizer's signature cancelling its authorization `nonce`, split (v, r, s) and whole. */
const signCancel = (authorizer: HDAccount, nonce: Hex) =>
  Effect.flatMap(TokenChain, ({ domain }) =>
    Effect.promise(async () => {
      const signature = await authorizer.signTypedData({
        domain,
        types: cancelTypes,
        primaryType: "CancelAuthorization",
        message: { authorizer: authorizer.address, nonce }
      })
      const { r, s, yParity } = parseSignature(signature)
      return {
        args: [authorizer.address, nonce, 27 + yParity, r, s] as const,
        bytesArgs: [authorizer.address, nonce, signature] as const
      }
    })
  )

/** A deposit account of the vault that has never been used, holding `amount` of USDC and no ETH. */
const fundedDepositAccount = (amount: bigint) =>
  Effect.gen(function* () {
    const vault = yield* KeyVault
    const { c, token } = yield* TokenChain
    const account = vault.depositAccount(nextDepositIndex++)
    yield* Effect.promise(() =>
      mintUsdc(c.publicClient, { token, to: account.address, amount, minter: owner })
    )
    return account
  })

const circleFiatToken = "local chain: anvil + Circle's FiatToken v2.2 behind its proxy"

layer(Layer.merge(TokenChainLive, VaultLive), { timeout: 60_000 })(circleFiatToken, (it) => {
  it.effect("starts quickly on the sandbox chain id", () =>
    Effect.gen(function* () {
      const { node, c, startMs } = yield* TokenChain
      assert.strictEqual(node.chainId, DEFAULT_CHAIN_ID)
      assert.strictEqual(yield* Effect.promise(() => c.publicClient.getChainId()), DEFAULT_CHAIN_ID)
      assert.isBelow(startMs, 5_000)
    })
  )

  it.effect("has USDC's metadata, and the EIP-712 domain it answers hashes to its DOMAIN_SEPARATOR", () =>
    Effect.gen(function* () {
      const { c, token, domain } = yield* TokenChain
      const read = <
        F extends "name" | "symbol" | "decimals" | "version" | "owner" | "paused" | "DOMAIN_SEPARATOR"
      >(
        f: F
      ) => Effect.promise(() => c.publicClient.readContract({ address: token, abi, functionName: f }))
      assert.strictEqual(yield* read("name"), "USDC")
      assert.strictEqual(domain.name, "USDC")
      assert.strictEqual(yield* read("symbol"), "USDC")
      assert.strictEqual(yield* read("decimals"), 6)
      assert.strictEqual(yield* read("version"), "2")
      assert.deepStrictEqual(domain, {
        name: "USDC",
        version: "2",
        chainId: DEFAULT_CHAIN_ID,
        verifyingContract: token
      })
      assert.strictEqual(yield* read("owner"), owner.address)
      assert.strictEqual(yield* read("paused"), false)
      assert.strictEqual(yield* read("DOMAIN_SEPARATOR"), domainSeparator({ domain }))
    })
  )

  it.effect("mints only for a minter", () =>
    Effect.gen(function* () {
      const { c, token } = yield* TokenChain
      const to = freshAddress()
      yield* Effect.promise(() => mintUsdc(c.publicClient, { token, to, amount: 1_234_567n, minter: owner }))
      assert.strictEqual(yield* usdc(to), 1_234_567n)
      const notMinter = yield* revertReason(() =>
        c.publicClient.simulateContract({
          address: token,
          abi,
          functionName: "mint",
          args: [to, 1n],
          account: relayer
        })
      )
      assert.strictEqual(notMinter, "FiatToken: caller is not a minter")
    })
  )

  it.effect(
    "moves USDC out of a gasless deposit address with transferWithAuthorization, relayed by the treasury",
    () =>
      Effect.gen(function* () {
        const { c, token, domain } = yield* TokenChain
        const ethOf = (address: Address) => Effect.promise(() => c.publicClient.getBalance({ address }))
        const deposit = yield* fundedDepositAccount(125_000_001n)
        const payout = freshAddress()
        const payer = freshAddress()
        assert.strictEqual(yield* ethOf(deposit.address), 0n)
        const relayerEthBefore = yield* ethOf(relayer.address)

        // Exactly the amount to the payout address, the remainder back to the payer: the settlement shape, signed
        // by the treasury's own signer for the domain the token answers.
        const settle = yield* Effect.promise(() =>
          signTransferAuthorization(deposit, domain, {
            from: deposit.address,
            to: payout,
            value: 100_000_000n,
            validAfter: 0n,
            validBefore: BigInt(Math.floor(Date.now() / 1000) + 3600),
            nonce: randomNonce()
          })
        )
        const settleHash = yield* relayTransfer([
          settle.from,
          settle.to,
          settle.value,
          settle.validAfter,
          settle.validBefore,
          settle.nonce,
          settle.v,
          settle.r,
          settle.s
        ])
        const settleReceipt = yield* receiptOf(settleHash)
        assert.strictEqual(settleReceipt.status, "success")
        console.log(`transferWithAuthorization gas used: ${settleReceipt.gasUsed}`)

        const refund = yield* signAuthorization(deposit, "TransferWithAuthorization", {
          to: payer,
          value: 25_000_001n
        })
        const refundHash = yield* relayTransfer(refund.args)
        const refundReceipt = yield* receiptOf(refundHash)
        assert.strictEqual(refundReceipt.status, "success")

        assert.strictEqual(yield* usdc(payout), 100_000_000n)
        assert.strictEqual(yield* usdc(payer), 25_000_001n)
        assert.strictEqual(yield* usdc(deposit.address), 0n)
        assert.strictEqual(yield* ethOf(deposit.address), 0n)
        const gasPaid =
          settleReceipt.gasUsed * settleReceipt.effectiveGasPrice +
          refundReceipt.gasUsed * refundReceipt.effectiveGasPrice
        assert.strictEqual(yield* ethOf(relayer.address), relayerEthBefore - gasPaid)

        const events = parseEventLogs({ abi, logs: settleReceipt.logs })
        assert.deepStrictEqual(
          events.map((e) => e.eventName),
          ["AuthorizationUsed", "Transfer"]
        )
        assert.deepStrictEqual(events[0]?.args, { authorizer: deposit.address, nonce: settle.nonce })
        assert.deepStrictEqual(events[1]?.args, { from: deposit.address, to: payout, value: 100_000_000n })
        const used = yield* Effect.promise(() =>
          c.publicClient.readContract({
            address: token,
            abi,
            functionName: "authorizationState",
            args: [deposit.address, settle.nonce]
          })
        )
        assert.strictEqual(used, true)
      })
  )

  it.effect(
    "takes the signature as bytes too (FiatToken v2.2's form), and a nonce used either way is spent",
    () =>
      Effect.gen(function* () {
        const deposit = yield* fundedDepositAccount(9_000_000n)
        const to = freshAddress()
        const signed = yield* signAuthorization(deposit, "TransferWithAuthorization", {
          to,
          value: 5_000_000n
        })
        // A signature of another length is not an EOA signature: ECRecover refuses it before recovering anything.
        const truncated = [
          ...signed.bytesArgs.slice(0, 6),
          signed.signature.slice(0, 130)
        ] as unknown as typeof signed.bytesArgs
        assert.strictEqual(yield* simulateTransfer(truncated), "ECRecover: invalid signature length")

        const hash = yield* relayTransfer(signed.bytesArgs)
        assert.strictEqual((yield* receiptOf(hash)).status, "success")
        assert.strictEqual(yield* usdc(to), 5_000_000n)
        // The same authorization in the split form, and again as bytes: the nonce is spent in both.
        assert.strictEqual(
          yield* simulateTransfer(signed.args),
          "FiatTokenV2: authorization is used or canceled"
        )
        assert.strictEqual(
          yield* simulateTransfer(signed.bytesArgs),
          "FiatTokenV2: authorization is used or canceled"
        )

        // And the other way round: used split, refused as bytes.
        const second = yield* signAuthorization(deposit, "TransferWithAuthorization", {
          to,
          value: 4_000_000n
        })
        assert.strictEqual((yield* receiptOf(yield* relayTransfer(second.args))).status, "success")
        assert.strictEqual(
          yield* simulateTransfer(second.bytesArgs),
          "FiatTokenV2: authorization is used or canceled"
        )
        assert.strictEqual(yield* usdc(to), 9_000_000n)
        assert.strictEqual(yield* usdc(deposit.address), 0n)
      })
  )

  it.effect("refuses a replayed authorization, in simulation and on chain", () =>
    Effect.gen(function* () {
      const deposit = yield* fundedDepositAccount(10_000_000n)
      const signed = yield* signAuthorization(deposit, "TransferWithAuthorization", {
        to: freshAddress(),
        value: 4_000_000n
      })
      const first = yield* relayTransfer(signed.args)
      assert.strictEqual((yield* receiptOf(first)).status, "success")

      assert.strictEqual(
        yield* simulateTransfer(signed.args),
        "FiatTokenV2: authorization is used or canceled"
      )
      // With an explicit gas limit there is no estimate to fail first: the replay is mined and reverts.
      const replay = yield* relayTransfer(signed.args, 200_000n)
      assert.strictEqual((yield* receiptOf(replay)).status, "reverted")
      assert.strictEqual(yield* usdc(deposit.address), 6_000_000n)
    })
  )

  it.effect("refuses expired, not-yet-valid and tampered authorizations", () =>
    Effect.gen(function* () {
      const deposit = yield* fundedDepositAccount(5_000_000n)
      const now = BigInt(Math.floor(Date.now() / 1000))
      const to = freshAddress()
      const expired = yield* signAuthorization(deposit, "TransferWithAuthorization", {
        to,
        value: 1n,
        validBefore: now - 1n
      })
      assert.strictEqual(yield* simulateTransfer(expired.args), "FiatTokenV2: authorization is expired")
      assert.strictEqual(yield* simulateTransfer(expired.bytesArgs), "FiatTokenV2: authorization is expired")
      const early = yield* signAuthorization(deposit, "TransferWithAuthorization", {
        to,
        value: 1n,
        validAfter: now + 3600n
      })
      assert.strictEqual(yield* simulateTransfer(early.args), "FiatTokenV2: authorization is not yet valid")

      const valid = yield* signAuthorization(deposit, "TransferWithAuthorization", { to, value: 1n })
      const tampered = [...valid.args] as unknown as Array<unknown>
      tampered[2] = 2n
      assert.strictEqual(
        yield* simulateTransfer(tampered as unknown as typeof valid.args),
        "FiatTokenV2: invalid signature"
      )
      const redirected = [...valid.bytesArgs] as unknown as Array<unknown>
      redirected[1] = freshAddress()
      assert.strictEqual(
        yield* simulateTransfer(redirected as unknown as typeof valid.bytesArgs),
        "FiatTokenV2: invalid signature"
      )
      // Signed by another key than `from`'s.
      const forged = yield* signAuthorization(anvilDevAccount(3), "TransferWithAuthorization", {
        to,
        value: 1n
      })
      const forgedFrom = [...forged.args] as unknown as Array<unknown>
      forgedFrom[0] = deposit.address
      assert.strictEqual(
        yield* simulateTransfer(forgedFrom as unknown as typeof forged.args),
        "FiatTokenV2: invalid signature"
      )
      assert.strictEqual(yield* usdc(deposit.address), 5_000_000n)
    })
  )

  it.effect("cancelAuthorization, in either signature form, makes an unused authorization unusable", () =>
    Effect.gen(function* () {
      const { c, token } = yield* TokenChain
      const deposit = yield* fundedDepositAccount(5_000_000n)
      const to = freshAddress()
      const stateOf = (nonce: Hex) =>
        Effect.promise(() =>
          c.publicClient.readContract({
            address: token,
            abi,
            functionName: "authorizationState",
            args: [deposit.address, nonce]
          })
        )

      // The deposit key cancels; the relayer submits the cancellation, since the address has no gas.
      const first = yield* signAuthorization(deposit, "TransferWithAuthorization", { to, value: 1_000_000n })
      const cancelFirst = yield* signCancel(deposit, first.nonce)
      const cancelHash = yield* Effect.promise(() =>
        c.wallet(relayer).writeContract({
          address: token,
          abi,
          functionName: "cancelAuthorization",
          args: cancelFirst.args
        })
      )
      const cancelReceipt = yield* receiptOf(cancelHash)
      assert.strictEqual(cancelReceipt.status, "success")
      const events = parseEventLogs({ abi, logs: cancelReceipt.logs })
      assert.deepStrictEqual(
        events.map((e) => [e.eventName, e.args]),
        [["AuthorizationCanceled", { authorizer: deposit.address, nonce: first.nonce }]]
      )
      assert.strictEqual(yield* stateOf(first.nonce), true)
      assert.strictEqual(
        yield* simulateTransfer(first.args),
        "FiatTokenV2: authorization is used or canceled"
      )
      assert.strictEqual(
        yield* simulateTransfer(first.bytesArgs),
        "FiatTokenV2: authorization is used or canceled"
      )

      const second = yield* signAuthorization(deposit, "TransferWithAuthorization", { to, value: 1_000_000n })
      const cancelSecond = yield* signCancel(deposit, second.nonce)
      const bytesCancel = yield* Effect.promise(() =>
        c.wallet(relayer).writeContract({
          address: token,
          abi,
          functionName: "cancelAuthorization",
          args: cancelSecond.bytesArgs
        })
      )
      assert.strictEqual((yield* receiptOf(bytesCancel)).status, "success")
      assert.strictEqual(
        yield* simulateTransfer(second.args),
        "FiatTokenV2: authorization is used or canceled"
      )

      const cancelAs = (args: typeof cancelFirst.args) =>
        revertReason(() =>
          c.publicClient.simulateContract({
            address: token,
            abi,
            functionName: "cancelAuthorization",
            args,
            account: relayer
          })
        )
      // Cancelling twice, or cancelling an authorization already used, is refused.
      assert.strictEqual(yield* cancelAs(cancelFirst.args), "FiatTokenV2: authorization is used or canceled")
      const used = yield* signAuthorization(deposit, "TransferWithAuthorization", { to, value: 1_000_000n })
      assert.strictEqual((yield* receiptOf(yield* relayTransfer(used.args))).status, "success")
      assert.strictEqual(
        yield* cancelAs((yield* signCancel(deposit, used.nonce)).args),
        "FiatTokenV2: authorization is used or canceled"
      )
      // Only the authorizer's key cancels: another key's signature over the same nonce is refused.
      const fresh = randomNonce()
      const other = yield* signCancel(anvilDevAccount(3), fresh)
      assert.strictEqual(
        yield* cancelAs([deposit.address, fresh, other.args[2], other.args[3], other.args[4]]),
        "FiatTokenV2: invalid signature"
      )
      assert.strictEqual(yield* stateOf(fresh), false)
      assert.strictEqual(yield* usdc(deposit.address), 4_000_000n)
    })
  )

  it.effect("refuses an authorization from or to a blacklisted address until it is unblacklisted", () =>
    Effect.gen(function* () {
      const { c, token } = yield* TokenChain
      const control = yield* controls
      const deposit = yield* fundedDepositAccount(3_000_000n)
      const payout = freshAddress()
      const isBlacklisted = (who: Address) =>
        Effect.promise(() =>
          c.publicClient.readContract({ address: token, abi, functionName: "isBlacklisted", args: [who] })
        )
      const signed = yield* signAuthorization(deposit, "TransferWithAuthorization", {
        to: payout,
        value: 3_000_000n
      })
      // The chain is shared by the file's tests: never leave an address blacklisted, whatever happens.
      const blacklisted = (who: Address) =>
        Effect.acquireRelease(
          Effect.promise(() => control.blacklist(who)),
          () => Effect.promise(() => control.unBlacklist(who))
        )

      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* blacklisted(deposit.address)
          assert.strictEqual(yield* isBlacklisted(deposit.address), true)
          assert.strictEqual(yield* simulateTransfer(signed.args), "Blacklistable: account is blacklisted")
          assert.strictEqual(
            yield* simulateTransfer(signed.bytesArgs),
            "Blacklistable: account is blacklisted"
          )
        })
      )
      assert.strictEqual(yield* isBlacklisted(deposit.address), false)

      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* blacklisted(payout)
          assert.strictEqual(yield* simulateTransfer(signed.args), "Blacklistable: account is blacklisted")
          // A plain transfer to it is refused too.
          const plain = yield* revertReason(() =>
            c.publicClient.simulateContract({
              address: token,
              abi,
              functionName: "transfer",
              args: [payout, 1n],
              account: deposit
            })
          )
          assert.strictEqual(plain, "Blacklistable: account is blacklisted")
        })
      )
      assert.strictEqual(yield* isBlacklisted(payout), false)

      // The refusals spent nothing: the same authorization goes through once both are clear.
      assert.strictEqual((yield* receiptOf(yield* relayTransfer(signed.args))).status, "success")
      assert.strictEqual(yield* usdc(payout), 3_000_000n)
    })
  )

  it.effect("refuses transfers, authorized or plain, and cancellations while paused", () =>
    Effect.gen(function* () {
      const { c, token } = yield* TokenChain
      const control = yield* controls
      const deposit = yield* fundedDepositAccount(2_000_000n)
      const to = freshAddress()
      const paused = Effect.promise(() =>
        c.publicClient.readContract({ address: token, abi, functionName: "paused" })
      )
      const signed = yield* signAuthorization(deposit, "TransferWithAuthorization", { to, value: 2_000_000n })
      const cancel = yield* signCancel(deposit, signed.nonce)

      // The chain is shared by the file's tests: never leave the token paused, whatever happens.
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* Effect.acquireRelease(
            Effect.promise(() => control.pause()),
            () => Effect.promise(() => control.unpause())
          )
          assert.strictEqual(yield* paused, true)
          assert.strictEqual(yield* simulateTransfer(signed.args), "Pausable: paused")
          assert.strictEqual(yield* simulateTransfer(signed.bytesArgs), "Pausable: paused")
          const plain = yield* revertReason(() =>
            c.publicClient.simulateContract({
              address: token,
              abi,
              functionName: "transfer",
              args: [to, 1n],
              account: deposit
            })
          )
          assert.strictEqual(plain, "Pausable: paused")
          const cancelled = yield* revertReason(() =>
            c.publicClient.simulateContract({
              address: token,
              abi,
              functionName: "cancelAuthorization",
              args: cancel.args,
              account: relayer
            })
          )
          assert.strictEqual(cancelled, "Pausable: paused")
        })
      )
      assert.strictEqual(yield* paused, false)
      assert.strictEqual((yield* receiptOf(yield* relayTransfer(signed.args))).status, "success")
      assert.strictEqual(yield* usdc(to), 2_000_000n)
    })
  )

  it.effect("lets only the payee submit receiveWithAuthorization", () =>
    Effect.gen(function* () {
      const { c, token } = yield* TokenChain
      const deposit = yield* fundedDepositAccount(3_000_000n)
      const payeeBefore = yield* usdc(payee.address)
      const signed = yield* signAuthorization(deposit, "ReceiveWithAuthorization", {
        to: payee.address,
        value: 3_000_000n
      })
      const byRelayer = yield* revertReason(() =>
        c.publicClient.simulateContract({
          address: token,
          abi,
          functionName: "receiveWithAuthorization",
          args: signed.args,
          account: relayer
        })
      )
      assert.strictEqual(byRelayer, "FiatTokenV2: caller must be the payee")
      // A receive authorization is not a transfer authorization: the typehash differs, so the signature fails.
      assert.strictEqual(yield* simulateTransfer(signed.args), "FiatTokenV2: invalid signature")

      const hash = yield* Effect.promise(() =>
        c
          .wallet(payee)
          .writeContract({ address: token, abi, functionName: "receiveWithAuthorization", args: signed.args })
      )
      assert.strictEqual((yield* receiptOf(hash)).status, "success")
      assert.strictEqual(yield* usdc(payee.address), payeeBefore + 3_000_000n)
      assert.strictEqual(yield* usdc(deposit.address), 0n)
    })
  )

  it.effect("accepts an EIP-2612 permit signed by a gasless holder", () =>
    Effect.gen(function* () {
      const { c, token, domain } = yield* TokenChain
      const holder = yield* fundedDepositAccount(7_000_000n)
      const to = freshAddress()
      const deadline = BigInt(Math.floor(Date.now() / 1000) + 600)
      const noncesOf = (address: Address) =>
        Effect.promise(() =>
          c.publicClient.readContract({
            address: token,
            abi,
            functionName: "nonces",
            args: [address]
          })
        )
      const nonce = yield* noncesOf(holder.address)
      const signature = yield* Effect.promise(() =>
        holder.signTypedData({
          domain,
          types: {
            Permit: [
              { name: "owner", type: "address" },
              { name: "spender", type: "address" },
              { name: "value", type: "uint256" },
              { name: "nonce", type: "uint256" },
              { name: "deadline", type: "uint256" }
            ]
          },
          primaryType: "Permit",
          message: { owner: holder.address, spender: relayer.address, value: 7_000_000n, nonce, deadline }
        })
      )
      const { r, s, yParity } = parseSignature(signature)
      const relayerWallet = c.wallet(relayer)
      const permitArgs = [holder.address, relayer.address, 7_000_000n, deadline, 27 + yParity, r, s] as const
      const permit = yield* Effect.promise(() =>
        relayerWallet.writeContract({
          address: token,
          abi,
          functionName: "permit",
          args: permitArgs
        })
      )
      assert.strictEqual((yield* receiptOf(permit)).status, "success")
      const allowance = yield* Effect.promise(() =>
        c.publicClient.readContract({
          address: token,
          abi,
          functionName: "allowance",
          args: [holder.address, relayer.address]
        })
      )
      assert.strictEqual(allowance, 7_000_000n)
      assert.strictEqual(yield* noncesOf(holder.address), nonce + 1n)
      const replayed = yield* revertReason(() =>
        c.publicClient.simulateContract({
          address: token,
          abi,
          functionName: "permit",
          args: permitArgs,
          account: relayer
        })
      )
      assert.strictEqual(replayed, "EIP2612: invalid signature")

      const pull = yield* Effect.promise(() =>
        relayerWallet.writeContract({
          address: token,
          abi,
          functionName: "transferFrom",
          args: [holder.address, to, 7_000_000n]
        })
      )
      assert.strictEqual((yield* receiptOf(pull)).status, "success")
      assert.strictEqual(yield* usdc(to), 7_000_000n)
      assert.strictEqual(yield* usdc(holder.address), 0n)
    })
  )

  it.effect("fails loudly when a second node is started on a port already in use", () =>
    Effect.gen(function* () {
      const { node, c } = yield* TokenChain
      const started = performance.now()
      const failure = yield* Effect.flip(Effect.tryPromise(() => startAnvil({ port: node.port })))
      assert.strictEqual(failure._tag, "UnknownException")
      assert.match((failure.error as Error).message, /exited .*before it was ready[\s\S]*already in use/i)
      assert.isBelow(performance.now() - started, 5_000)
      // The first node is untouched.
      assert.strictEqual(yield* Effect.promise(() => c.publicClient.getChainId()), DEFAULT_CHAIN_ID)
    })
  )

  it.effect("evm_snapshot / evm_revert removes a Transfer log (the reorg the watcher must survive)", () =>
    Effect.gen(function* () {
      const { c, token } = yield* TokenChain
      const blockNumber = Effect.promise(() => c.publicClient.getBlockNumber({ cacheTime: 0 }))
      const head = yield* blockNumber
      const snapshot = yield* Effect.promise(() => c.testClient.snapshot())
      const to = freshAddress()
      const hash = yield* Effect.promise(() =>
        mintUsdc(c.publicClient, { token, to, amount: 42_000_000n, minter: owner })
      )
      const receipt = yield* Effect.promise(() => c.publicClient.getTransactionReceipt({ hash }))
      const transfersTo = (fromBlock: bigint) =>
        Effect.promise(() =>
          c.publicClient.getContractEvents({
            address: token,
            abi,
            eventName: "Transfer",
            args: { to },
            fromBlock
          })
        )
      assert.deepStrictEqual(
        (yield* transfersTo(receipt.blockNumber)).map((log) => log.transactionHash),
        [hash]
      )

      yield* Effect.promise(() => c.testClient.revert({ id: snapshot }))
      assert.strictEqual(yield* blockNumber, head)
      assert.deepStrictEqual(yield* transfersTo(0n), [])
      assert.strictEqual(yield* usdc(to), 0n)
      const gone = yield* Effect.flip(Effect.tryPromise(() => c.publicClient.getTransactionReceipt({ hash })))
      assert.strictEqual(gone._tag, "UnknownException")
      assert.match((gone.error as Error).message, /could not be found/i)

      // The height comes back with another block: only the hash tells the watcher that what it saw is gone.
      yield* Effect.promise(() => c.testClient.mine({ blocks: 1 }))
      const replacement = yield* Effect.promise(() =>
        c.publicClient.getBlock({ blockNumber: receipt.blockNumber })
      )
      assert.notStrictEqual(replacement.hash, receipt.blockHash)
    })
  )
})

/** A node that mines on its own besides, with `finalized` 2 × `slots` blocks behind `latest`. */
class FinalityChain extends Context.Tag("test/FinalityChain")<
  FinalityChain,
  { readonly c: Clients; readonly slots: number }
>() {}

const slots = 2
// Mixed mining: a transaction is mined at once, and blocks keep coming so finality catches up with it.
const FinalityChainLive = Layer.scoped(
  FinalityChain,
  Effect.map(scopedAnvil({ blockTime: 0.2, mixedMining: true, slotsInAnEpoch: slots }), (node) => ({
    c: clientsFor(node),
    slots
  }))
)

// Real time: the node mines on the wall clock, so the test waits on it too.
layer(FinalityChainLive, { timeout: 60_000, excludeTestServices: true })("local chain: finality", (it) => {
  it.effect(
    "keeps `finalized` 2 × slotsInAnEpoch blocks behind `latest` and catches up with a transaction",
    () =>
      Effect.gen(function* () {
        const { c, slots } = yield* FinalityChain
        const finalizedBlock = Effect.promise(() => c.publicClient.getBlock({ blockTag: "finalized" }))
        const to = freshAddress()
        const hash = yield* Effect.promise(() => c.wallet(owner).sendTransaction({ to, value: 1n }))
        const receipt = yield* Effect.promise(() => c.publicClient.waitForTransactionReceipt({ hash }))
        const finalizedAtReceipt = yield* finalizedBlock
        // Block numbers, small enough for a number.
        assert.isBelow(Number(finalizedAtReceipt.number), Number(receipt.blockNumber))

        const deadline = Date.now() + 10_000
        let finalized = finalizedAtReceipt.number
        while (finalized < receipt.blockNumber && Date.now() < deadline) {
          yield* Effect.sleep("50 millis")
          finalized = (yield* finalizedBlock).number
        }
        assert.isAtLeast(Number(finalized), Number(receipt.blockNumber))

        const [latest, safe, final] = yield* Effect.promise(() =>
          Promise.all(
            (["latest", "safe", "finalized"] as const).map((blockTag) =>
              c.publicClient.getBlock({ blockTag })
            )
          )
        )
        // Fetched separately, so a block may land in between: allow one block of skew.
        const lag = Number(latest!.number - final!.number)
        assert.isAtLeast(lag, 2 * slots)
        assert.isAtMost(lag, 2 * slots + 1)
        assert.isAbove(Number(safe!.number), Number(final!.number))
        assert.isBelow(Number(safe!.number), Number(latest!.number))
      })
  )
})

describe("local chain: state file", () => {
  it.scoped("keeps the chain across a stop and a restart (the sandbox's data survives)", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.acquireRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "anvil-state-"))),
        (d) => Effect.sync(() => rmSync(d, { recursive: true, force: true }))
      )
      const stateFile = join(dir, "chain.json")
      // The first node writes its state file as it stops, before the second reads it.
      const { token, holder, head } = yield* Effect.acquireUseRelease(
        Effect.promise(() => startAnvil({ stateFile })),
        (first) =>
          Effect.promise(async () => {
            const c1 = clientsFor(first)
            const token = (await deployUsdc(c1.publicClient, { roles: owner })).address
            const holder = freshAddress()
            await mintUsdc(c1.publicClient, { token, to: holder, amount: 9_000_001n, minter: owner })
            const head = await c1.publicClient.getBlockNumber({ cacheTime: 0 })
            return { token, holder, head }
          }),
        (first) => Effect.promise(() => first.stop())
      )

      const second = yield* scopedAnvil({ stateFile })
      const c2 = clientsFor(second)
      assert.strictEqual(yield* Effect.promise(() => c2.publicClient.getBlockNumber({ cacheTime: 0 })), head)
      const balance = yield* Effect.promise(() =>
        c2.publicClient.readContract({
          address: token,
          abi,
          functionName: "balanceOf",
          args: [holder]
        })
      )
      assert.strictEqual(balance, 9_000_001n)
    })
  )
})
