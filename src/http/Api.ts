import { HttpApi, OpenApi } from "@effect/platform"
import { AccountApi } from "./Account/Api"
import { MembersApi } from "./Members/Api"
import { AuditLogApi } from "./AuditLog/Api"
import { SignInApi } from "./SignIn/Api"
import { AttachmentsApi } from "./Attachments/Api"
import { DepositRequestsApi } from "./DepositRequests/Api"
import { CustomersApi, IssuersApi, PayoutAddressesApi } from "./Records/Api"
import { EventsApi } from "./Events/Api"
import { HealthApi } from "./Health/Api"
import { PayerApi } from "./Payer/Api"
import { PasskeySignInApi, PasskeysApi } from "./Passkeys/Api"
import { ReconciliationApi } from "./Reconciliation/Api"
import { ExportsApi } from "./Exports/Api"
import { MachineApi } from "./Machine/Api"
import { StepsApi } from "./Steps/Api"
import { WebhooksApi } from "./Webhooks/Api"
import { WebhookListenersApi } from "./WebhookListeners/Api"
import { publishedDocument } from "./OpenApiDocument"

/** The one contract: every route, schema and error. OpenAPI 3.1 and the docs are generated from it. */
export class Api extends HttpApi.make("deposits")
  .add(HealthApi)
  .add(AccountApi)
  .add(MembersApi)
  .add(AuditLogApi)
  .add(SignInApi)
  .add(ExportsApi)
  .add(DepositRequestsApi)
  .add(CustomersApi)
  .add(IssuersApi)
  .add(PayoutAddressesApi)
  .add(AttachmentsApi)
  .add(WebhooksApi)
  .add(WebhookListenersApi)
  .add(EventsApi)
  .add(ReconciliationApi)
  .add(MachineApi)
  .add(StepsApi)
  .add(PayerApi)
  .add(PasskeysApi)
  .add(PasskeySignInApi)
  .prefix("/v1")
  .annotateContext(
    OpenApi.annotations({
      title: "Deposit Request Service",
      version: "1.0.0",
      description:
        'Ask payers for USDC on an EVM chain, settle exactly the amount to the merchant, return any excess, and tell the merchant through signed webhooks. Errors share one body: `{ "error": { "code", "message" }, "request_id" }`.',
      license: { name: "Proprietary", url: "https://example.com/license" },
      servers: [{ url: "/", description: "The origin that serves this description" }],
      transform: publishedDocument
    })
  ) {}
