import { PgClient } from "@effect/sql-pg"
import { randomInt } from "node:crypto"
import { Clock, Context, Effect, Layer, Option } from "effect"
import { getAddress, type Hex, keccak256 } from "viem"
import { InvalidRequest, InvalidState, NotFound, RateLimited, ServiceUnavailable } from "../domain/Errors"
import { formatAmount } from "../domain/Amount"
import type { Recovery } from "../../machines/DepositRequest"
import { formatTimestamp } from "../domain/Timestamp"
import { toId } from "../domain/PrefixedId"
import { chainSettings } from "../chain/ChainSettings"
import { ChainEndpoints } from "../chain/ChainEndpoints"
import { Attachments } from "../merchants/Attachments"
import { chainIdOf } from "../domain/Environment"
import { ActorHost, type DepositRequestMissing, type SnapshotVersionError } from "../actors/ActorHost"
import { lifecycleFactsOf } from "../depositRequests/DepositRequestWire"
import type { DepositRequestRow } from "../depositRequests/DepositRequestWire"
import { Ids } from "../platform/Ids"
import { KeyVault } from "../chain/KeyVault"
import { Mailer } from "../platform/Mailer"
import { digestOf, sameDigest } from "../platform/Secrets"
import { orDieOnSql } from "../platform/SqlFailure"
import {
  attestationDomain,
  attestationTypes,
  refusalOf,
  type Statement,
  signatureCheckFor,
  typedData
} from "./WalletAttestation"

/** Refused proofs a request tolerates before answering 429. */
export const MAX_REFUSED_ATTEMPTS = 5
/** Codes a request may have mailed, and how long one lives. */
export const MAX_MAILBOX_SENDS = 5
export const MAILBOX_CODE_TTL_MS = 10 * 60 * 1000

/** `a***@example.com`: enough for the payer to recognise the mailbox, not enough to learn it. */
export const maskEmail = (email: string) => {
  const [local = "", domain = ""] = email.split("@")
  return `${local.slice(0, 1)}***@${domain}`
}

const codeDigest = (uuid: string, code: string) => digestOf(`${uuid}:${code}`)

type PayerRow = DepositRequestRow & {
  issuer_name: string | null
  merchant_session_secret_digest: Uint8Array | null
}

/**
 * The payer's side of a request: what a payer screen may see, and the proofs that release the one-time address.
 * No credential: the unguessable request id is the capability, and nothing private to the merchant is shown.
 */
const make = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const host = yield* ActorHost
  const ids = yield* Ids
  const vault = yield* KeyVault
  const mailer = yield* Mailer
  const config = yield* chainSettings
  const attachments = yield* Attachments
  const chainId = chainIdOf(config.serviceEnv)
  const signatureCheck = signatureCheckFor(yield* ChainEndpoints)
  const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

  // A missing row or an unrestorable snapshot here is a defect: the row was read a moment ago.
  const apply = <E extends { readonly _tag: string } = never, R = never>(
    ...args: Parameters<typeof host.apply<E, R>>
  ) =>
    host
      .apply<E, R>(...args)
      .pipe(
        Effect.catchIf(
          (e): e is DepositRequestMissing | SnapshotVersionError =>
            e._tag === "DepositRequestMissing" || e._tag === "SnapshotVersionError",
          Effect.die
        )
      )

  const load = (uuid: string) =>
    sql<PayerRow>`
      select d.*, i.display_name as issuer_name from deposit_requests d
      left join issuers i on i.id = d.issuer_id
      where d.id = ${uuid}`.pipe(Effect.map((rows) => Option.fromNullable(rows[0])))

  const require = (uuid: string) =>
    Effect.flatMap(
      load(uuid),
      Option.match({ onNone: () => Effect.fail(NotFound.of("deposit_request")), onSome: Effect.succeed })
    )

  const proofOwed = (row: PayerRow) => {
    const facts = lifecycleFactsOf({
      snapshot: row.snapshot,
      status: row.status,
      context: (row.snapshot as { context: never }).context,
      emitted: []
    } as never)
    const owed =
      row.status === "awaiting_payer" &&
      row.payer_policy_mode !== "none" &&
      facts.verificationCompletedAt === null
    return { facts, owed }
  }

  /** The payer-safe view: enough to pay and follow, never metadata, reference, expected email or payer reference. */
  const view = (row: PayerRow) => {
    const { facts, owed } = proofOwed(row)
    const id = toId("dr", row.id) as string
    const address = facts.address
    const token = Option.getOrNull(config.tokenAddress)
    const walletOwed = row.status === "awaiting_payer" && !owed
    return {
      id,
      status: facts.status,
      amount: formatAmount(BigInt(row.amount_base_units)),
      amount_base_units: BigInt(row.amount_base_units).toString(),
      received: formatAmount(BigInt(facts.receivedBaseUnits)),
      received_base_units: BigInt(facts.receivedBaseUnits).toString(),
      heading: row.heading,
      issuer_display_name: row.issuer_name,
      payer_policy_mode: row.payer_policy_mode,
      proof_required: owed ? row.payer_policy_mode : null,
      wallet_required: walletOwed,
      chain_id: chainId,
      token_address: token === null ? null : getAddress(token),
      address,
      payment_link:
        address !== null && token !== null
          ? `ethereum:${getAddress(token)}@${chainId}/transfer?address=${address}&uint256=${BigInt(row.amount_base_units) - BigInt(facts.receivedBaseUnits)}`
          : null,
      attestation: walletOwed
        ? {
            domain: attestationDomain(chainId),
            types: attestationTypes,
            primary_type: "WalletAttestation",
            message: { depositRequest: id, chainId }
          }
        : null,
      expires_at: formatTimestamp(row.expires_at),
      version: row.version,
      // What came back to the payer: theirs to see (amount, why, the transaction), never merchant-private.
      returns: (
        (row.snapshot as { context?: { recoveries?: ReadonlyArray<Recovery> } }).context?.recoveries ?? []
      ).map((r) => ({
        amount: formatAmount(BigInt(r.amount_base_units)),
        amount_base_units: r.amount_base_units,
        reason: r.reason,
        transaction_hash: r.transaction_hash,
        returned_at: formatTimestamp(new Date(r.recovered_at))
      }))
    }
  }

  /** The payer's view, with the request's attachments as short-lived download links (paths of this service). */
  const read = (uuid: string) =>
    Effect.zipWith(require(uuid), attachments.forPayer(uuid), (row, attached) => ({
      ...view(row),
      attachments: attached.map(({ row: a, path, expiresAt }) => ({
        id: toId("att", a.id) as string,
        file_name: a.file_name,
        size_bytes: Number(a.size_bytes),
        download_url: path,
        expires_at: formatTimestamp(expiresAt)
      }))
    }))

  /**
   * Takes one of the request's attempts before the check runs: under the request's row lock, counts and records in
   * one transaction, so concurrent guesses cannot pass the limit between a count and a record. A proof's slot is
   * recorded as refused ("being checked") and turned into its outcome after the check; a send's is final at once.
   */
  const takeAttempt = (
    uuid: string,
    kind: "merchant_session" | "wallet" | "mailbox_code" | "mailbox_send",
    wallet: string | null = null
  ) =>
    sql.withTransaction(
      Effect.gen(function* () {
        yield* sql`select 1 from deposit_requests where id = ${uuid} for update`
        const sending = kind === "mailbox_send"
        const rows = sending
          ? yield* sql<{ n: string }>`
              select count(*)::text as n from verification_attempts
              where deposit_request_id = ${uuid} and kind = 'mailbox_send'`
          : yield* sql<{ n: string }>`
              select count(*)::text as n from verification_attempts
              where deposit_request_id = ${uuid} and outcome = 'refused'`
        if (Number(rows[0]?.n ?? 0) >= (sending ? MAX_MAILBOX_SENDS : MAX_REFUSED_ATTEMPTS)) {
          return yield* new RateLimited({
            message: sending
              ? "Too many codes were sent for this deposit request."
              : "Too many refused proofs for this deposit request."
          })
        }
        const id = ids.next()
        yield* sql`
          insert into verification_attempts (id, deposit_request_id, kind, outcome, reason, proof_digest, wallet,
            attempted_at)
          values (${id}, ${uuid}, ${kind}, ${sending ? "accepted" : "refused"}, ${sending ? null : "being checked"},
                  null, ${wallet}, ${yield* now})`
        return id
      })
    )

  const refuseAttempt = (attempt: string, reason: string) =>
    sql`update verification_attempts set reason = ${reason} where id = ${attempt}`.pipe(Effect.asVoid)
  const acceptAttempt = (attempt: string, proof: Buffer | null) =>
    sql`
      update verification_attempts set outcome = 'accepted', reason = null, proof_digest = ${proof}
      where id = ${attempt}`.pipe(Effect.asVoid)
  /** An attempt that ended through no fault of the payer (a node that did not answer, a lost race) counts for nothing. */
  const dropAttempt = (attempt: string) =>
    sql`delete from verification_attempts where id = ${attempt}`.pipe(Effect.asVoid)

  /** The merchant-session proof: the secret handed over by the merchant's page, compared by digest. */
  const exchangeSession = (uuid: string, secret: string) =>
    Effect.gen(function* () {
      const row = yield* require(uuid)
      if (row.payer_policy_mode !== "merchant_session" || !proofOwed(row).owed) {
        return yield* new InvalidState({
          message: "This deposit request does not wait for a merchant-session proof."
        })
      }
      const attempt = yield* takeAttempt(uuid, "merchant_session")
      const stored = row.merchant_session_secret_digest
      if (stored === null || !sameDigest(Buffer.from(stored), digestOf(secret))) {
        yield* refuseAttempt(attempt, "wrong secret")
        return yield* new InvalidRequest({
          message: "The secret does not match this deposit request.",
          param: "secret"
        })
      }
      const applied = yield* apply(
        uuid,
        "verified:merchant_session",
        { type: "payer.verified", at: (yield* now).toISOString(), method: "merchant_session" },
        () => acceptAttempt(attempt, null)
      ).pipe(Effect.tapError(() => dropAttempt(attempt)))
      if (applied._tag === "Duplicate") yield* dropAttempt(attempt)
      return yield* read(uuid)
    })

  /**
   * The wallet statement. When it holds and the policy is satisfied, the request gets its one-time address: a
   * fresh index from the sequence, written with the wallet, the address and the lifecycle events in the actor
   * host's one transaction, so a second attestation racing this one finds the address taken and writes nothing.
   */
  const attestWallet = (
    uuid: string,
    body: { wallet: string; chain_id: number; expires_at: number; signature: string }
  ) =>
    Effect.gen(function* () {
      const row = yield* require(uuid)
      if (row.status !== "awaiting_payer" || proofOwed(row).owed) {
        return yield* new InvalidState({
          message: proofOwed(row).owed
            ? "Prove the payer policy first."
            : "This deposit request already has a wallet."
        })
      }
      const wallet = getAddress(body.wallet.toLowerCase())
      const attempt = yield* takeAttempt(uuid, "wallet", wallet)
      const at = yield* now
      const statement: Statement = {
        depositRequest: toId("dr", uuid),
        wallet,
        chainId: body.chain_id,
        expiresAt: body.expires_at
      }
      const refusal = yield* Effect.tryPromise({
        try: () =>
          refusalOf(
            statement,
            body.signature as Hex,
            { depositRequest: toId("dr", uuid), chainId, nowSeconds: Math.floor(at.getTime() / 1000) },
            signatureCheck
          ),
        // The node did not answer: not the payer's fault, so no refused attempt is recorded.
        catch: () =>
          new ServiceUnavailable({
            message: "The wallet's signature could not be checked on chain; try again."
          })
      }).pipe(Effect.tapError(() => dropAttempt(attempt)))
      const proof = Buffer.from(keccak256(body.signature as Hex).slice(2), "hex")
      if (refusal !== undefined) {
        yield* refuseAttempt(attempt, refusal.message)
        return yield* new InvalidRequest(refusal)
      }
      const used =
        yield* sql`select 1 from verification_attempts where proof_digest = ${proof} and outcome = 'accepted'`
      if (used.length > 0) {
        yield* refuseAttempt(attempt, "replayed statement")
        return yield* new InvalidRequest({
          message: "This signed statement was already used.",
          param: "signature"
        })
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
            yield* acceptAttempt(attempt, proof)
          })
      ).pipe(Effect.tapError(() => dropAttempt(attempt)))
      if (applied._tag === "Duplicate") {
        yield* dropAttempt(attempt)
        return yield* new InvalidRequest({
          message: "This signed statement was already used.",
          param: "signature"
        })
      }
      return yield* read(uuid)
    })

  /** Mails a fresh six-digit code to the expected mailbox (earlier codes stay valid until they expire). */
  const startMailbox = (uuid: string) =>
    Effect.gen(function* () {
      const row = yield* require(uuid)
      if (row.payer_policy_mode !== "mailbox" || !proofOwed(row).owed || row.expected_email === null) {
        return yield* new InvalidState({ message: "This deposit request does not wait for a mailbox proof." })
      }
      yield* takeAttempt(uuid, "mailbox_send")
      const at = yield* now
      const code = randomInt(0, 1_000_000).toString().padStart(6, "0")
      const expiresAt = new Date(at.getTime() + MAILBOX_CODE_TTL_MS)
      yield* sql`
        insert into mailbox_codes (id, deposit_request_id, code_digest, expires_at)
        values (${ids.next()}, ${uuid}, ${codeDigest(uuid, code)}, ${expiresAt})`
      yield* mailer
        .send({
          to: row.expected_email,
          subject: `Your code for ${row.issuer_name ?? "your payment"}: ${code}`,
          text: `Your one-time code is ${code}. It expires in 10 minutes. If you did not ask for it, ignore this message.`
        })
        .pipe(
          // Counted against the sends all the same: a failing relay must not be hammered through this route.
          Effect.mapError(
            () => new ServiceUnavailable({ message: "The code could not be mailed; try again later." })
          )
        )
      return { sent_to: maskEmail(row.expected_email), expires_at: formatTimestamp(expiresAt) }
    })

  /** The mailbox proof: a live, unused code of this request, compared by digest; each code works once. */
  const verifyMailbox = (uuid: string, code: string) =>
    Effect.gen(function* () {
      const row = yield* require(uuid)
      if (row.payer_policy_mode !== "mailbox" || !proofOwed(row).owed) {
        return yield* new InvalidState({ message: "This deposit request does not wait for a mailbox proof." })
      }
      const attempt = yield* takeAttempt(uuid, "mailbox_code")
      const at = yield* now
      const used = yield* sql<{ id: string }>`
        update mailbox_codes set used_at = ${at}
        where deposit_request_id = ${uuid} and code_digest = ${codeDigest(uuid, code)} and used_at is null and expires_at > ${at}
        returning id`
      if (used.length === 0) {
        yield* refuseAttempt(attempt, "wrong, used or expired code")
        return yield* new InvalidRequest({
          message: "The code is wrong, already used or expired.",
          param: "code"
        })
      }
      const applied = yield* apply(
        uuid,
        "verified:mailbox",
        { type: "payer.verified", at: at.toISOString(), method: "mailbox" },
        () => acceptAttempt(attempt, null)
      ).pipe(Effect.tapError(() => dropAttempt(attempt)))
      if (applied._tag === "Duplicate") yield* dropAttempt(attempt)
      return yield* read(uuid)
    })

  return {
    startMailbox: (u: string) => orDieOnSql(startMailbox(u)),
    verifyMailbox: (u: string, c: string) => orDieOnSql(verifyMailbox(u, c)),
    read: (u: string) => orDieOnSql(read(u)),
    exchangeSession: (u: string, s: string) => orDieOnSql(exchangeSession(u, s)),
    attestWallet: (u: string, b: Parameters<typeof attestWallet>[1]) => orDieOnSql(attestWallet(u, b)),
    typedData
  } as const
})

export class PayerFlow extends Context.Tag("deposits/PayerFlow")<
  PayerFlow,
  Effect.Effect.Success<typeof make>
>() {
  static readonly layer = Layer.effect(PayerFlow, make)
}
