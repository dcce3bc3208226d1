import { PgClient } from "@effect/sql-pg"
import { Clock, Effect } from "effect"
import { type Hex, keccak256, parseTransaction, TransactionReceiptNotFoundError } from "viem"
import { ActorHost } from "../ActorHost"
import { chainCall, finalBlock } from "../ChainRpc"
import { spanCausedBy } from "../TraceContext"
import { Metrics } from "../Metrics"
import type { JsonRpc } from "../Finality"
import type { TreasuryWallet } from "./TreasuryWallet"

/** How often the treasury's gas balance is read. */
export const GAS_CHECK_MS = 10_000

/** A transfer signed and recorded, not yet final. */
interface OpenTransfer {
  readonly command_id: string
  readonly deposit_request_id: string
  readonly kind: "settle" | "return"
  readonly tx_hash: Hex
  readonly raw_tx: Hex
  readonly replaced_tx_hashes: ReadonlyArray<Hex>
  readonly signed_at: Date
  readonly trace_parent: string | null
}

/**
 * The broadcaster and receipt follower: every recorded transfer that is not final is broadcast (again, the same
 * bytes), replaced at the same nonce when stuck, and fed back to its request once final (CHAIN_FINALITY).
 */
export const makeTransferFollower = (
  treasury: TreasuryWallet,
  settings: { readonly transferReplaceAfterMs: number; readonly treasuryGasWarnGwei: number }
) =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const host = yield* ActorHost
    const metrics = yield* Metrics
    const { wallet, account, chain } = treasury
    const config = {
      chainFinality: treasury.chainFinality,
      transferReplaceAfterMs: settings.transferReplaceAfterMs
    }
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    /**
     * A transfer broadcast `transferReplaceAfterMs` ago with no receipt is stuck (fees too low for the chain now):
     * sign it again at the same nonce with fees raised by a quarter (at least what replacement needs), keep the old
     * hash (it may still be the one mined) and broadcast. Only one transaction of a nonce can be mined, and the
     * EIP-3009 authorization inside can move the money once, so a replacement never pays twice.
     */
    const replace = (t: { command_id: string; tx_hash: Hex; raw_tx: Hex }) =>
      Effect.gen(function* () {
        const tx = parseTransaction(t.raw_tx)
        const bump = (fee: bigint) => fee + fee / 4n + 1n
        const latest = yield* chainCall("eth_getBlockByNumber", () => wallet.getBlock())
        const maxPriorityFeePerGas = bump(tx.maxPriorityFeePerGas ?? 0n)
        const floor = (latest.baseFeePerGas ?? 0n) * 2n + maxPriorityFeePerGas
        const bumped = bump(tx.maxFeePerGas ?? 0n)
        const raw = yield* Effect.promise(() =>
          wallet.signTransaction({
            account,
            chain,
            type: "eip1559",
            to: tx.to ?? null,
            data: tx.data ?? "0x",
            value: tx.value ?? 0n,
            gas: tx.gas ?? 0n,
            nonce: tx.nonce ?? 0,
            maxPriorityFeePerGas,
            maxFeePerGas: bumped > floor ? bumped : floor
          })
        )
        const at = yield* now
        yield* sql`
          update transfers set replaced_tx_hashes = array_append(replaced_tx_hashes, tx_hash),
            tx_hash = ${keccak256(raw)}, raw_tx = ${raw}, signed_at = ${at}
          where command_id = ${t.command_id} and tx_hash = ${t.tx_hash} and state = 'signed'`
        yield* Effect.logInfo(`transfer ${t.command_id} stuck: replaced ${t.tx_hash} by ${keccak256(raw)}`)
        // A refused broadcast is retried by the next pass: the replacement is recorded.
        yield* chainCall("eth_sendRawTransaction", () =>
          wallet.sendRawTransaction({ serializedTransaction: raw })
        ).pipe(Effect.ignore)
      })

    let gasCheckedAt = Number.NEGATIVE_INFINITY
    /** The treasury's gas, as a metric and, below the warning level, a log line (every GAS_CHECK_MS at most). */
    const checkGas = Effect.gen(function* () {
      const nowMs = yield* Clock.currentTimeMillis
      if (nowMs - gasCheckedAt < GAS_CHECK_MS) return
      gasCheckedAt = nowMs
      const wei = yield* chainCall("eth_getBalance", () => wallet.getBalance({ address: account.address }))
      const gwei = wei / 1_000_000_000n
      metrics.treasuryGas.set(Number(gwei))
      if (gwei < BigInt(settings.treasuryGasWarnGwei)) {
        yield* Effect.logWarning(
          `treasury ${account.address} is low on gas: ${gwei} gwei left (warning below ${settings.treasuryGasWarnGwei} gwei)`
        )
      }
    })

    /** One transfer: broadcast again, replaced when stuck, or recorded final and fed back to its request. */
    const followOne = (t: OpenTransfer, finalized: bigint) =>
      Effect.gen(function* () {
        // The current transaction, or one it replaced: whichever was mined is the transfer.
        let receipt: Awaited<ReturnType<typeof wallet.getTransactionReceipt>> | undefined
        for (const hash of [t.tx_hash, ...t.replaced_tx_hashes]) {
          receipt = yield* chainCall("eth_getTransactionReceipt", () =>
            wallet.getTransactionReceipt({ hash })
          ).pipe(
            // Not mined (yet): the one answer that means "no receipt"; any other failure fails the pass.
            Effect.catchIf(
              (e) => e.cause instanceof TransactionReceiptNotFoundError,
              () => Effect.succeed(undefined)
            )
          )
          if (receipt !== undefined) break
        }
        if (receipt === undefined) {
          const waited = (yield* Clock.currentTimeMillis) - t.signed_at.getTime()
          if (waited > config.transferReplaceAfterMs) {
            yield* replace(t)
            return
          }
          // Same bytes, same hash: a re-send after a crash or a dropped broadcast can never pay twice.
          const refused = yield* chainCall("eth_sendRawTransaction", () =>
            wallet.sendRawTransaction({ serializedTransaction: t.raw_tx })
          ).pipe(
            Effect.match({
              onSuccess: () => undefined,
              onFailure: (e) => (e.cause instanceof Error ? e.cause.message : String(e.cause))
            })
          )
          // The treasury cannot pay gas: nothing moves until someone funds it, so the request asks for attention.
          if (refused !== undefined && /insufficient funds|exceeds the balance/i.test(refused)) {
            yield* host.apply(t.deposit_request_id, `no-gas:${t.tx_hash}`, {
              type: "attention.raised",
              at: (yield* now).toISOString(),
              code: "treasury_out_of_gas",
              message: `The treasury account cannot pay gas for the ${t.kind} transfer ${t.tx_hash}.`,
              resolution: "Fund the treasury account with gas, then resume the request."
            })
          }
          return
        }
        if (receipt.transactionHash !== t.tx_hash) {
          yield* sql`update transfers set tx_hash = ${receipt.transactionHash} where command_id = ${t.command_id}`
        }
        if (receipt.blockNumber > finalized) return
        const at = yield* now
        if (receipt.status !== "success") {
          yield* sql`update transfers set state = 'reverted', block_number = ${receipt.blockNumber.toString()} where command_id = ${t.command_id}`
          yield* host.apply(t.deposit_request_id, `reverted:${receipt.transactionHash}`, {
            type: "attention.raised",
            at: at.toISOString(),
            code: "transfer_reverted",
            message: `The ${t.kind} transfer ${receipt.transactionHash} reverted.`,
            resolution: "Check the deposit address balance and the treasury's gas, then resume the request."
          })
          return
        }
        const confirmed =
          t.kind === "settle"
            ? ({
                type: "settlement.confirmed",
                at: at.toISOString(),
                tx_hash: receipt.transactionHash,
                block_number: receipt.blockNumber.toString()
              } as const)
            : ({
                type: "return.confirmed",
                at: at.toISOString(),
                command_id: t.command_id,
                tx_hash: receipt.transactionHash,
                block_number: receipt.blockNumber.toString()
              } as const)
        yield* host.apply(t.deposit_request_id, `confirmed:${t.command_id}`, confirmed)
        yield* sql`
          update transfers set state = 'confirmed', block_number = ${receipt.blockNumber.toString()}, confirmed_at = ${at}
          where command_id = ${t.command_id}`
      }).pipe(
        spanCausedBy("Treasury.follow", t.trace_parent, {
          "transfer.command_id": t.command_id,
          "transfer.kind": t.kind
        })
      )

    /** One pass over the transfers not yet final. */
    const follow = Effect.gen(function* () {
      yield* checkGas
      const open = yield* sql<OpenTransfer>`
        select command_id, deposit_request_id, kind, tx_hash, raw_tx, replaced_tx_hashes, signed_at, trace_parent
        from transfers where state = 'signed' order by created_at`
      if (open.length === 0) return
      const finalized = yield* finalBlock(wallet.request as JsonRpc, config.chainFinality)
      for (const t of open) yield* followOne(t, finalized)
    })

    return follow
  })
