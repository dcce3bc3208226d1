import { PgClient } from "@effect/sql-pg"
import { Clock, Config, Duration, Effect, Layer, Option, Redacted } from "effect"
import {
  type Address,
  createWalletClient,
  encodeFunctionData,
  getAddress,
  type Hex,
  http,
  keccak256,
  parseSignature,
  parseTransaction,
  publicActions,
  toHex
} from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { finalBlockNumber, type JsonRpc } from "./Finality"
import { chainIdOf } from "./domain/Environment"
import { ActorHost } from "./ActorHost"
import { KeyVault } from "./KeyVault"
import { Lease } from "./Lease"
import { chainSettings, optionalSetting, positiveInteger } from "./Settings"
import { usdcAbi } from "./Usdc"

export const TREASURY_INTERVAL = Duration.millis(500)

interface Command {
  readonly id: string
  readonly deposit_request_id: string
  readonly payload: { type: "settle" | "return"; command_id: string; amount_base_units: string; to: string }
}

/**
 * Carries out settle and return commands from the outbox. A transfer leaves the deposit address through EIP-3009
 * `transferWithAuthorization`, signed by the deposit key (the address holds no gas) and submitted by the treasury
 * account. Each transfer is signed and recorded (nonce, hash, raw transaction) before it is broadcast; the
 * recorded one is re-sent until it is final, never a new one. Finality (the node's `finalized` block) is fed back
 * to the request as `settlement.confirmed` or `return.confirmed`.
 */
export const makeTreasury = (rpcUrl: string, token: Address, treasuryKey: Hex) =>
  Effect.gen(function* () {
    const sql = yield* PgClient.PgClient
    const host = yield* ActorHost
    const vault = yield* KeyVault
    const config = yield* treasurySettings
    const chainId = chainIdOf(config.serviceEnv)
    const account = privateKeyToAccount(treasuryKey)
    const chain = {
      id: chainId,
      name: "deposits",
      nativeCurrency: { name: "ETH", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [rpcUrl] } }
    } as const
    const wallet = createWalletClient({ account, chain, transport: http(rpcUrl, { retryCount: 0 }) }).extend(
      publicActions
    )
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    /** The EIP-3009 authorization (keyed by the command id, so it can move the money once) and its transaction. */
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
        const pending = yield* Effect.promise(() =>
          wallet.getTransactionCount({ address: account.address, blockTag: "pending" })
        )
        const txNonce = Math.max(pending, (recorded[0]?.n ?? -1) + 1)
        const request = yield* Effect.promise(() =>
          wallet.prepareTransactionRequest({ to: token, data, account, chain, nonce: txNonce })
        )
        const raw = yield* Effect.promise(() => wallet.signTransaction(request))
        return { to: message.to, txNonce: request.nonce, raw, hash: keccak256(raw) }
      })

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
                raw_tx, state, created_at, signed_at)
              values (${command.payload.command_id}, ${command.deposit_request_id}, ${command.payload.type},
                ${signed.to}, ${command.payload.amount_base_units}, ${signed.txNonce}, ${signed.hash}, ${signed.raw}, 'signed', ${at}, ${at})
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

    /** Broadcast (again) every recorded transfer that is not final, and feed final ones back to their requests. */
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
        const latest = yield* Effect.promise(() => wallet.getBlock())
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
        yield* Effect.promise(() =>
          wallet.sendRawTransaction({ serializedTransaction: raw }).catch(() => undefined)
        )
      })

    /** Broadcast (again) every recorded transfer that is not final, and feed final ones back to their requests. */
    const follow = Effect.gen(function* () {
      const open = yield* sql<{
        command_id: string
        deposit_request_id: string
        kind: "settle" | "return"
        tx_hash: Hex
        raw_tx: Hex
        replaced_tx_hashes: ReadonlyArray<Hex>
        signed_at: Date
      }>`
        select command_id, deposit_request_id, kind, tx_hash, raw_tx, replaced_tx_hashes, signed_at
        from transfers where state = 'signed' order by created_at`
      if (open.length === 0) return
      const finalized = yield* Effect.promise(() =>
        finalBlockNumber(wallet.request as JsonRpc, config.chainFinality)
      )
      for (const t of open) {
        // The current transaction, or one it replaced: whichever was mined is the transfer.
        let receipt: Awaited<ReturnType<typeof wallet.getTransactionReceipt>> | undefined
        for (const hash of [t.tx_hash, ...t.replaced_tx_hashes]) {
          receipt = yield* Effect.promise(() => wallet.getTransactionReceipt({ hash }).catch(() => undefined))
          if (receipt !== undefined) break
        }
        if (receipt === undefined) {
          const waited = (yield* Clock.currentTimeMillis) - t.signed_at.getTime()
          if (waited > config.transferReplaceAfterMs) {
            yield* replace(t)
            continue
          }
          // Same bytes, same hash: a re-send after a crash or a dropped broadcast can never pay twice.
          const refused = yield* Effect.promise(() =>
            wallet.sendRawTransaction({ serializedTransaction: t.raw_tx }).then(
              () => undefined,
              (error: unknown) => (error instanceof Error ? error.message : String(error))
            )
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
          continue
        }
        if (receipt.transactionHash !== t.tx_hash) {
          yield* sql`update transfers set tx_hash = ${receipt.transactionHash} where command_id = ${t.command_id}`
        }
        if (receipt.blockNumber > finalized) continue
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
          continue
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
      }
    })

    const step = Effect.gen(function* () {
      const commands = yield* sql<Command>`
        select id, deposit_request_id, payload from outbox
        where published_at is null and topic in ('command.settle', 'command.return') order by id limit 20`
      for (const command of commands) yield* sign(command)
      const retries = yield* sql<{ id: string; payload: { command_id: string } }>`
        select id, payload from outbox where published_at is null and topic = 'command.retry' order by id limit 20`
      for (const command of retries) yield* retry(command)
      yield* follow
    })

    return {
      run: step.pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("treasury step failed", cause)),
        Effect.zipRight(Effect.sleep(TREASURY_INTERVAL)),
        Effect.forever
      )
    } as const
  })

/**
 * The chain settings, `TREASURY_PRIVATE_KEY` (the account that pays gas for settlements and returns; the sandbox's
 * start-up supplies the local chain's dev account 1) and `TRANSFER_REPLACE_AFTER_MS` (a broadcast transfer with no
 * receipt after this long is replaced at the same nonce with higher fees).
 */
export const treasurySettings = Config.all({
  chain: chainSettings,
  treasuryPrivateKey: optionalSetting("TREASURY_PRIVATE_KEY", "must be a 0x-prefixed 32-byte hex key", (k) =>
    /^0x[0-9a-fA-F]{64}$/.test(k)
  ).pipe(Config.map(Option.map(Redacted.make))),
  transferReplaceAfterMs: positiveInteger("TRANSFER_REPLACE_AFTER_MS", 60_000)
}).pipe(Config.map(({ chain, ...rest }) => ({ ...chain, ...rest })))

/** Runs when a chain, a token and the treasury's key are configured. */
export const TreasuryLive = Layer.scopedDiscard(
  Effect.gen(function* () {
    const config = yield* treasurySettings
    if (Option.isNone(config.chainRpcUrl) || Option.isNone(config.tokenAddress)) return
    if (Option.isNone(config.treasuryPrivateKey)) {
      if (config.serviceEnv === "production")
        return yield* Effect.dieMessage("TREASURY_PRIVATE_KEY must be set in production")
      yield* Effect.logWarning("treasury off: set TREASURY_PRIVATE_KEY to settle and return payments")
      return
    }
    const key = Redacted.value(config.treasuryPrivateKey.value) as Hex
    const treasury = yield* makeTreasury(config.chainRpcUrl.value, getAddress(config.tokenAddress.value), key)
    const lease = yield* Lease
    yield* Effect.forkScoped(lease.whileHolding("treasury", treasury.run))
  })
)
