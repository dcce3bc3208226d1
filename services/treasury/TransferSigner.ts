import { PgClient } from "@effect/sql-pg"
import { Effect, Either } from "effect"
import { encodeFunctionData, getAddress, type Hex, keccak256, toHex } from "viem"
import { ChainRpcError, chainCall } from "../chain/ChainRpc"
import { KeyVault } from "../chain/KeyVault"
import { readTokenDomain, signTransferAuthorization, type TokenDomain, usdcAbi } from "../chain/Usdc"
import type { TreasuryWallet } from "./TreasuryWallet"

/** A transfer to sign: who pays (the request's deposit address), to whom, how much, under which command. */
export interface TransferOrder {
  readonly deposit_request_id: string
  readonly command_id: string
  readonly to: string
  readonly amount_base_units: string
}

/** An authorization signed by the deposit key, as the calldata of the treasury's transaction. */
export interface Authorization {
  readonly to: Hex
  readonly data: Hex
}

/** An authorization with the gas its transaction needs. */
export interface AuthorizedTransfer extends Authorization {
  readonly gas: bigint
}

/**
 * The EIP-3009 nonce of a transfer: derived from its command id, so a re-signed transfer is the same authorization.
 * A settlement redirected to another payout address (`settle:<id>:redirect:<n>`, machines/DepositRequest.ts) shares
 * the nonce of the request's first settlement: the token executes at most one authorization per nonce, so however
 * often a request is redirected, and whatever reverted transaction published an earlier authorization, at most one
 * settlement can ever leave its deposit address.
 */
export const authorizationNonce = (commandId: string): Hex =>
  keccak256(toHex(commandId.replace(/^(settle:[^:]+):redirect:\d+$/, "$1")))

/** Gas estimates asked for in one JSON-RPC batch. */
export const ESTIMATES_PER_BATCH = 100

/** The most gas an estimate searches up to: a transfer with authorization needs about 60–85k. */
const ESTIMATE_CAP = 300_000n

/** What every transaction of one signing pass shares: the fees, read once. */
export interface PassFees {
  readonly maxFeePerGas: bigint
  readonly maxPriorityFeePerGas: bigint
}

/**
 * The signer and nonce allocator, split so a pass signs many transfers with few node calls: an EIP-3009
 * authorization from the deposit address (keyed by the command id, so it can move the money once) is made per
 * transfer and the gas of all of them estimated in batches; fees and the first free nonce are read once per pass; each
 * transaction from the treasury account then takes the next nonce of its own and is signed locally.
 */
export const makeTransferSigner = (treasury: TreasuryWallet) =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const vault = yield* KeyVault
    const { wallet, account, chain, chainId, token } = treasury

    // The token's EIP-712 domain, read from the contract once it answers (a failed read fails this pass only).
    let domain: TokenDomain | undefined
    const tokenDomain = Effect.suspend(() =>
      domain !== undefined
        ? Effect.succeed(domain)
        : Effect.tryPromise({
            try: () => readTokenDomain(wallet, token, chainId),
            catch: (cause) => new ChainRpcError({ method: "eip712Domain", cause })
          }).pipe(
            Effect.tap((read) =>
              Effect.sync(() => {
                domain = read
              })
            )
          )
    )

    /** The deposit key index of each request, in one query. */
    const depositIndexes = Effect.fn("TransferSigner.depositIndexes")(function* (
      requestIds: ReadonlyArray<string>
    ) {
      if (requestIds.length === 0) return new Map<string, number>()
      const rows = yield* sql<{ id: string; deposit_index: number | null }>`
          select id, deposit_index from deposit_requests where id in ${sql.in([...new Set(requestIds)])}`
      const indexes = new Map<string, number>()
      for (const r of rows) if (r.deposit_index !== null) indexes.set(r.id, r.deposit_index)
      return indexes
    })

    /** The authorization, signed by the deposit key locally (no node involved). */
    const authorize = Effect.fn("TransferSigner.authorize")(function* (
      transfer: TransferOrder,
      depositIndex: number | undefined
    ) {
      if (depositIndex === undefined)
        return yield* Effect.dieMessage(`request ${transfer.deposit_request_id} has no deposit index`)
      const deposit = vault.depositAccount(depositIndex)
      const nonce = authorizationNonce(transfer.command_id)
      const message = {
        from: deposit.address,
        to: getAddress(transfer.to),
        value: BigInt(transfer.amount_base_units),
        validAfter: 0n,
        validBefore: 2n ** 48n,
        nonce
      }
      // Local signing, no node involved: a failure here is a defect.
      const signingDomain = yield* tokenDomain
      const a = yield* Effect.promise(() => signTransferAuthorization(deposit, signingDomain, message))
      const data = encodeFunctionData({
        abi: usdcAbi,
        functionName: "transferWithAuthorization",
        args: [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, a.v, a.r, a.s]
      })
      return { to: message.to, data } satisfies Authorization
    })

    const estimateOne = (data: Hex) =>
      chainCall("eth_estimateGas", () =>
        wallet.estimateGas({ account, to: token, data, gas: ESTIMATE_CAP, blockTag: "latest" })
      )

    /**
     * The gas of each authorization's transaction, or why it cannot be estimated now (it would revert: the deposit
     * address lacks the funds). Asked in JSON-RPC batches; a batch with a refused member is asked again one by one,
     * so one refusal does not fail the others.
     */
    const estimateGas = Effect.fn("TransferSigner.estimateGas")(function* (
      authorizations: ReadonlyArray<Authorization>
    ) {
      const batches: Array<ReadonlyArray<Authorization>> = []
      for (let i = 0; i < authorizations.length; i += ESTIMATES_PER_BATCH)
        batches.push(authorizations.slice(i, i + ESTIMATES_PER_BATCH))
      const estimated = yield* Effect.forEach(
        batches,
        (group) =>
          Effect.tryPromise({
            try: () =>
              treasury.chainAccess.together<ReadonlyArray<Hex>>(
                group.map((a) => ({
                  method: "eth_estimateGas",
                  // Capped: the node's search starts there instead of at the block gas limit.
                  // At the latest block, not the pending one a node may build by running its whole pool first.
                  params: [
                    { from: account.address, to: token, data: a.data, gas: toHex(ESTIMATE_CAP) },
                    "latest"
                  ]
                })),
                (answers) => answers.length === group.length,
                "eth_estimateGas"
              ),
            catch: (cause) => new ChainRpcError({ method: "eth_estimateGas", cause })
          }).pipe(
            Effect.map((answers) => answers.map((gas) => Either.right<bigint>(BigInt(gas)))),
            Effect.orElse(() =>
              Effect.forEach(group, (a) => Effect.either(estimateOne(a.data)), { concurrency: 8 })
            )
          ),
        { concurrency: 2 }
      )
      return estimated.flat()
    })

    /** Fees for the transactions of one pass. */
    const passFees = Effect.fn("TransferSigner.passFees")(function* () {
      return yield* chainCall("eth_estimateFeesPerGas", () =>
        wallet.estimateFeesPerGas({ chain, type: "eip1559" })
      )
    })

    /**
     * The first nonce no recorded transfer holds. Our own count, not only the node's: transfers are signed and
     * recorded before they are broadcast, so the node's pending count does not know the ones signed a moment ago.
     */
    const nextNonce = Effect.fn("TransferSigner.nextNonce")(function* () {
      const recorded = yield* sql<{ n: number | null }>`select max(tx_nonce) as n from transfers`
      const pending = yield* chainCall("eth_getTransactionCount", () =>
        wallet.getTransactionCount({ address: account.address, blockTag: "pending" })
      )
      return Math.max(pending, (recorded[0]?.n ?? -1) + 1)
    })

    /** The treasury's transaction carrying an authorization, at a given nonce, signed locally. */
    const signTransaction = Effect.fn("TransferSigner.signTransaction")(function* (
      authorized: AuthorizedTransfer,
      txNonce: number,
      fees: PassFees
    ) {
      const raw = yield* Effect.promise(() =>
        // The account's own signing: the wallet action would ask the node for the chain id each time.
        account.signTransaction({
          chainId: chain.id,
          type: "eip1559",
          to: token,
          data: authorized.data,
          gas: authorized.gas,
          nonce: txNonce,
          maxFeePerGas: fees.maxFeePerGas,
          maxPriorityFeePerGas: fees.maxPriorityFeePerGas
        })
      )
      return { to: authorized.to, txNonce, raw, hash: keccak256(raw) }
    })

    return { depositIndexes, authorize, estimateGas, passFees, nextNonce, signTransaction } as const
  })

export type SignedTransaction = Effect.Effect.Success<ReturnType<TransferSigner["signTransaction"]>>

export type TransferSigner = Effect.Effect.Success<ReturnType<typeof makeTransferSigner>>
