import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Redacted } from "effect"
import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createTestClient,
  createWalletClient,
  domainSeparator,
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
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type AnvilHandle,
  anvilChain,
  anvilDevAccount,
  DEFAULT_CHAIN_ID,
  DEV_ACCOUNT,
  startAnvil
} from "../../../infra/chain/Anvil"
import { deployTestUsdc, mintTestUsdc } from "../../../infra/chain/deployTestUsdc"
import { abi } from "../../../infra/contracts/TestUsdc"
import { KeyVault } from "../../../services/chain/KeyVault"

const owner = anvilDevAccount(DEV_ACCOUNT.faucetOwner)
const relayer = anvilDevAccount(DEV_ACCOUNT.treasury)
const payee = anvilDevAccount(2)

// A fresh seed per run: these deposit accounts have never held ETH on any node.
const vault = Effect.runSync(
  KeyVault.pipe(Effect.provide(KeyVault.layerFromMnemonic(Redacted.make(generateMnemonic(english)))))
)
let nextDepositIndex = 0
const freshDepositAccount = (): HDAccount => vault.depositAccount(nextDepositIndex++)
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

const randomNonce = (): Hex => keccak256(toHex(`${Math.random()}-${performance.now()}-${nextDepositIndex}`))

/** The name of the custom error a call reverts with, or fails the test. */
const revertName = async (attempt: Promise<unknown>): Promise<string | undefined> => {
  try {
    await attempt
  } catch (error) {
    const reverted =
      error instanceof BaseError ? error.walk((e) => e instanceof ContractFunctionRevertedError) : undefined
    if (reverted instanceof ContractFunctionRevertedError) return reverted.data?.errorName
    throw error
  }
  throw new Error("expected the call to revert")
}

describe("local chain: anvil + TestUsdc", () => {
  let node: AnvilHandle
  let c: Clients
  let token: Address
  let domain: { name: string; version: string; chainId: number; verifyingContract: Address }
  let startMs = 0

  const usdc = (address: Address) =>
    c.publicClient.readContract({ address: token, abi, functionName: "balanceOf", args: [address] })

  const signAuthorization = (
    from: HDAccount,
    primaryType: "TransferWithAuthorization" | "ReceiveWithAuthorization",
    message: { to: Address; value: bigint; validAfter?: bigint; validBefore?: bigint; nonce?: Hex }
  ) => {
    const full = {
      from: from.address,
      to: message.to,
      value: message.value,
      validAfter: message.validAfter ?? 0n,
      validBefore: message.validBefore ?? BigInt(Math.floor(Date.now() / 1000) + 3600),
      nonce: message.nonce ?? randomNonce()
    }
    return from
      .signTypedData({ domain, types: authorizationTypes(primaryType), primaryType, message: full })
      .then((signature) => {
        const { r, s, yParity } = parseSignature(signature)
        return {
          ...full,
          args: [
            full.from,
            full.to,
            full.value,
            full.validAfter,
            full.validBefore,
            full.nonce,
            27 + yParity,
            r,
            s
          ] as const
        }
      })
  }

  const fundedDepositAccount = async (amount: bigint) => {
    const account = freshDepositAccount()
    await mintTestUsdc(c.publicClient, { token, to: account.address, amount, owner })
    return account
  }

  beforeAll(async () => {
    const started = performance.now()
    // Port 0: each vitest fork gets a port of its own from the OS.
    node = await startAnvil()
    startMs = performance.now() - started
    console.log(`anvil ready on port ${node.port} in ${startMs.toFixed(0)} ms`)
    c = clientsFor(node)
    token = await deployTestUsdc(c.publicClient, owner)
    domain = { name: "USD Coin", version: "2", chainId: node.chainId, verifyingContract: token }
  })

  afterAll(async () => {
    await node?.stop()
  })

  it("starts quickly on the sandbox chain id", async () => {
    expect(node.chainId).toBe(DEFAULT_CHAIN_ID)
    expect(await c.publicClient.getChainId()).toBe(DEFAULT_CHAIN_ID)
    expect(startMs).toBeLessThan(5_000)
  })

  it("has USDC's metadata and EIP-712 domain", async () => {
    const read = <F extends "name" | "symbol" | "decimals" | "version" | "owner" | "DOMAIN_SEPARATOR">(
      f: F
    ) => c.publicClient.readContract({ address: token, abi, functionName: f })
    expect(await read("name")).toBe("USD Coin")
    expect(await read("symbol")).toBe("USDC")
    expect(await read("decimals")).toBe(6)
    expect(await read("version")).toBe("2")
    expect(await read("owner")).toBe(owner.address)
    expect(await read("DOMAIN_SEPARATOR")).toBe(domainSeparator({ domain }))
  })

  it("mints only for the owner", async () => {
    const to = freshAddress()
    await mintTestUsdc(c.publicClient, { token, to, amount: 1_234_567n, owner })
    expect(await usdc(to)).toBe(1_234_567n)
    const notOwner = await revertName(
      c.publicClient.simulateContract({
        address: token,
        abi,
        functionName: "mint",
        args: [to, 1n],
        account: relayer
      })
    )
    expect(notOwner).toBe("NotOwner")
  })

  it("moves USDC out of a gasless deposit address with transferWithAuthorization, relayed by the treasury", async () => {
    const deposit = await fundedDepositAccount(125_000_001n)
    const payout = freshAddress()
    const payer = freshAddress()
    expect(await c.publicClient.getBalance({ address: deposit.address })).toBe(0n)
    const relayerEthBefore = await c.publicClient.getBalance({ address: relayer.address })

    // Exactly the amount to the payout address, the remainder back to the payer: the settlement shape.
    const settle = await signAuthorization(deposit, "TransferWithAuthorization", {
      to: payout,
      value: 100_000_000n
    })
    const settleHash = await c
      .wallet(relayer)
      .writeContract({ address: token, abi, functionName: "transferWithAuthorization", args: settle.args })
    const settleReceipt = await c.publicClient.waitForTransactionReceipt({ hash: settleHash })
    expect(settleReceipt.status).toBe("success")
    console.log(`transferWithAuthorization gas used: ${settleReceipt.gasUsed}`)

    const refund = await signAuthorization(deposit, "TransferWithAuthorization", {
      to: payer,
      value: 25_000_001n
    })
    const refundHash = await c
      .wallet(relayer)
      .writeContract({ address: token, abi, functionName: "transferWithAuthorization", args: refund.args })
    const refundReceipt = await c.publicClient.waitForTransactionReceipt({ hash: refundHash })
    expect(refundReceipt.status).toBe("success")

    expect(await usdc(payout)).toBe(100_000_000n)
    expect(await usdc(payer)).toBe(25_000_001n)
    expect(await usdc(deposit.address)).toBe(0n)
    expect(await c.publicClient.getBalance({ address: deposit.address })).toBe(0n)
    const gasPaid =
      settleReceipt.gasUsed * settleReceipt.effectiveGasPrice +
      refundReceipt.gasUsed * refundReceipt.effectiveGasPrice
    expect(await c.publicClient.getBalance({ address: relayer.address })).toBe(relayerEthBefore - gasPaid)

    const events = parseEventLogs({ abi, logs: settleReceipt.logs })
    expect(events.map((e) => e.eventName)).toEqual(["AuthorizationUsed", "Transfer"])
    expect(events[1]?.args).toEqual({ from: deposit.address, to: payout, value: 100_000_000n })
    expect(
      await c.publicClient.readContract({
        address: token,
        abi,
        functionName: "authorizationState",
        args: [deposit.address, settle.nonce]
      })
    ).toBe(true)
  })

  it("refuses a replayed authorization, in simulation and on chain", async () => {
    const deposit = await fundedDepositAccount(10_000_000n)
    const signed = await signAuthorization(deposit, "TransferWithAuthorization", {
      to: freshAddress(),
      value: 4_000_000n
    })
    const relayerWallet = c.wallet(relayer)
    const first = await relayerWallet.writeContract({
      address: token,
      abi,
      functionName: "transferWithAuthorization",
      args: signed.args
    })
    expect((await c.publicClient.waitForTransactionReceipt({ hash: first })).status).toBe("success")

    expect(
      await revertName(
        c.publicClient.simulateContract({
          address: token,
          abi,
          functionName: "transferWithAuthorization",
          args: signed.args,
          account: relayer
        })
      )
    ).toBe("AuthorizationUsedOrCanceled")
    // With an explicit gas limit there is no estimate to fail first: the replay is mined and reverts.
    const replay = await relayerWallet.writeContract({
      address: token,
      abi,
      functionName: "transferWithAuthorization",
      args: signed.args,
      gas: 200_000n
    })
    expect((await c.publicClient.waitForTransactionReceipt({ hash: replay })).status).toBe("reverted")
    expect(await usdc(deposit.address)).toBe(6_000_000n)
  })

  it("refuses expired, not-yet-valid, tampered and canceled authorizations", async () => {
    const deposit = await fundedDepositAccount(5_000_000n)
    const now = BigInt(Math.floor(Date.now() / 1000))
    const simulate = (args: Awaited<ReturnType<typeof signAuthorization>>["args"]) =>
      revertName(
        c.publicClient.simulateContract({
          address: token,
          abi,
          functionName: "transferWithAuthorization",
          args,
          account: relayer
        })
      )
    const to = freshAddress()
    const expired = await signAuthorization(deposit, "TransferWithAuthorization", {
      to,
      value: 1n,
      validBefore: now - 1n
    })
    expect(await simulate(expired.args)).toBe("AuthorizationExpired")
    const early = await signAuthorization(deposit, "TransferWithAuthorization", {
      to,
      value: 1n,
      validAfter: now + 3600n
    })
    expect(await simulate(early.args)).toBe("AuthorizationNotYetValid")

    const valid = await signAuthorization(deposit, "TransferWithAuthorization", { to, value: 1n })
    const tampered = [...valid.args] as unknown as typeof valid.args
    ;(tampered as unknown as Array<unknown>)[2] = 2n
    expect(await simulate(tampered)).toBe("InvalidSignature")

    // The deposit key cancels; the relayer submits the cancellation, since the address has no gas.
    const cancelSignature = await deposit.signTypedData({
      domain,
      types: {
        CancelAuthorization: [
          { name: "authorizer", type: "address" },
          { name: "nonce", type: "bytes32" }
        ]
      },
      primaryType: "CancelAuthorization",
      message: { authorizer: deposit.address, nonce: valid.nonce }
    })
    const { r, s, yParity } = parseSignature(cancelSignature)
    const cancel = await c.wallet(relayer).writeContract({
      address: token,
      abi,
      functionName: "cancelAuthorization",
      args: [deposit.address, valid.nonce, 27 + yParity, r, s]
    })
    expect((await c.publicClient.waitForTransactionReceipt({ hash: cancel })).status).toBe("success")
    expect(await simulate(valid.args)).toBe("AuthorizationUsedOrCanceled")
    expect(await usdc(deposit.address)).toBe(5_000_000n)
  })

  it("lets only the payee submit receiveWithAuthorization", async () => {
    const deposit = await fundedDepositAccount(3_000_000n)
    const payeeBefore = await usdc(payee.address)
    const signed = await signAuthorization(deposit, "ReceiveWithAuthorization", {
      to: payee.address,
      value: 3_000_000n
    })
    const byRelayer = await revertName(
      c.publicClient.simulateContract({
        address: token,
        abi,
        functionName: "receiveWithAuthorization",
        args: signed.args,
        account: relayer
      })
    )
    expect(byRelayer).toBe("CallerMustBePayee")
    // A receive authorization is not a transfer authorization: the typehash differs, so the signature fails.
    const asTransfer = await revertName(
      c.publicClient.simulateContract({
        address: token,
        abi,
        functionName: "transferWithAuthorization",
        args: signed.args,
        account: relayer
      })
    )
    expect(asTransfer).toBe("InvalidSignature")

    const hash = await c
      .wallet(payee)
      .writeContract({ address: token, abi, functionName: "receiveWithAuthorization", args: signed.args })
    expect((await c.publicClient.waitForTransactionReceipt({ hash })).status).toBe("success")
    expect(await usdc(payee.address)).toBe(payeeBefore + 3_000_000n)
    expect(await usdc(deposit.address)).toBe(0n)
  })

  it("accepts an EIP-2612 permit signed by a gasless holder", async () => {
    const holder = await fundedDepositAccount(7_000_000n)
    const to = freshAddress()
    const deadline = BigInt(Math.floor(Date.now() / 1000) + 600)
    const nonce = await c.publicClient.readContract({
      address: token,
      abi,
      functionName: "nonces",
      args: [holder.address]
    })
    const signature = await holder.signTypedData({
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
    const { r, s, yParity } = parseSignature(signature)
    const relayerWallet = c.wallet(relayer)
    const permitArgs = [holder.address, relayer.address, 7_000_000n, deadline, 27 + yParity, r, s] as const
    const permit = await relayerWallet.writeContract({
      address: token,
      abi,
      functionName: "permit",
      args: permitArgs
    })
    expect((await c.publicClient.waitForTransactionReceipt({ hash: permit })).status).toBe("success")
    expect(
      await c.publicClient.readContract({
        address: token,
        abi,
        functionName: "allowance",
        args: [holder.address, relayer.address]
      })
    ).toBe(7_000_000n)
    expect(
      await c.publicClient.readContract({
        address: token,
        abi,
        functionName: "nonces",
        args: [holder.address]
      })
    ).toBe(nonce + 1n)
    expect(
      await revertName(
        c.publicClient.simulateContract({
          address: token,
          abi,
          functionName: "permit",
          args: permitArgs,
          account: relayer
        })
      )
    ).toBe("InvalidSignature")

    const pull = await relayerWallet.writeContract({
      address: token,
      abi,
      functionName: "transferFrom",
      args: [holder.address, to, 7_000_000n]
    })
    expect((await c.publicClient.waitForTransactionReceipt({ hash: pull })).status).toBe("success")
    expect(await usdc(to)).toBe(7_000_000n)
    expect(await usdc(holder.address)).toBe(0n)
  })

  it("fails loudly when a second node is started on a port already in use", async () => {
    const started = performance.now()
    await expect(startAnvil({ port: node.port })).rejects.toThrow(
      /exited .*before it was ready[\s\S]*already in use/i
    )
    expect(performance.now() - started).toBeLessThan(5_000)
    // The first node is untouched.
    expect(await c.publicClient.getChainId()).toBe(DEFAULT_CHAIN_ID)
  })

  it("evm_snapshot / evm_revert removes a Transfer log (the reorg the watcher must survive)", async () => {
    const head = await c.publicClient.getBlockNumber({ cacheTime: 0 })
    const snapshot = await c.testClient.snapshot()
    const to = freshAddress()
    const hash = await mintTestUsdc(c.publicClient, { token, to, amount: 42_000_000n, owner })
    const receipt = await c.publicClient.getTransactionReceipt({ hash })
    const transfersTo = (fromBlock: bigint) =>
      c.publicClient.getContractEvents({
        address: token,
        abi,
        eventName: "Transfer",
        args: { to },
        fromBlock
      })
    expect((await transfersTo(receipt.blockNumber)).map((log) => log.transactionHash)).toEqual([hash])

    await c.testClient.revert({ id: snapshot })
    expect(await c.publicClient.getBlockNumber({ cacheTime: 0 })).toBe(head)
    expect(await transfersTo(0n)).toEqual([])
    expect(await usdc(to)).toBe(0n)
    await expect(c.publicClient.getTransactionReceipt({ hash })).rejects.toThrow(/could not be found/i)

    // The height comes back with another block: only the hash tells the watcher that what it saw is gone.
    await c.testClient.mine({ blocks: 1 })
    const replacement = await c.publicClient.getBlock({ blockNumber: receipt.blockNumber })
    expect(replacement.hash).not.toBe(receipt.blockHash)
  })
})

describe("local chain: finality", () => {
  let node: AnvilHandle
  let c: Clients
  const slots = 2

  beforeAll(async () => {
    // Mixed mining: a transaction is mined at once, and blocks keep coming so finality catches up with it.
    node = await startAnvil({ blockTime: 0.2, mixedMining: true, slotsInAnEpoch: slots })
    c = clientsFor(node)
  })

  afterAll(async () => {
    await node?.stop()
  })

  it("keeps `finalized` 2 × slotsInAnEpoch blocks behind `latest` and catches up with a transaction", async () => {
    const to = freshAddress()
    const hash = await c.wallet(owner).sendTransaction({ to, value: 1n })
    const receipt = await c.publicClient.waitForTransactionReceipt({ hash })
    const finalizedAtReceipt = await c.publicClient.getBlock({ blockTag: "finalized" })
    expect(finalizedAtReceipt.number).toBeLessThan(receipt.blockNumber)

    const deadline = Date.now() + 10_000
    let finalized = finalizedAtReceipt.number
    while (finalized < receipt.blockNumber && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50))
      finalized = (await c.publicClient.getBlock({ blockTag: "finalized" })).number
    }
    expect(finalized).toBeGreaterThanOrEqual(receipt.blockNumber)

    const [latest, safe, final] = await Promise.all(
      (["latest", "safe", "finalized"] as const).map((blockTag) => c.publicClient.getBlock({ blockTag }))
    )
    // Fetched separately, so a block may land in between: allow one block of skew.
    const lag = latest!.number - final!.number
    expect(lag).toBeGreaterThanOrEqual(BigInt(2 * slots))
    expect(lag).toBeLessThanOrEqual(BigInt(2 * slots + 1))
    expect(safe!.number).toBeGreaterThan(final!.number)
    expect(safe!.number).toBeLessThan(latest!.number)
  })
})

describe("local chain: state file", () => {
  it("keeps the chain across a stop and a restart (the sandbox's data survives)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "anvil-state-"))
    const stateFile = join(dir, "chain.json")
    try {
      const first = await startAnvil({ stateFile })
      const c1 = clientsFor(first)
      const token = await deployTestUsdc(c1.publicClient, owner)
      const holder = freshAddress()
      await mintTestUsdc(c1.publicClient, { token, to: holder, amount: 9_000_001n, owner })
      const head = await c1.publicClient.getBlockNumber({ cacheTime: 0 })
      await first.stop()

      const second = await startAnvil({ stateFile })
      try {
        const c2 = clientsFor(second)
        expect(await c2.publicClient.getBlockNumber({ cacheTime: 0 })).toBe(head)
        expect(
          await c2.publicClient.readContract({
            address: token,
            abi,
            functionName: "balanceOf",
            args: [holder]
          })
        ).toBe(9_000_001n)
      } finally {
        await second.stop()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
