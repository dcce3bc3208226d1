import { Context, Layer } from "effect"
import { makeRecordStore, type RecordStore } from "./ResourceStore"

/** Customers (`cus_`): deleted ones disappear from reads. */
export class Customers extends Context.Tag("deposits/Customers")<Customers, RecordStore>() {
  static readonly layer = Layer.effect(
    Customers,
    makeRecordStore({
      table: "customers",
      prefix: "cus",
      resource: "customer",
      endColumn: "deleted_at",
      hideEnded: true
    })
  )
}

/** Issuer identities (`iss_`): the name a payer sees. Deleted ones disappear from reads. */
export class Issuers extends Context.Tag("deposits/Issuers")<Issuers, RecordStore>() {
  static readonly layer = Layer.effect(
    Issuers,
    makeRecordStore({
      table: "issuers",
      prefix: "iss",
      resource: "issuer",
      endColumn: "deleted_at",
      hideEnded: true
    })
  )
}

/** Payout addresses (`pa_`): disabled ones stay readable but take no new deposit request. */
export class PayoutAddresses extends Context.Tag("deposits/PayoutAddresses")<PayoutAddresses, RecordStore>() {
  static readonly layer = Layer.effect(
    PayoutAddresses,
    makeRecordStore({
      table: "payout_addresses",
      prefix: "pa",
      resource: "payout_address",
      endColumn: "disabled_at",
      hideEnded: false
    })
  )
}

export const MerchantRecordsLive = Layer.mergeAll(Customers.layer, Issuers.layer, PayoutAddresses.layer)
