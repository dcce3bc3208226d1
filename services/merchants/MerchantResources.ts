import { Effect, Layer } from "effect"
import { Ids } from "../platform/Ids"
import { makeResourceStore } from "./ResourceStore"

/** Customers (`cus_`): deleted ones disappear from reads. */
export class Customers extends Effect.Service<Customers>()("deposits/Customers", {
  effect: makeResourceStore({
    service: "Customers",
    table: "customers",
    prefix: "cus",
    resource: "customer",
    endColumn: "deleted_at",
    hideEnded: true
  }),
  dependencies: [Ids.Default]
}) {}

/** Issuer identities (`iss_`): the name a payer sees. Deleted ones disappear from reads. */
export class Issuers extends Effect.Service<Issuers>()("deposits/Issuers", {
  effect: makeResourceStore({
    service: "Issuers",
    table: "issuers",
    prefix: "iss",
    resource: "issuer",
    endColumn: "deleted_at",
    hideEnded: true
  }),
  dependencies: [Ids.Default]
}) {}

/** Payout addresses (`pa_`): disabled ones stay readable but take no new deposit request. */
export class PayoutAddresses extends Effect.Service<PayoutAddresses>()("deposits/PayoutAddresses", {
  effect: makeResourceStore({
    service: "PayoutAddresses",
    table: "payout_addresses",
    prefix: "pa",
    resource: "payout_address",
    endColumn: "disabled_at",
    hideEnded: false
  }),
  dependencies: [Ids.Default]
}) {}

/** The three merchant resource stores. */
export const MerchantResourcesLive = Layer.mergeAll(
  Customers.Default,
  Issuers.Default,
  PayoutAddresses.Default
)
