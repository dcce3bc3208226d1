import { Effect } from "effect"
import { ActorHost } from "../actors/ActorHost"
import { ChainEndpoints } from "../chain/ChainEndpoints"
import { KeyVault } from "../chain/KeyVault"
import { Ids } from "../platform/Ids"
import { orDieOnSql } from "../platform/SqlFailure"
import { makeMailboxProof } from "./MailboxProof"
import { makeMerchantSessionProof } from "./MerchantSessionProof"
import { PayerView } from "./PayerView"
import { VerificationAttempts } from "./VerificationAttempts"
import { WalletAttestation } from "./WalletAttestation"
import { makeWalletProof, type WalletStatementBody } from "./WalletProof"

export { MAILBOX_CODE_TTL_MS, maskEmail } from "./MailboxProof"
export { MAX_MAILBOX_SENDS, MAX_REFUSED_ATTEMPTS } from "./VerificationAttempts"

/**
 * The payer's side of a request: what a payer screen may see (PayerView), and the proofs that release the
 * one-time address (MerchantSessionProof, MailboxProof, WalletProof), each attempt counted by VerificationAttempts.
 * Database failures are defects from here on; domain errors reach the edge as they are.
 */
export class PayerFlow extends Effect.Service<PayerFlow>()("deposits/PayerFlow", {
  effect: Effect.gen(function* () {
    const payers = yield* PayerView
    const exchangeSession = yield* makeMerchantSessionProof
    const mailbox = yield* makeMailboxProof
    const attestWallet = yield* makeWalletProof
    return {
      startMailbox: Effect.fn("PayerFlow.startMailbox")((uuid: string) => mailbox.start(uuid), orDieOnSql),
      verifyMailbox: Effect.fn("PayerFlow.verifyMailbox")(
        (uuid: string, code: string) => mailbox.verify(uuid, code),
        orDieOnSql
      ),
      read: Effect.fn("PayerFlow.read")((uuid: string) => payers.read(uuid), orDieOnSql),
      exchangeSession: Effect.fn("PayerFlow.exchangeSession")(
        (uuid: string, secret: string) => exchangeSession(uuid, secret),
        orDieOnSql
      ),
      attestWallet: Effect.fn("PayerFlow.attestWallet")(
        (uuid: string, body: WalletStatementBody) => attestWallet(uuid, body),
        orDieOnSql
      )
    } as const
  }),
  dependencies: [
    PayerView.Default,
    VerificationAttempts.Default,
    WalletAttestation.Default,
    ActorHost.Default,
    ChainEndpoints.Default,
    KeyVault.Default,
    Ids.Default
  ]
}) {}
