import { PgClient } from "@effect/sql-pg"
import { Clock, Effect } from "effect"
import { spanCausedBy } from "../TraceContext"
import type { makeTransferSigner } from "./TransferSigner"

interface Command {
  readonly id: string
  readonly deposit_request_id: string
  readonly payload: { type: "settle" | "return"; command_id: string; amount_base_units: string; to: string }
  readonly trace_parent: string | null
}

/**
 * The outbox consumer: each settle or return command is signed and recorded (nonce, hash, raw transaction) in
 * the transaction that marks it consumed, before anything is broadcast; a retry command re-signs a reverted one.
 */
export const makeCommandConsumer = (
  signTransfer: Effect.Effect.Success<ReturnType<typeof makeTransferSigner>>
) =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    /** Sign the authorization and the transaction, and record both, before anything is broadcast. */
    const sign = (command: Command) =>
      Effect.gen(function* () {
        const signed = yield* signTransfer({
          deposit_request_id: command.deposit_request_id,
          ...command.payload
        })
        const at = yield* now
        yield* sql.withTransaction(
          Effect.gen(function* () {
            yield* sql`
              insert into transfers (command_id, deposit_request_id, kind, to_address, amount_base_units, tx_nonce, tx_hash,
                raw_tx, state, created_at, signed_at, trace_parent)
              values (${command.payload.command_id}, ${command.deposit_request_id}, ${command.payload.type},
                ${signed.to}, ${command.payload.amount_base_units}, ${signed.txNonce}, ${signed.hash}, ${signed.raw}, 'signed',
                ${at}, ${at}, ${command.trace_parent})
              on conflict (command_id) do nothing`
            yield* sql`update outbox set published_at = ${at} where id = ${command.id}`
          })
        )
      })

    /**
     * After an operator resumed a request: a transfer that reverted is signed again (a new transaction for the same
     * authorization, which the revert left unused) and followed like a new one; one still pending or already final
     * needs nothing new, the follower carries on with it.
     */
    const retry = (command: { readonly id: string; readonly payload: { readonly command_id: string } }) =>
      Effect.gen(function* () {
        const rows = yield* sql<{
          deposit_request_id: string
          to_address: string
          amount_base_units: string
          state: string
        }>`select deposit_request_id, to_address, amount_base_units, state from transfers
           where command_id = ${command.payload.command_id}`
        const transfer = rows[0]
        const at = yield* now
        if (transfer === undefined || transfer.state !== "reverted") {
          yield* sql`update outbox set published_at = ${at} where id = ${command.id}`
          return
        }
        const signed = yield* signTransfer({
          deposit_request_id: transfer.deposit_request_id,
          command_id: command.payload.command_id,
          to: transfer.to_address,
          amount_base_units: BigInt(transfer.amount_base_units).toString()
        })
        yield* sql.withTransaction(
          Effect.gen(function* () {
            yield* sql`
              update transfers set tx_nonce = ${signed.txNonce}, tx_hash = ${signed.hash}, raw_tx = ${signed.raw},
                state = 'signed', block_number = null, signed_at = ${at}, replaced_tx_hashes = '{}'
              where command_id = ${command.payload.command_id} and state = 'reverted'`
            yield* sql`update outbox set published_at = ${at} where id = ${command.id}`
          })
        )
      })

    /** One pass: the pending commands, oldest first; how many there were. */
    const consume = Effect.gen(function* () {
      const commands = yield* sql<Command>`
        select id, deposit_request_id, payload, trace_parent from outbox
        where published_at is null and topic in ('command.settle', 'command.return') order by id limit 20`
      for (const command of commands) {
        yield* sign(command).pipe(
          spanCausedBy("Treasury.sign", command.trace_parent, {
            "transfer.command_id": command.payload.command_id,
            "transfer.kind": command.payload.type
          })
        )
      }
      const retries = yield* sql<{ id: string; payload: { command_id: string } }>`
        select id, payload from outbox where published_at is null and topic = 'command.retry' order by id limit 20`
      for (const command of retries) yield* retry(command)
      return commands.length + retries.length
    })
    return consume
  })
