import { Clock, Effect } from "effect"
import type { Hex } from "viem"
import { ActorHost } from "../actors/ActorHost"
import { chainCall } from "../chain/ChainRpc"
import type { TreasuryWallet } from "./TreasuryWallet"

/** Transactions sent in one JSON-RPC batch (the node takes them in order, lowest nonce first). */
export const BROADCASTS_PER_BATCH = 100

/** Single sends at once, when a batch had a refused member: few, so nonces still arrive nearly in order. */
export const BROADCAST_CONCURRENCY = 8

/** A recorded transfer not seen mined is sent again after this long (the node may have dropped it). */
export const REBROADCAST_MS = 2_000

/** What a broadcast needs of a recorded transfer. */
export interface RecordedTransfer {
  readonly deposit_request_id: string
  readonly kind: "settle" | "return"
  readonly tx_hash: Hex
  readonly raw_tx: Hex
}

/**
 * Sends recorded transactions (the same bytes each time, so a re-send can never pay twice), several at once, and
 * remembers when each hash was last sent so the follower re-sends only those the node may have lost. The memory
 * is this process's only: after a restart every open transfer is sent again at once.
 */
export const makeBroadcaster = (treasury: TreasuryWallet) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const sentAt = new Map<Hex, number>()

    const sendOne = Effect.fn("Broadcaster.sendOne")(
      function* (t: RecordedTransfer) {
        sentAt.set(t.tx_hash, yield* Clock.currentTimeMillis)
        const refused = yield* chainCall("eth_sendRawTransaction", () =>
          treasury.wallet.sendRawTransaction({ serializedTransaction: t.raw_tx })
        ).pipe(
          Effect.match({
            onSuccess: () => undefined,
            onFailure: (e) => (e.cause instanceof Error ? e.cause.message : String(e.cause))
          })
        )
        // The treasury cannot pay gas: nothing moves until someone funds it, so the request asks for attention.
        // Any other refusal (already known, nonce already used by a mined one) is left to the follower.
        if (refused !== undefined && /insufficient funds|exceeds the balance/i.test(refused)) {
          yield* host.apply(t.deposit_request_id, `no-gas:${t.tx_hash}`, {
            type: "attention.raised",
            at: new Date(yield* Clock.currentTimeMillis).toISOString(),
            code: "treasury_out_of_gas",
            message: `The treasury account cannot pay gas for the ${t.kind} transfer ${t.tx_hash}.`,
            resolution: "Fund the treasury account with gas, then resume the request."
          })
        }
      },
      // A broadcast never fails its caller: what is not mined is sent again by the follower.
      (effect, t) =>
        Effect.catchAllCause(effect, (cause) =>
          Effect.logWarning(`treasury: broadcasting ${t.tx_hash} failed`, cause)
        )
    )

    /**
     * Sends each, in the order given (lowest nonce first), in JSON-RPC batches. A batch with a refused member (already
     * known, a nonce already mined, no gas) is sent again one by one, so each refusal is seen and the rest still go.
     */
    const send = Effect.fn("Broadcaster.send")(function* (transfers: ReadonlyArray<RecordedTransfer>) {
      for (let i = 0; i < transfers.length; i += BROADCASTS_PER_BATCH) {
        const group = transfers.slice(i, i + BROADCASTS_PER_BATCH)
        const at = yield* Clock.currentTimeMillis
        for (const t of group) sentAt.set(t.tx_hash, at)
        const sent = yield* Effect.promise(() =>
          treasury.chainAccess
            .together(
              group.map((t) => ({ method: "eth_sendRawTransaction", params: [t.raw_tx] })),
              () => true,
              "eth_sendRawTransaction"
            )
            .then(
              () => true,
              () => false
            )
        )
        if (!sent)
          yield* Effect.forEach(group, sendOne, { concurrency: BROADCAST_CONCURRENCY, discard: true })
      }
    })

    /** Whether a transfer not seen mined should be sent again now. */
    const due = (hash: Hex, nowMs: number) =>
      nowMs - (sentAt.get(hash) ?? Number.NEGATIVE_INFINITY) >= REBROADCAST_MS

    /** Forgets hashes that are final or replaced, so the memory stays as small as what is in flight. */
    const forget = (hashes: Iterable<Hex>) => {
      for (const h of hashes) sentAt.delete(h)
    }

    return { send, sendOne, due, forget } as const
  })

export type Broadcaster = Effect.Effect.Success<ReturnType<typeof makeBroadcaster>>
