import { PgClient } from "@effect/sql-pg"
import { Clock, Effect, Either, Fiber } from "effect"
import { type Address, getAddress } from "viem"
import { spanCausedBy } from "../platform/TraceContext"
import type { Broadcaster } from "./Broadcaster"
import type { TokenGate, TransferCommand as Command } from "./TokenGate"
import type { AuthorizedTransfer, SignedTransaction, TransferSigner } from "./TransferSigner"
import type { UsedAuthorizations } from "./UsedAuthorizations"

/** A command whose simulation reverts this many passes in a row is held, its request paused: never a silent loop. */
export const SIMULATION_TRIES = 5

/** Commands taken in one pass: all that a burst leaves, bounded so one pass's memory stays small. */
export const COMMANDS_PER_PASS = 2_000

/** Transfers recorded per transaction: each group is broadcast while the next is signed. */
export const RECORD_GROUP = 100

/**
 * The outbox consumer, as a pipeline over every pending settle and return command, group by group: the
 * authorizations are made, their gas estimated in one JSON-RPC batch, the transactions take consecutive nonces,
 * are signed and are recorded (nonce, hash, raw transaction) in ONE transaction that also marks their commands
 * consumed; only then is the group broadcast, while the next group is prepared. A retry command re-signs a reverted transfer.
 */
export const makeCommandConsumer = (
  signer: TransferSigner,
  broadcaster: Broadcaster,
  gate: TokenGate,
  usedAuthorizations: UsedAuthorizations
) =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
    // Passes in a row whose simulation of a command reverted (this process's memory; a restart starts again).
    const simulationFailures = new Map<string, number>()

    /** The one-time deposit address of each request: the sender of its transfers. */
    const depositAddresses = (requestIds: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        const found = new Map<string, Address>()
        if (requestIds.length === 0) return found
        const rows = yield* sql<{ id: string; deposit_address: string | null }>`
          select id, deposit_address from deposit_requests where id in ${sql.in([...new Set(requestIds)])}`
        for (const r of rows) if (r.deposit_address !== null) found.set(r.id, getAddress(r.deposit_address))
        return found
      })

    const consumed = (ids: ReadonlyArray<string>, at: Date) =>
      ids.length === 0 ? Effect.void : sql`update outbox set published_at = ${at} where id in ${sql.in(ids)}`

    /** Signs, records and broadcasts every command given; how many were recorded. */
    const signAll = (commands: ReadonlyArray<Command>) =>
      Effect.gen(function* () {
        // A command whose transfer is already recorded (or twice in the outbox) is only marked consumed: a
        // second row for it would leave its nonce unused and hold every later transaction back.
        const known = new Set(
          (yield* sql<{ command_id: string }>`
            select command_id from transfers
            where command_id in ${sql.in(commands.map((c) => c.payload.command_id))}`).map(
            (r) => r.command_id
          )
        )
        const fresh: Array<Command> = []
        const done: Array<string> = []
        for (const c of commands) {
          if (known.has(c.payload.command_id)) done.push(c.id)
          else {
            known.add(c.payload.command_id)
            fresh.push(c)
          }
        }
        yield* consumed(done, yield* now)
        if (fresh.length === 0) return 0
        // Nothing that can only revert is signed: a paused token holds every transfer back (the commands stay in
        // the outbox, no request pauses); a blacklisted sender or receiver holds that one and pauses its request.
        const senders = yield* depositAddresses(fresh.map((c) => c.deposit_request_id))
        const tokenState = yield* gate.read([
          ...senders.values(),
          ...fresh.map((c) => getAddress(c.payload.to))
        ])
        if (tokenState.paused) return 0
        const clear: Array<Command> = []
        for (const c of fresh) {
          const from = senders.get(c.deposit_request_id)
          const block =
            from === undefined
              ? undefined
              : gate.blockOf(c.payload.type, from, getAddress(c.payload.to), tokenState.blacklisted)
          if (block === undefined) clear.push(c)
          else yield* gate.hold(c, block.code, block.party, "blacklisted by the token")
        }
        fresh.splice(0, fresh.length, ...clear)
        if (fresh.length === 0) return 0
        const indexes = yield* signer.depositIndexes(fresh.map((c) => c.deposit_request_id))
        const fees = yield* signer.passFees()
        let nonce = yield* signer.nextNonce()
        let recorded = 0
        const broadcasts: Array<Fiber.RuntimeFiber<void>> = []

        /** Stage 1: the group's authorizations, made locally; their gas asked of the node in one batch, not awaited. */
        const authorizeGroup = (group: ReadonlyArray<Command>) =>
          Effect.gen(function* () {
            const authorizations = yield* Effect.forEach(group, (command) =>
              signer
                .authorize(
                  { deposit_request_id: command.deposit_request_id, ...command.payload },
                  indexes.get(command.deposit_request_id)
                )
                .pipe(
                  spanCausedBy("Treasury.sign", command.trace_parent, {
                    "transfer.command_id": command.payload.command_id,
                    "transfer.kind": command.payload.type
                  })
                )
            )
            const gas = yield* Effect.fork(signer.estimateGas(authorizations))
            return { group, authorizations, gas }
          })

        /**
         * Stage 2: consecutive nonces, signed, recorded in one transaction, then broadcast (not awaited). One whose
         * gas cannot be estimated now (it would revert: the deposit address lacks the funds) waits for the next pass
         * without holding the others back; nonces are given only after the estimate, so a skipped one leaves no gap.
         */
        const recordGroup = (prepared: Effect.Effect.Success<ReturnType<typeof authorizeGroup>>) =>
          Effect.gen(function* () {
            const gas = yield* Fiber.join(prepared.gas)
            const signed: Array<{ command: Command; tx: SignedTransaction }> = []
            for (const [i, estimate] of gas.entries()) {
              const command = prepared.group[i]!
              if (Either.isLeft(estimate)) {
                // Refused because the token already executed this authorization (a restore from an older backup):
                // the transfer is recognised from the chain, never sent again.
                const from = senders.get(command.deposit_request_id)
                if (from !== undefined && (yield* usedAuthorizations.recognise(command, from, "insert"))) {
                  simulationFailures.delete(command.payload.command_id)
                  continue
                }
                const tries = (simulationFailures.get(command.payload.command_id) ?? 0) + 1
                simulationFailures.set(command.payload.command_id, tries)
                yield* Effect.logWarning(
                  `treasury: transfer ${command.payload.command_id} cannot be estimated now (${tries} of ${SIMULATION_TRIES}): ${estimate.left.message}`
                )
                if (tries >= SIMULATION_TRIES) {
                  simulationFailures.delete(command.payload.command_id)
                  yield* gate.hold(
                    command,
                    "transfer_reverted",
                    command.payload.to,
                    revertReason(estimate.left)
                  )
                }
                continue
              }
              simulationFailures.delete(command.payload.command_id)
              const authorized: AuthorizedTransfer = { ...prepared.authorizations[i]!, gas: estimate.right }
              signed.push({ command, tx: yield* signer.signTransaction(authorized, nonce++, fees) })
            }
            if (signed.length === 0) return
            const at = yield* now
            const rows = signed.map(({ command, tx }) => ({
              command_id: command.payload.command_id,
              deposit_request_id: command.deposit_request_id,
              kind: command.payload.type,
              to_address: tx.to,
              amount_base_units: command.payload.amount_base_units,
              tx_nonce: tx.txNonce,
              tx_hash: tx.hash,
              raw_tx: tx.raw,
              state: "signed",
              created_at: at,
              signed_at: at,
              trace_parent: command.trace_parent
            }))
            yield* sql.withTransaction(
              Effect.gen(function* () {
                yield* sql`insert into transfers ${sql.insert(rows)}`
                yield* consumed(
                  signed.map((g) => g.command.id),
                  at
                )
              })
            )
            recorded += signed.length
            // Recorded: from here a crash re-sends these bytes, never new ones.
            broadcasts.push(
              yield* Effect.fork(
                broadcaster.send(
                  signed.map(({ command, tx }) => ({
                    deposit_request_id: command.deposit_request_id,
                    kind: command.payload.type,
                    tx_hash: tx.hash,
                    raw_tx: tx.raw
                  }))
                )
              )
            )
          })

        // Two stages in step: while one group's gas is being estimated the previous one is signed and recorded, and
        // the one before it is on its way to the node.
        let previous: Effect.Effect.Success<ReturnType<typeof authorizeGroup>> | undefined
        for (let from = 0; from < fresh.length; from += RECORD_GROUP) {
          const next = yield* authorizeGroup(fresh.slice(from, from + RECORD_GROUP))
          if (previous !== undefined) yield* recordGroup(previous)
          previous = next
        }
        if (previous !== undefined) yield* recordGroup(previous)
        yield* Fiber.joinAll(broadcasts)
        return recorded
      })

    /**
     * After an operator resumed a request: a transfer that reverted is signed again (a new transaction for the same
     * authorization, which the revert left unused) and followed like a new one; one still pending or already final
     * needs nothing new, the follower carries on with it.
     */
    const retry = (command: {
      readonly id: string
      readonly payload: { readonly command_id: string }
      readonly trace_parent: string | null
    }) =>
      Effect.gen(function* () {
        const rows = yield* sql<{
          deposit_request_id: string
          kind: "settle" | "return"
          to_address: string
          amount_base_units: string
          state: string
        }>`select deposit_request_id, kind, to_address, amount_base_units, state from transfers
           where command_id = ${command.payload.command_id}`
        const transfer = rows[0]
        const at = yield* now
        if (transfer === undefined) {
          // Held before it was ever signed: back to the outbox, checked again like a new command.
          yield* sql.withTransaction(
            Effect.gen(function* () {
              yield* gate.release(command.payload.command_id)
              yield* consumed([command.id], at)
            })
          )
          return
        }
        if (transfer.state !== "reverted") {
          yield* consumed([command.id], at)
          return
        }
        // A reverted transfer is signed again only if it can now succeed: paused, it waits; blocked, it is held.
        const from = (yield* depositAddresses([transfer.deposit_request_id])).get(transfer.deposit_request_id)
        const to = getAddress(transfer.to_address)
        const tokenState = yield* gate.read(from === undefined ? [to] : [from, to])
        if (tokenState.paused) return false
        const block =
          from === undefined ? undefined : gate.blockOf(transfer.kind, from, to, tokenState.blacklisted)
        if (block !== undefined) {
          const payload = {
            type: transfer.kind,
            command_id: command.payload.command_id,
            amount_base_units: BigInt(transfer.amount_base_units).toString(),
            to
          }
          const held = {
            ...command,
            deposit_request_id: transfer.deposit_request_id,
            topic: "command.retry",
            payload
          }
          yield* gate.hold(held, block.code, block.party, "blacklisted by the token")
          return
        }
        yield* sql`delete from held_transfers where command_id = ${command.payload.command_id}`
        const indexes = yield* signer.depositIndexes([transfer.deposit_request_id])
        const authorization = yield* signer.authorize(
          {
            deposit_request_id: transfer.deposit_request_id,
            command_id: command.payload.command_id,
            to: transfer.to_address,
            amount_base_units: BigInt(transfer.amount_base_units).toString()
          },
          indexes.get(transfer.deposit_request_id)
        )
        const gas = (yield* signer.estimateGas([authorization]))[0]!
        if (Either.isLeft(gas)) {
          const retried: Command = {
            ...command,
            deposit_request_id: transfer.deposit_request_id,
            topic: "command.retry",
            payload: {
              type: transfer.kind,
              command_id: command.payload.command_id,
              amount_base_units: BigInt(transfer.amount_base_units).toString(),
              to
            }
          }
          if (from !== undefined && (yield* usedAuthorizations.recognise(retried, from, "update"))) return
          return yield* gas.left
        }
        const signed = yield* signer.signTransaction(
          { ...authorization, gas: gas.right },
          yield* signer.nextNonce(),
          yield* signer.passFees()
        )
        yield* sql.withTransaction(
          Effect.gen(function* () {
            yield* sql`
              update transfers set tx_nonce = ${signed.txNonce}, tx_hash = ${signed.hash}, raw_tx = ${signed.raw},
                state = 'signed', block_number = null, signed_at = ${at}, replaced_tx_hashes = '{}'
              where command_id = ${command.payload.command_id} and state = 'reverted'`
            yield* consumed([command.id], at)
          })
        )
        yield* broadcaster.send([
          {
            deposit_request_id: transfer.deposit_request_id,
            kind: transfer.kind,
            tx_hash: signed.hash,
            raw_tx: signed.raw
          }
        ])
      })

    /** One pass: every pending command, oldest first; how many were recorded or handled. */
    const consume = Effect.fn("Treasury.consume")(function* () {
      const commands = yield* sql<Command>`
        select id, topic, deposit_request_id, payload, trace_parent from outbox
        where published_at is null and topic in ('command.settle', 'command.return') order by id
        limit ${COMMANDS_PER_PASS}`
      const signed = commands.length === 0 ? 0 : yield* signAll(commands)
      const retries = yield* sql<{
        id: string
        payload: { command_id: string }
        trace_parent: string | null
      }>`
        select id, payload, trace_parent from outbox
        where published_at is null and topic = 'command.retry' order by id limit 100`
      let handled = 0
      // A retry waiting for the token to be unpaused is not counted: an idle pass sleeps before the next.
      for (const command of retries) if ((yield* retry(command)) !== false) handled++
      return signed + handled
    })
    return consume
  })

/** The revert reason of a refused simulation, as the node words it (`FiatTokenV2: …`), else its first line. */
export const revertReason = (error: { readonly message: string; readonly cause?: unknown }) => {
  const text = [
    error.message,
    String((error.cause as { message?: unknown } | undefined)?.message ?? "")
  ].join("\n")
  const reason = /reverted with reason string '([^']+)'|execution reverted: ([^\n"]+)|reason: ([^\n]+)/.exec(
    text
  )
  return (reason?.[1] ?? reason?.[2] ?? reason?.[3] ?? error.message.split("\n")[0] ?? "reverted").trim()
}
