import { PgClient } from "@effect/sql-pg"
import { Clock, Effect } from "effect"
import { type Address, getAddress, type Hex, parseAbiItem, serializeTransaction } from "viem"
import { chainCall } from "../chain/ChainRpc"
import { usdcAbi } from "../chain/Usdc"
import { Metrics } from "../platform/Metrics"
import type { TokenGate, TransferCommand } from "./TokenGate"
import { authorizationNonce } from "./TransferSigner"
import type { TreasuryWallet } from "./TreasuryWallet"

const authorizationUsed = parseAbiItem(
  "event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)"
)

/** The transaction that executed an authorization, as the chain has it. */
export interface ExecutedTransfer {
  readonly tx_hash: Hex
  readonly tx_nonce: number
  readonly raw_tx: Hex
  readonly to: Address
  readonly value: bigint
  readonly block_number: bigint
}

/**
 * Transfers the chain already made that the database does not know: after a restore from an older backup a
 * settlement or return is commanded again, and its authorization (the same one: its EIP-3009 nonce comes from the
 * command id) is already used, so any new transaction would revert. Asked only when a transfer's simulation is
 * refused. The transaction that used it is found by the token's `AuthorizationUsed` log and recorded as the
 * command's transfer (the follower confirms it once final); nothing is sent. One that cannot be found is held
 * with its request paused, a log line and `deposits_transfers_found_on_chain_total{outcome="unrecoverable"}`.
 */
export const makeUsedAuthorizations = (treasury: TreasuryWallet, gate: TokenGate) =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const metrics = yield* Metrics
    const { wallet, token } = treasury
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const isUsed = (from: Address, commandId: string) =>
      chainCall("authorizationState", () =>
        wallet.readContract({
          address: token,
          abi: usdcAbi,
          functionName: "authorizationState",
          args: [from, authorizationNonce(commandId)]
        })
      )

    /** The transaction that used the authorization, searched from the request's first credit (it came after). */
    const executedBy = Effect.fn("UsedAuthorizations.executedBy")(function* (
      requestId: string,
      from: Address,
      commandId: string
    ) {
      const hint = yield* sql<{ n: string | null }>`
        select min(block_number)::text as n from chain_credits where deposit_request_id = ${requestId}`
      const fromBlock = hint[0]?.n == null ? 0n : BigInt(hint[0].n)
      const used = yield* chainCall("eth_getLogs", () =>
        wallet.getLogs({
          address: token,
          event: authorizationUsed,
          args: { authorizer: from, nonce: authorizationNonce(commandId) },
          fromBlock,
          toBlock: "latest"
        })
      )
      const log = used[0]
      if (log === undefined) return undefined
      const hash = log.transactionHash
      const receipt = yield* chainCall("eth_getTransactionReceipt", () =>
        wallet.getTransactionReceipt({ hash })
      )
      const moved = receipt.logs
        .filter((l) => l.address.toLowerCase() === token.toLowerCase() && l.topics[0] !== undefined)
        .flatMap((l) => {
          try {
            return [{ log: l, ...decodeTransfer(l.data, l.topics) }]
          } catch {
            return []
          }
        })
        .find((t) => t.from.toLowerCase() === from.toLowerCase())
      if (moved === undefined) return undefined
      const tx = yield* chainCall("eth_getTransactionByHash", () => wallet.getTransaction({ hash }))
      // The exact bytes when the node keeps them; else rebuilt from the transaction and its signature.
      const raw = yield* chainCall("eth_getRawTransactionByHash", () =>
        wallet.request({ method: "eth_getRawTransactionByHash" as never, params: [hash] as never })
      ).pipe(
        Effect.map((r) => r as unknown as Hex | null),
        Effect.orElseSucceed(() => null)
      )
      return {
        tx_hash: hash,
        tx_nonce: tx.nonce,
        raw_tx: raw ?? serializeTransaction(tx as never, { r: tx.r, s: tx.s, yParity: tx.yParity ?? 0 }),
        to: getAddress(moved.to),
        value: moved.value,
        block_number: receipt.blockNumber
      } satisfies ExecutedTransfer
    })

    /**
     * Whether the command's authorization was already used; if so, what was done about it (its transfer recorded,
     * or, not found on the chain, the command held and its request paused). `insert` for a command never signed
     * here, `update` for a recorded transfer that reverted and is being signed again.
     */
    const recognise = Effect.fn("UsedAuthorizations.recognise")(function* (
      command: TransferCommand,
      from: Address,
      mode: "insert" | "update"
    ) {
      const commandId = command.payload.command_id
      if (!(yield* isUsed(from, commandId))) return false
      const found = yield* executedBy(command.deposit_request_id, from, commandId)
      const at = yield* now
      if (found === undefined) {
        metrics.transfersFoundOnChain.inc({ outcome: "unrecoverable" })
        yield* Effect.logError(
          `treasury: the authorization of ${commandId} from ${from} was already used on chain, and no transaction of it was found: nothing was sent; the request is paused`
        )
        yield* gate.hold(
          command,
          "transfer_reverted",
          command.payload.to,
          "its authorization was already used on chain by a transaction that was not found"
        )
        return true
      }
      const asked = `${command.payload.amount_base_units} to ${getAddress(command.payload.to)}`
      const made = `${found.value} to ${found.to}`
      yield* sql.withTransaction(
        Effect.gen(function* () {
          if (mode === "insert")
            yield* sql`
              insert into transfers ${sql.insert({
                command_id: commandId,
                deposit_request_id: command.deposit_request_id,
                kind: command.payload.type,
                to_address: found.to,
                amount_base_units: found.value.toString(),
                tx_nonce: found.tx_nonce,
                tx_hash: found.tx_hash,
                raw_tx: found.raw_tx,
                state: "signed",
                created_at: at,
                signed_at: at,
                trace_parent: command.trace_parent
              })}
              on conflict (command_id) do nothing`
          else
            yield* sql`
              update transfers set tx_nonce = ${found.tx_nonce}, tx_hash = ${found.tx_hash}, raw_tx = ${found.raw_tx},
                state = 'signed', block_number = null, signed_at = ${at}, replaced_tx_hashes = '{}'
              where command_id = ${commandId} and state = 'reverted'`
          yield* sql`update outbox set published_at = ${at} where id = ${command.id}`
        })
      )
      metrics.transfersFoundOnChain.inc({ outcome: "found" })
      yield* (asked === made ? Effect.logWarning : Effect.logError)(
        `treasury: ${commandId} was already executed on chain by ${found.tx_hash} (block ${found.block_number}, ${made}${asked === made ? "" : `; the command asked ${asked}`}): recorded as its transfer, nothing sent (a restore from an older backup?)`
      )
      return true
    })

    /**
     * A recorded transfer whose treasury nonce was used by a transaction of none of its hashes (a replacement made
     * after the backup the database came from): the transaction that used its authorization, to follow instead.
     */
    const replacementOf = Effect.fn("UsedAuthorizations.replacementOf")(function* (
      requestId: string,
      from: Address,
      commandId: string
    ) {
      if (!(yield* isUsed(from, commandId))) return undefined
      return yield* executedBy(requestId, from, commandId)
    })

    return { recognise, replacementOf } as const
  })

export type UsedAuthorizations = Effect.Effect.Success<ReturnType<typeof makeUsedAuthorizations>>

/** keccak256("Transfer(address,address,uint256)") */
const TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"

const decodeTransfer = (data: Hex, topics: ReadonlyArray<Hex>) => {
  if (topics.length !== 3) throw new Error("not a Transfer")
  const [signature, fromTopic, toTopic] = topics
  if (signature !== TRANSFER_TOPIC) throw new Error("not a Transfer")
  return {
    from: getAddress(`0x${fromTopic!.slice(26)}`),
    to: getAddress(`0x${toTopic!.slice(26)}`),
    value: BigInt(data)
  }
}
