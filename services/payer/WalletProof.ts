import { PgClient } from "@effect/sql-pg"
import { Clock, Effect } from "effect"
import { getAddress, type Hex, keccak256 } from "viem"
import { ActorHost } from "../actors/ActorHost"
import { KeyVault } from "../chain/KeyVault"
import { lifecycleFactsOf } from "../depositRequests/DepositRequestWire"
import { InvalidRequest, InvalidState } from "../domain/Errors"
import { toId } from "../domain/PrefixedId"
import { payerStep } from "./PayerStep"
import { PayerView, proofOwed } from "./PayerView"
import { dropOnFailure, settleAround, VerificationAttempts } from "./VerificationAttempts"
import { type Statement, WalletAttestation } from "./WalletAttestation"

/** What the payer sends: the wallet's signed statement (EIP-712) and the fields it signed. */
export interface WalletStatementBody {
  readonly wallet: string
  readonly chain_id: number
  readonly expires_at: number
  readonly signature: string
}

/**
 * The wallet statement. When it holds and the policy is satisfied, the request gets its one-time address: a
 * fresh index from the sequence, written with the wallet, the address and the lifecycle events in the actor
 * host's one transaction, so a second attestation racing this one finds the address taken and writes nothing.
 */
export const makeWalletProof = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const vault = yield* KeyVault
  const payers = yield* PayerView
  const attempts = yield* VerificationAttempts
  const apply = payerStep(yield* ActorHost)
  const attestation = yield* WalletAttestation

  const replayed = () =>
    new InvalidRequest({ message: "This signed statement was already used.", param: "signature" })

  return (uuid: string, body: WalletStatementBody) =>
    Effect.gen(function* () {
      const row = yield* payers.require(uuid)
      if (row.status !== "awaiting_payer" || proofOwed(row).owed) {
        return yield* new InvalidState({
          message: proofOwed(row).owed
            ? "Prove the payer policy first."
            : "This deposit request already has a wallet."
        })
      }
      const wallet = getAddress(body.wallet.toLowerCase())
      const attempt = yield* attempts.take(uuid, "wallet", wallet)
      const at = new Date(yield* Clock.currentTimeMillis)
      const statement: Statement = {
        depositRequest: toId("dr", uuid),
        wallet,
        chainId: body.chain_id,
        expiresAt: body.expires_at
      }
      const refusal = yield* attestation
        .refusal(statement, body.signature as Hex, {
          depositRequest: toId("dr", uuid),
          nowSeconds: Math.floor(at.getTime() / 1000)
        })
        // The node did not answer: not the payer's fault, so no refused attempt is recorded.
        .pipe(dropOnFailure(attempts, attempt))
      const proof = Buffer.from(keccak256(body.signature as Hex).slice(2), "hex")
      if (refusal !== undefined) {
        yield* attempts.refuse(attempt, refusal.message)
        return yield* new InvalidRequest(refusal)
      }
      const used =
        yield* sql`select 1 from verification_attempts where proof_digest = ${proof} and outcome = 'accepted'`
      if (used.length > 0) {
        yield* attempts.refuse(attempt, "replayed statement")
        return yield* replayed()
      }
      // A fresh index per accepted statement: a statement that then loses a race leaves a gap, never a reuse.
      const [{ index }] = (yield* sql<{
        index: string
      }>`select nextval('deposit_index_seq')::text as index`) as [{ index: string }]
      const address = vault.depositAddress(Number(index))
      const applied = yield* apply(
        uuid,
        `wallet:${proof.toString("hex")}`,
        { type: "payer.wallet_attested", at: at.toISOString(), wallet: statement.wallet, address },
        // In the step's own transaction: the index is written with the address it derives, or nothing is.
        ({ step }) =>
          Effect.gen(function* () {
            if (lifecycleFactsOf(step).address?.toLowerCase() !== address.toLowerCase()) {
              return yield* new InvalidState({ message: "This deposit request is not waiting for a wallet." })
            }
            const claimed = yield* sql`
              update deposit_requests set deposit_index = ${Number(index)}
              where id = ${uuid} and deposit_index is null returning id`
            if (claimed.length === 0) {
              return yield* new InvalidState({ message: "This deposit request already has a wallet." })
            }
            yield* attempts.accept(attempt, proof)
          })
      ).pipe(settleAround(attempts, attempt))
      if (applied._tag === "Duplicate") return yield* replayed()
      return yield* payers.read(uuid)
    })
})
