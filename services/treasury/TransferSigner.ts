import { PgClient } from "@effect/sql-pg"
import { Effect } from "effect"
import { encodeFunctionData, getAddress, keccak256, parseSignature, toHex } from "viem"
import { chainCall } from "../ChainRpc"
import { KeyVault } from "../KeyVault"
import { usdcAbi } from "../Usdc"
import type { TreasuryWallet } from "./TreasuryWallet"

/**
 * The signer and nonce allocator: an EIP-3009 authorization from the deposit address (keyed by the command id,
 * so it can move the money once) inside a transaction from the treasury account at the next nonce of its own.
 */
export const makeTransferSigner = (treasury: TreasuryWallet) =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const vault = yield* KeyVault
    const { wallet, account, chain, chainId, token } = treasury
    const signTransfer = (transfer: {
      readonly deposit_request_id: string
      readonly command_id: string
      readonly to: string
      readonly amount_base_units: string
    }) =>
      Effect.gen(function* () {
        const rows = yield* sql<{ deposit_index: number | null }>`
          select deposit_index from deposit_requests where id = ${transfer.deposit_request_id}`
        const index = rows[0]?.deposit_index
        if (index === null || index === undefined)
          return yield* Effect.dieMessage(`request ${transfer.deposit_request_id} has no deposit index`)
        const deposit = vault.depositAccount(index)
        const nonce = keccak256(toHex(transfer.command_id))
        const message = {
          from: deposit.address,
          to: getAddress(transfer.to),
          value: BigInt(transfer.amount_base_units),
          validAfter: 0n,
          validBefore: 2n ** 48n,
          nonce
        }
        // Local signing, no node involved: a failure here is a defect.
        const authorization = yield* Effect.promise(() =>
          deposit.signTypedData({
            domain: { name: "USD Coin", version: "2", chainId, verifyingContract: token },
            types: {
              TransferWithAuthorization: [
                { name: "from", type: "address" },
                { name: "to", type: "address" },
                { name: "value", type: "uint256" },
                { name: "validAfter", type: "uint256" },
                { name: "validBefore", type: "uint256" },
                { name: "nonce", type: "bytes32" }
              ]
            },
            primaryType: "TransferWithAuthorization",
            message
          })
        )
        const { v, r, s } = parseSignature(authorization)
        const data = encodeFunctionData({
          abi: usdcAbi,
          functionName: "transferWithAuthorization",
          args: [
            message.from,
            message.to,
            message.value,
            message.validAfter,
            message.validBefore,
            nonce,
            Number(v ?? 27n),
            r,
            s
          ]
        })
        // Our own nonces: transfers are signed and recorded before they are broadcast, so the node's pending count
        // does not know the ones signed a moment ago (two signed in one step would otherwise share a nonce).
        const recorded = yield* sql<{ n: number | null }>`select max(tx_nonce) as n from transfers`
        const pending = yield* chainCall("eth_getTransactionCount", () =>
          wallet.getTransactionCount({ address: account.address, blockTag: "pending" })
        )
        const txNonce = Math.max(pending, (recorded[0]?.n ?? -1) + 1)
        const request = yield* chainCall("prepareTransactionRequest", () =>
          wallet.prepareTransactionRequest({ to: token, data, account, chain, nonce: txNonce })
        )
        const raw = yield* Effect.promise(() => wallet.signTransaction(request))
        return { to: message.to, txNonce: request.nonce, raw, hash: keccak256(raw) }
      })

    return signTransfer
  })
