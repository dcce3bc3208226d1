import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Address } from "../../../services/domain/Address"
import { PayerPolicyMode } from "../../../services/domain/Lifecycle"
import { Schema } from "effect"
import { LongPollParams } from "../DepositRequests/Api"
import {
  InvalidRequest,
  InvalidState,
  NotFound,
  PayloadTooLarge,
  RateLimited,
  ServiceUnavailable
} from "../Errors"
import { ChainId, IdParam, StrictStruct, withExample } from "../Schemas"
import { Text } from "../../../services/domain/Text"
import { recoveryReasons } from "../../../services/domain/Lifecycle"

export const PayerDepositRequest = Schema.Struct({
  id: Schema.String,
  status: Schema.String,
  amount: Schema.String,
  amount_base_units: Schema.String,
  received: Schema.String,
  received_base_units: Schema.String,
  heading: Schema.String,
  issuer_display_name: Schema.NullOr(Schema.String),
  issuer_support_email: Schema.NullOr(Schema.String).annotations({
    description: "The issuer's support email, when it has one."
  }),
  issuer_support_url: Schema.NullOr(Schema.String).annotations({
    description: "The issuer's support page (https), when it has one."
  }),
  return_url: Schema.NullOr(Schema.String).annotations({
    description:
      "The merchant's link back to its shop, when it gave one: the checkout offers it on the receipt, when the request closes, and while waiting."
  }),
  payer_policy_mode: PayerPolicyMode,
  proof_required: Schema.NullOr(PayerPolicyMode).annotations({
    description: "The proof still owed before the wallet, or null."
  }),
  wallet_required: Schema.Boolean.annotations({ description: "True while the wallet statement is owed." }),
  chain_id: ChainId,
  token_address: Schema.NullOr(Schema.String),
  address: Schema.NullOr(Schema.String).annotations({
    description: "The one-time deposit address, once ready."
  }),
  payment_link: Schema.NullOr(Schema.String).annotations({
    description: "EIP-681 link (for QR codes and wallets) for what is still owed, once ready."
  }),
  attestation: Schema.NullOr(
    Schema.Struct({
      domain: Schema.Struct({ name: Schema.String, version: Schema.String, chainId: Schema.Number }),
      types: Schema.Record({
        key: Schema.String,
        value: Schema.Array(Schema.Struct({ name: Schema.String, type: Schema.String }))
      }),
      primary_type: Schema.String,
      message: Schema.Struct({ depositRequest: Schema.String, chainId: Schema.Number })
    })
  ).annotations({
    description:
      "While the wallet is owed: the EIP-712 domain, types and the fixed part of the `WalletAttestation { string depositRequest; address wallet; uint256 chainId; uint256 expiresAt }` statement; the payer adds `wallet` and `expiresAt` (Unix seconds, at most 24 hours ahead) and signs it."
  }),
  expires_at: Schema.String,
  version: Schema.String,
  receipt: Schema.NullOr(
    Schema.Struct({
      amount: Schema.String,
      amount_base_units: Schema.String,
      paid_at: Schema.String,
      transaction_hashes: Schema.Array(Schema.String)
    })
  ).annotations({
    description:
      "Once settled: the amount paid, when it settled, and every transaction that paid it (full hashes); null before."
  }),
  attachments: Schema.Array(
    Schema.Struct({
      id: Schema.String,
      file_name: Schema.String,
      size_bytes: Schema.Number,
      download_url: Schema.String.annotations({
        description:
          "Downloads the PDF (`Content-Disposition: attachment`) until `expires_at`; read the request again for a fresh one."
      }),
      expires_at: Schema.String
    })
  ).annotations({
    description: "The documents the merchant attached (an invoice, say), in the merchant's order."
  }),
  returns: Schema.Array(
    Schema.Struct({
      amount: Schema.String,
      amount_base_units: Schema.String,
      reason: Schema.Literal(...recoveryReasons),
      transaction_hash: Schema.String,
      returned_at: Schema.String
    })
  ).annotations({
    description:
      "Every amount returned to the payer (an excess, a balance after expiry, a late transfer), once final."
  })
}).annotations({
  identifier: "PayerDepositRequest",
  description: "What a payer screen needs; nothing private to the merchant."
})

const path = Schema.Struct({ id: IdParam("dr") })

export class PayerApi extends HttpApiGroup.make("payer")
  .add(
    HttpApiEndpoint.get("read", "/payer/deposit-requests/:id")
      .setPath(path)
      .setUrlParams(LongPollParams)
      .addSuccess(PayerDepositRequest)
      .annotate(
        OpenApi.Summary,
        "Read a deposit request as its payer (no credential; wait_for=change supported)"
      )
  )
  .add(
    HttpApiEndpoint.post("mailboxStart", "/payer/deposit-requests/:id/mailbox/start")
      .setPath(path)
      .addSuccess(Schema.Struct({ sent_to: Schema.String, expires_at: Schema.String }), { status: 202 })
      .addError(InvalidState)
      .addError(ServiceUnavailable)
      .annotate(
        OpenApi.Summary,
        "Mail a one-time code to the expected mailbox (at most 5 per request, 10 minutes each)"
      )
  )
  .add(
    HttpApiEndpoint.post("mailboxVerify", "/payer/deposit-requests/:id/mailbox/verify")
      .setPath(path)
      .setPayload(
        withExample(StrictStruct({ code: Schema.String.pipe(Schema.pattern(/^\d{6}$/)) }), { code: "482913" })
      )
      .addSuccess(PayerDepositRequest)
      .addError(InvalidState)
      .annotate(OpenApi.Summary, "Prove the mailbox with the code it received")
  )
  .add(
    HttpApiEndpoint.post("merchantSession", "/payer/deposit-requests/:id/merchant-session")
      .setPath(path)
      .setPayload(
        withExample(StrictStruct({ secret: Text.pipe(Schema.maxLength(200)) }), {
          secret: "mss_8kq3VxT1bN0rYw5Zc2Ld"
        })
      )
      .addSuccess(PayerDepositRequest)
      .addError(InvalidState)
      .annotate(
        OpenApi.Summary,
        "Prove the merchant-session policy with the secret the merchant's page handed over"
      )
  )
  .add(
    HttpApiEndpoint.post("wallet", "/payer/deposit-requests/:id/wallet")
      .setPath(path)
      .setPayload(
        withExample(
          StrictStruct({
            wallet: Address,
            chain_id: ChainId,
            expires_at: Schema.Number.pipe(Schema.int()).annotations({
              description: "Unix seconds, as signed."
            }),
            signature: Schema.String.pipe(Schema.pattern(/^0x[0-9a-fA-F]+$/))
          }),
          // A made-up statement: the shape to send. A real one is signed by the wallet (EIP-712), as the checkout does.
          {
            wallet: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
            chain_id: 10143,
            expires_at: 1798761600,
            signature: `0x${"1b".repeat(65)}`
          }
        )
      )
      .addSuccess(PayerDepositRequest)
      .addError(InvalidState)
      .addError(ServiceUnavailable)
      .annotate(
        OpenApi.Summary,
        "Attest the paying wallet (EOA or ERC-1271 contract wallet) with a signed EIP-712 statement; releases the address"
      )
  )
  .addError(NotFound)
  .addError(InvalidRequest)
  .addError(RateLimited)
  .addError(PayloadTooLarge)
  .annotate(
    OpenApi.Description,
    "Payer routes take no credential. Reads allow any origin; writes only the hosted checkout origin. Body limit 8 KiB."
  ) {}
