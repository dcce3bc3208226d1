import { PgClient } from "@effect/sql-pg"
import { Clock, Effect, Either } from "effect"
import { getAddress, type Hex, keccak256, parseTransaction, zeroAddress } from "viem"
import { ActorHost } from "../actors/ActorHost"
import { ChainRpcError, chainCall, finalBlock } from "../chain/ChainRpc"
import { linkTo, spanCausedBy } from "../platform/TraceContext"
import { Metrics } from "../platform/Metrics"
import type { JsonRpc } from "../chain/Finality"
import type { Broadcaster } from "./Broadcaster"
import { holdAttention, type TokenGate } from "./TokenGate"
import type { TreasuryWallet } from "./TreasuryWallet"
import type { UsedAuthorizations } from "./UsedAuthorizations"

/** How often the treasury's gas balance is read. */
export const GAS_CHECK_MS = 10_000

/** Receipts asked for in one JSON-RPC batch. */
export const RECEIPTS_PER_BATCH = 200

/** Final transfers fed back to their requests in one commit. */
export const CONFIRMS_PER_COMMIT = 200

/** A transfer signed and recorded, not yet final. */
interface OpenTransfer {
  readonly command_id: string
  readonly deposit_request_id: string
  readonly kind: "settle" | "return"
  readonly tx_nonce: number
  readonly tx_hash: Hex
  readonly raw_tx: Hex
  readonly replaced_tx_hashes: ReadonlyArray<Hex>
  readonly signed_at: Date
  readonly trace_parent: string | null
}

/** A receipt as the node sends it (hex quantities). */
interface RawReceipt {
  readonly transactionHash: Hex
  readonly blockNumber: Hex
  readonly status: Hex
}

/**
 * The receipt follower: every recorded transfer that is not final has its receipts read (all of them in a few
 * JSON-RPC batches per pass, not one call per transfer); one not mined is sent again when the node may have lost
 * it, or replaced at the same nonce when stuck; final ones are fed back to their requests (CHAIN_FINALITY), many
 * in one commit.
 */
export const makeTransferFollower = (
  treasury: TreasuryWallet,
  broadcaster: Broadcaster,
  gate: TokenGate,
  usedAuthorizations: UsedAuthorizations,
  settings: { readonly transferReplaceAfterMs: number; readonly treasuryGasWarnGwei: number }
) =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const host = yield* ActorHost
    const metrics = yield* Metrics
    const { wallet, account, chain, chainAccess } = treasury
    const config = {
      chainFinality: treasury.chainFinality,
      transferReplaceAfterMs: settings.transferReplaceAfterMs
    }
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    /** The receipt of each hash that has one, read in batches (a hash not mined answers null). */
    const receiptsOf = (hashes: ReadonlyArray<Hex>) =>
      Effect.gen(function* () {
        const found = new Map<Hex, RawReceipt>()
        const batches: Array<ReadonlyArray<Hex>> = []
        for (let i = 0; i < hashes.length; i += RECEIPTS_PER_BATCH)
          batches.push(hashes.slice(i, i + RECEIPTS_PER_BATCH))
        yield* Effect.forEach(
          batches,
          (batch) =>
            Effect.tryPromise({
              try: () =>
                chainAccess.together<ReadonlyArray<RawReceipt | null>>(
                  batch.map((hash) => ({ method: "eth_getTransactionReceipt", params: [hash] })),
                  (answers) => answers.length === batch.length,
                  "eth_getTransactionReceipt"
                ),
              catch: (cause) => new ChainRpcError({ method: "eth_getTransactionReceipt", cause })
            }).pipe(
              Effect.tap((answers) =>
                Effect.sync(() => {
                  for (const r of answers) if (r !== null) found.set(r.transactionHash, r)
                })
              )
            ),
          { concurrency: 2, discard: true }
        )
        return found
      })

    /**
     * A transfer broadcast `transferReplaceAfterMs` ago with no receipt is stuck (fees too low for the chain now):
     * sign it again at the same nonce with fees raised by a quarter (at least what replacement needs), keep the old
     * hash (it may still be the one mined) and broadcast. Only one transaction of a nonce can be mined, and the
     * EIP-3009 authorization inside can move the money once, so a replacement never pays twice.
     */
    const replace = (t: OpenTransfer, baseFeePerGas: bigint) =>
      Effect.gen(function* () {
        const tx = parseTransaction(t.raw_tx)
        const bump = (fee: bigint) => fee + fee / 4n + 1n
        const maxPriorityFeePerGas = bump(tx.maxPriorityFeePerGas ?? 0n)
        const floor = baseFeePerGas * 2n + maxPriorityFeePerGas
        const bumped = bump(tx.maxFeePerGas ?? 0n)
        const raw = yield* Effect.promise(() =>
          // The account's own signing: the wallet action would ask the node for the chain id each time.
          account.signTransaction({
            chainId: chain.id,
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
        yield* broadcaster.sendOne({ ...t, tx_hash: keccak256(raw), raw_tx: raw })
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
      metrics.treasuryGasWarn.set(settings.treasuryGasWarnGwei)
      if (gwei < BigInt(settings.treasuryGasWarnGwei)) {
        yield* Effect.logWarning(
          `treasury ${account.address} is low on gas: ${gwei} gwei left (warning below ${settings.treasuryGasWarnGwei} gwei)`
        )
      }
    })

    /**
     * A final transfer that reverted (the token changed between the check and the block): recorded so, with the
     * cause read from the token now. Paused: signed again by itself once unpaused, no request paused. A blacklisted
     * party: its request pauses with that code and nothing is tried again until a resume. Anything else:
     * `transfer_reverted`. The authorization inside was not used, so a later transaction can carry it.
     */
    const reverted = (t: OpenTransfer, receipt: RawReceipt) =>
      Effect.gen(function* () {
        const at = yield* now
        const rows = yield* sql<{ deposit_address: string | null; to_address: string }>`
          select d.deposit_address, t.to_address from transfers t join deposit_requests d on d.id = t.deposit_request_id
          where t.command_id = ${t.command_id}`
        const from = rows[0]?.deposit_address == null ? undefined : getAddress(rows[0].deposit_address)
        const to = getAddress(rows[0]?.to_address ?? zeroAddress)
        const tokenState = yield* Effect.either(gate.read(from === undefined ? [to] : [from, to]))
        const paused = Either.isRight(tokenState) && tokenState.right.paused
        const block =
          Either.isLeft(tokenState) || from === undefined
            ? undefined
            : gate.blockOf(t.kind, from, to, tokenState.right.blacklisted)
        yield* sql.withTransaction(
          Effect.gen(function* () {
            yield* sql`
              update transfers set state = 'reverted', tx_hash = ${receipt.transactionHash},
                block_number = ${BigInt(receipt.blockNumber).toString()}
              where command_id = ${t.command_id}`
            if (paused)
              yield* sql`
                insert into outbox (topic, deposit_request_id, payload, created_at, trace_parent)
                values ('command.retry', ${t.deposit_request_id}, ${{ command_id: t.command_id }}, ${at}, ${t.trace_parent})`
          })
        )
        metrics.transfersReverted.inc({
          cause: paused ? "token_paused" : (block?.code ?? "transfer_reverted")
        })
        if (paused) {
          yield* Effect.logWarning(
            `treasury: the ${t.kind} transfer ${receipt.transactionHash} reverted on a paused token; it goes again once unpaused`
          )
          return
        }
        const code = block?.code ?? "transfer_reverted"
        const described =
          block === undefined
            ? {
                message: `The ${t.kind} transfer ${receipt.transactionHash} reverted.`,
                resolution:
                  "Check the deposit address balance and the treasury's gas, then resume the request."
              }
            : holdAttention(block.code, t.kind, block.party, "blacklisted by the token")
        yield* host.apply(t.deposit_request_id, `reverted:${receipt.transactionHash}`, {
          type: "attention.raised",
          at: at.toISOString(),
          code,
          message: `${described.message} Reverted transaction: ${receipt.transactionHash}.`,
          resolution: described.resolution
        })
      }).pipe(
        spanCausedBy("Treasury.follow", t.trace_parent, {
          "transfer.command_id": t.command_id,
          "transfer.kind": t.kind
        })
      )

    /**
     * Final transfers that succeeded, fed back to their requests (`settlement.confirmed`, `return.confirmed`) in ONE
     * commit that also marks the transfers confirmed, so a crash leaves both or neither. The span links to every
     * transfer's cause; it names the transfer when there is one.
     */
    const confirm = (done: ReadonlyArray<{ t: OpenTransfer; receipt: RawReceipt }>) =>
      Effect.gen(function* () {
        const at = yield* now
        const events = done.map(({ t, receipt }) => {
          const block_number = BigInt(receipt.blockNumber).toString()
          return {
            depositRequestId: t.deposit_request_id,
            eventId: `confirmed:${t.command_id}`,
            event:
              t.kind === "settle"
                ? ({
                    type: "settlement.confirmed",
                    at: at.toISOString(),
                    tx_hash: receipt.transactionHash,
                    block_number
                  } as const)
                : ({
                    type: "return.confirmed",
                    at: at.toISOString(),
                    command_id: t.command_id,
                    tx_hash: receipt.transactionHash,
                    block_number
                  } as const)
          }
        })
        const rows = done.map(({ t, receipt }) => ({
          command_id: t.command_id,
          tx_hash: receipt.transactionHash,
          block_number: BigInt(receipt.blockNumber).toString()
        }))
        yield* host.applyMany(
          events,
          sql`
            update transfers t set state = 'confirmed', tx_hash = u.tx_hash, block_number = u.block_number::bigint,
              confirmed_at = ${at}
            from ${sql.updateValues(rows, "u")}
            where t.command_id = u.command_id`
        )
      }).pipe(
        Effect.withSpan("Treasury.follow", {
          root: true,
          links: done.flatMap(({ t }) => linkTo(t.trace_parent)),
          attributes:
            done.length === 1
              ? { "transfer.command_id": done[0]!.t.command_id, "transfer.kind": done[0]!.t.kind }
              : { "transfer.count": done.length }
        })
      )

    /** The block each open transfer was last seen mined in (this process's memory; empty after a restart). */
    const minedIn = new Map<string, bigint>()

    /** One pass over the transfers not yet final. */
    const follow = Effect.fn("Treasury.follow")(function* () {
      yield* checkGas
      const open = yield* sql<OpenTransfer>`
        select command_id, deposit_request_id, kind, tx_nonce, tx_hash, raw_tx, replaced_tx_hashes, signed_at,
          trace_parent
        from transfers where state = 'signed' order by tx_nonce`
      if (open.length === 0) return
      // Finality first: a receipt read after it can only be older, never wrongly counted final.
      const finalized = yield* finalBlock(wallet.request as JsonRpc, config.chainFinality)
      // Transactions mined so far: one at a nonce at or above this count has no receipt to read yet.
      const mined = yield* chainCall("eth_getTransactionCount", () =>
        wallet.getTransactionCount({ address: account.address, blockTag: "latest" })
      )
      const nowMs = yield* Clock.currentTimeMillis
      // A receipt is read when the transaction is mined and again once its block is final, not at every pass: a
      // transfer seen mined in a block not yet final waits without a call.
      const toRead = open.filter((t) => {
        const seen = minedIn.get(t.command_id)
        return t.tx_nonce < mined && (seen === undefined || seen <= finalized)
      })
      const receipts = yield* receiptsOf(toRead.flatMap((t) => [t.tx_hash, ...t.replaced_tx_hashes]))
      // A treasury nonce used by none of a transfer's transactions: one made after the backup this database was
      // restored from (a replacement) may carry its authorization; it is followed from now on.
      for (const t of toRead) {
        if ([t.tx_hash, ...t.replaced_tx_hashes].some((h) => receipts.has(h))) continue
        const owner = yield* sql<{ deposit_address: string | null }>`
          select deposit_address from deposit_requests where id = ${t.deposit_request_id}`
        const from = owner[0]?.deposit_address
        if (from == null) continue
        const found = yield* usedAuthorizations.replacementOf(
          t.deposit_request_id,
          getAddress(from),
          t.command_id
        )
        if (found === undefined) continue
        yield* sql`
          update transfers set replaced_tx_hashes = array_append(replaced_tx_hashes, ${found.tx_hash})
          where command_id = ${t.command_id} and state = 'signed' and not (${found.tx_hash} = any(replaced_tx_hashes))`
        yield* Effect.logWarning(
          `treasury: ${t.command_id} was executed on chain by ${found.tx_hash}, a transaction this database did not record (a restore from an older backup?): followed from now on`
        )
        const more = yield* receiptsOf([found.tx_hash])
        for (const [hash, receipt] of more) receipts.set(hash, receipt)
        ;(t.replaced_tx_hashes as Array<Hex>).push(found.tx_hash)
      }
      const final: Array<{ t: OpenTransfer; receipt: RawReceipt }> = []
      const resend: Array<OpenTransfer> = []
      const stuck: Array<OpenTransfer> = []
      for (const t of open) {
        const seen = minedIn.get(t.command_id)
        if (seen !== undefined && seen > finalized) continue
        // The current transaction, or one it replaced: whichever was mined is the transfer.
        const receipt = [t.tx_hash, ...t.replaced_tx_hashes]
          .map((h) => receipts.get(h))
          .find((r) => r !== undefined)
        if (receipt !== undefined) {
          const block = BigInt(receipt.blockNumber)
          if (block <= finalized) final.push({ t, receipt })
          else minedIn.set(t.command_id, block)
          continue
        }
        // Not mined (or no longer: a reorganisation took it out), so it is sent again or replaced.
        minedIn.delete(t.command_id)
        if (nowMs - t.signed_at.getTime() > config.transferReplaceAfterMs) stuck.push(t)
        else if (broadcaster.due(t.tx_hash, nowMs)) resend.push(t)
      }
      // A paused token would revert them: nothing is sent again while it is (read only when something would be).
      if (resend.length + stuck.length > 0) {
        const token = yield* Effect.either(gate.read([]))
        if (Either.isRight(token) && token.right.paused) {
          resend.length = 0
          stuck.length = 0
        }
      }
      // Same bytes, same hash: a re-send after a crash or a dropped broadcast can never pay twice.
      yield* broadcaster.send(resend)
      if (stuck.length > 0) {
        const latest = yield* chainCall("eth_getBlockByNumber", () => wallet.getBlock())
        for (const t of stuck) {
          yield* replace(t, latest.baseFeePerGas ?? 0n).pipe(
            spanCausedBy("Treasury.follow", t.trace_parent, {
              "transfer.command_id": t.command_id,
              "transfer.kind": t.kind
            })
          )
        }
      }
      const succeeded = final.filter(({ receipt }) => BigInt(receipt.status) === 1n)
      for (const { t, receipt } of final) if (BigInt(receipt.status) !== 1n) yield* reverted(t, receipt)
      for (let i = 0; i < succeeded.length; i += CONFIRMS_PER_COMMIT)
        yield* confirm(succeeded.slice(i, i + CONFIRMS_PER_COMMIT))
      broadcaster.forget(final.flatMap(({ t }) => [t.tx_hash, ...t.replaced_tx_hashes]))
      for (const { t } of final) minedIn.delete(t.command_id)
    })

    return follow
  })
