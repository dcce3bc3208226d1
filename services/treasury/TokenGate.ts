import { PgClient } from "@effect/sql-pg"
import { Clock, Effect } from "effect"
import { type Address, decodeFunctionResult, encodeFunctionData, type Hex } from "viem"
import { ActorHost } from "../actors/ActorHost"
import { ChainRpcError } from "../chain/ChainRpc"
import { usdcAbi } from "../chain/Usdc"
import { Metrics } from "../platform/Metrics"
import type { TreasuryWallet } from "./TreasuryWallet"

/** Why the treasury holds a transfer instead of sending one that could only revert. */
export type HoldCode =
  | "payout_address_blocked"
  | "payer_wallet_blocked"
  | "deposit_address_blocked"
  | "transfer_reverted"

/** A settlement or return as the outbox carries it. */
export interface TransferCommand {
  readonly id: string
  readonly deposit_request_id: string
  readonly topic: string
  readonly payload: {
    readonly type: "settle" | "return"
    readonly command_id: string
    readonly amount_base_units: string
    readonly to: string
  }
  readonly trace_parent: string | null
}

/** How stale `token_status.checked_at` may get while the token's state does not change. */
export const STATUS_REFRESH_MS = 5_000

/** `eth_call`s sent in one JSON-RPC batch: providers cap a batch's size (some at 100). */
export const CALLS_PER_BATCH = 100

/** The attention a hold raises: what happened and what resumes it, in the merchant's words. */
export const holdAttention = (
  code: HoldCode,
  kind: "settle" | "return",
  party: string,
  reason: string
): { readonly message: string; readonly resolution: string } => {
  const transfer = kind === "settle" ? "settlement" : "return"
  switch (code) {
    case "payout_address_blocked":
      return {
        message: `USDC's issuer has blacklisted the payout address ${party}: the settlement was held, nothing was sent.`,
        resolution:
          "Resume the request with another enabled payout address of the account (payout_address_id); the blocked one is disabled."
      }
    case "payer_wallet_blocked":
      return {
        message: `USDC's issuer has blacklisted the payer's wallet ${party}: the return was held and stays owed.`,
        resolution: "Resume the request once the wallet is no longer blacklisted; the return is then sent."
      }
    case "deposit_address_blocked":
      return {
        message: `USDC's issuer has blacklisted the deposit address ${party}: no ${transfer} can leave it.`,
        resolution: "Resume the request once the deposit address is no longer blacklisted."
      }
    case "transfer_reverted":
      return {
        message: `The ${transfer} would revert (${reason}); it was held after repeated checks, nothing was sent.`,
        resolution: "Deal with the cause named in the message, then resume the request."
      }
  }
}

/**
 * The checks before a transfer is signed, so that no transaction that can only revert is ever broadcast: whether the
 * token is paused (every transfer waits, for every account, with no request paused) and whether the sender or the
 * receiver is blacklisted (that one transfer is held and its request paused with the reason). Reads are JSON-RPC
 * batches of `eth_call`s at the latest block, at most CALLS_PER_BATCH each (providers cap a batch's size).
 */
export const makeTokenGate = (treasury: TreasuryWallet) =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const host = yield* ActorHost
    const metrics = yield* Metrics
    const { chainAccess, token } = treasury

    const call = (data: Hex) => ({ method: "eth_call", params: [{ to: token, data }, "latest"] })

    /** `paused()` and `isBlacklisted(a)` for each address, in batches of at most CALLS_PER_BATCH calls. */
    const read = Effect.fn("TokenGate.read")(function* (addresses: ReadonlyArray<Address>) {
      const unique = [...new Set(addresses.map((a) => a.toLowerCase() as Address))]
      const calls = [
        call(encodeFunctionData({ abi: usdcAbi, functionName: "paused" })),
        ...unique.map((a) =>
          call(encodeFunctionData({ abi: usdcAbi, functionName: "isBlacklisted", args: [a] }))
        )
      ]
      const batches: Array<typeof calls> = []
      for (let i = 0; i < calls.length; i += CALLS_PER_BATCH)
        batches.push(calls.slice(i, i + CALLS_PER_BATCH))
      const answered = yield* Effect.forEach(
        batches,
        (batch) =>
          Effect.tryPromise({
            try: () =>
              chainAccess.together<ReadonlyArray<Hex>>(
                batch,
                (all) => all.length === batch.length,
                "eth_call"
              ),
            catch: (cause) => new ChainRpcError({ method: "eth_call", cause })
          }),
        { concurrency: 2 }
      )
      const answers = answered.flat()
      const paused = decodeFunctionResult({ abi: usdcAbi, functionName: "paused", data: answers[0]! })
      const blacklisted = new Set<string>()
      for (const [i, a] of unique.entries())
        if (decodeFunctionResult({ abi: usdcAbi, functionName: "isBlacklisted", data: answers[i + 1]! }))
          blacklisted.add(a)
      yield* recordPaused(paused)
      return { paused, blacklisted }
    })

    let lastPaused: boolean | undefined
    let writtenAtMs = Number.NEGATIVE_INFINITY
    /**
     * The token's pause as every instance's health and metrics read it: a row written when it changes, and otherwise
     * at most every STATUS_REFRESH_MS (its `checked_at`), not at every pass.
     */
    const recordPaused = (paused: boolean) =>
      Effect.gen(function* () {
        const nowMs = yield* Clock.currentTimeMillis
        const changed = lastPaused !== paused
        if (!changed && nowMs - writtenAtMs < STATUS_REFRESH_MS) return
        const at = new Date(nowMs)
        lastPaused = paused
        writtenAtMs = nowMs
        yield* sql`
          insert into token_status (token, paused, changed_at, checked_at)
          values (${token.toLowerCase()}, ${paused}, ${at}, ${at})
          on conflict (token) do update set paused = excluded.paused, checked_at = excluded.checked_at,
            changed_at = case when token_status.paused = excluded.paused then token_status.changed_at
                              else excluded.changed_at end`
        if (changed)
          yield* paused
            ? Effect.logWarning(`treasury: USDC ${token} is paused: every settlement and return waits`)
            : Effect.logInfo(`treasury: USDC ${token} is not paused`)
      })

    /** Which block applies to a transfer from `from` to `to`, if any (the sender first: nothing leaves it). */
    const blockOf = (
      kind: "settle" | "return",
      from: Address,
      to: Address,
      blacklisted: ReadonlySet<string>
    ): { readonly code: HoldCode; readonly party: Address } | undefined => {
      if (blacklisted.has(from.toLowerCase())) return { code: "deposit_address_blocked", party: from }
      if (blacklisted.has(to.toLowerCase()))
        return { code: kind === "settle" ? "payout_address_blocked" : "payer_wallet_blocked", party: to }
      return undefined
    }

    /**
     * Holds a command instead of signing it: kept in `held_transfers` (a resume puts it back in the outbox), its
     * outbox row consumed, in one transaction; then its request pauses with the reason.
     */
    const hold = Effect.fn("TokenGate.hold")(function* (
      command: TransferCommand,
      code: HoldCode,
      party: string,
      reason: string
    ) {
      const atMs = yield* Clock.currentTimeMillis
      const at = new Date(atMs)
      yield* sql.withTransaction(
        Effect.gen(function* () {
          yield* sql`
            insert into held_transfers ${sql.insert({
              command_id: command.payload.command_id,
              deposit_request_id: command.deposit_request_id,
              topic: command.topic,
              payload: command.payload,
              code,
              reason,
              held_at: at,
              trace_parent: command.trace_parent
            })}
            on conflict (command_id) do update set code = excluded.code, reason = excluded.reason,
              held_at = excluded.held_at`
          yield* sql`update outbox set published_at = ${at} where id = ${command.id}`
        })
      )
      metrics.transfersHeld.inc({ code })
      const { message, resolution } = holdAttention(code, command.payload.type, party, reason)
      yield* Effect.logWarning(`treasury: held ${command.payload.command_id} (${code}): ${message}`)
      yield* host.apply(command.deposit_request_id, `held:${command.payload.command_id}:${atMs}`, {
        type: "attention.raised",
        at: at.toISOString(),
        code,
        message,
        resolution
      })
    })

    /**
     * After a resume: a held command goes back to the outbox as it was (same command id, so the same authorization),
     * to be checked again like a new one. False when nothing was held under that id.
     */
    const release = Effect.fn("TokenGate.release")(function* (commandId: string) {
      const at = new Date(yield* Clock.currentTimeMillis)
      const released = yield* sql<{ command_id: string }>`
        with held as (delete from held_transfers where command_id = ${commandId} returning *)
        insert into outbox (topic, deposit_request_id, payload, created_at, trace_parent)
        select topic, deposit_request_id, payload, ${at}, trace_parent from held
        returning payload->>'command_id' as command_id`
      return released.length > 0
    })

    return { read, blockOf, hold, release } as const
  })

export type TokenGate = Effect.Effect.Success<ReturnType<typeof makeTokenGate>>
