import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Customers, Issuers, PayoutAddresses } from "../../../services/merchants/MerchantResources"
import type { ResourceStore, StoredResource } from "../../../services/merchants/ResourceStore"
import { Api } from "../Api"
import { CurrentIdentity } from "../middleware/Authentication"
import { NotFound } from "../Errors"
import { withChange } from "../middleware/AuditTrail"
import { formatTimestamp } from "../../../services/domain/Timestamp"
import { type IdPrefix, type ResourceName, toId, uuidFromId } from "../../../services/domain/PrefixedId"

const str = (v: unknown) => (typeof v === "string" ? v : null)
const stamps = (row: StoredResource) => ({
  metadata: (row.metadata ?? {}) as Record<string, string>,
  created_at: formatTimestamp(row.created_at),
  updated_at: formatTimestamp(row.updated_at)
})

const customerWire = (row: StoredResource) => ({
  id: toId("cus", row.id) as string,
  name: String(row.name),
  email: str(row.email),
  description: str(row.description),
  ...stamps(row)
})
const issuerWire = (row: StoredResource) => ({
  id: toId("iss", row.id) as string,
  display_name: String(row.display_name),
  legal_name: str(row.legal_name),
  support_email: str(row.support_email),
  support_url: str(row.support_url),
  ...stamps(row)
})
const payoutWire = (row: StoredResource) => ({
  id: toId("pa", row.id) as string,
  address: String(row.address),
  label: str(row.label),
  ...stamps(row),
  disabled_at: row.disabled_at instanceof Date ? formatTimestamp(row.disabled_at) : null,
  disabled_reason: str(row.disabled_reason),
  held_until: row.held_until instanceof Date ? formatTimestamp(row.held_until) : null
})

/** Bodies to columns: `metadata` is always an object (null clears it to `{}`); other nulls clear the column. */
const columns = (body: Record<string, unknown>) => {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(body)) {
    if (value === undefined) continue
    out[key] = key === "metadata" ? (value ?? {}) : value
  }
  return out
}

/** The handlers every merchant record shares, over its store; ids in paths that are not this prefix are 404. */
const recordHandlers = <W>(
  store: ResourceStore,
  prefix: IdPrefix,
  resource: ResourceName,
  wire: (r: StoredResource) => W
) => {
  const uuidOr404 = (id: string) => {
    const uuid = uuidFromId(prefix, id)
    return uuid === undefined ? Effect.fail(NotFound.of(resource)) : Effect.succeed(uuid)
  }
  const withAccount = <A, E, R>(f: (accountId: string) => Effect.Effect<A, E, R>) =>
    Effect.flatMap(CurrentIdentity, ({ accountId }) => f(accountId))
  return {
    create: (body: Record<string, unknown>) =>
      withAccount((a) => Effect.map(store.create(a, columns(body)), wire)),
    list: (params: { readonly limit: number; readonly starting_after?: string | undefined }) =>
      withAccount((a) =>
        Effect.map(
          store.list(a, params.limit, params.starting_after && uuidFromId(prefix, params.starting_after)),
          ({ rows, more }) => ({
            items: rows.map(wire),
            next_cursor: more && rows.length > 0 ? (toId(prefix, rows[rows.length - 1]!.id) as string) : null
          })
        )
      ),
    get: (id: string) =>
      withAccount((a) => Effect.flatMap(uuidOr404(id), (u) => Effect.map(store.require(a, u), wire))),
    update: (id: string, body: Record<string, unknown>) =>
      withAccount((a) =>
        Effect.flatMap(uuidOr404(id), (u) => Effect.map(store.update(a, u, columns(body)), wire))
      ),
    end: (id: string) =>
      withAccount((a) => Effect.flatMap(uuidOr404(id), (u) => Effect.map(store.end(a, u), wire)))
  }
}

export const CustomersLive = HttpApiBuilder.group(Api, "customers", (handlers) =>
  Effect.gen(function* () {
    const h = recordHandlers(yield* Customers, "cus", "customer", customerWire)
    return handlers
      .handle("create", ({ payload }) => h.create(payload))
      .handle("list", ({ urlParams }) =>
        Effect.map(h.list(urlParams), ({ items, next_cursor }) => ({ customers: items, next_cursor }))
      )
      .handle("get", ({ path }) => h.get(path.id))
      .handle("update", ({ path, payload }) => h.update(path.id, payload))
      .handle("delete", ({ path }) => Effect.asVoid(h.end(path.id)))
  })
)

export const IssuersLive = HttpApiBuilder.group(Api, "issuers", (handlers) =>
  Effect.gen(function* () {
    const h = recordHandlers(yield* Issuers, "iss", "issuer", issuerWire)
    return handlers
      .handle("create", ({ payload }) => h.create(payload).pipe(withChange("issuer.created", (w) => w.id)))
      .handle("list", ({ urlParams }) =>
        Effect.map(h.list(urlParams), ({ items, next_cursor }) => ({ issuers: items, next_cursor }))
      )
      .handle("get", ({ path }) => h.get(path.id))
      .handle("update", ({ path, payload }) =>
        h.update(path.id, payload).pipe(withChange("issuer.updated", (w) => w.id))
      )
      .handle("delete", ({ path }) =>
        Effect.asVoid(h.end(path.id).pipe(withChange("issuer.deleted", (w) => w.id)))
      )
  })
)

export const PayoutAddressesLive = HttpApiBuilder.group(Api, "payoutAddresses", (handlers) =>
  Effect.gen(function* () {
    const payouts = yield* PayoutAddresses
    const h = recordHandlers(payouts, "pa", "payout_address", payoutWire)
    return handlers
      .handle("create", ({ payload }) =>
        h.create(payload).pipe(withChange("payout_address.created", (w) => w.id))
      )
      .handle("list", ({ urlParams }) =>
        Effect.map(h.list(urlParams), ({ items, next_cursor }) => ({ payout_addresses: items, next_cursor }))
      )
      .handle("get", ({ path }) => h.get(path.id))
      .handle("update", ({ path, payload }) =>
        h.update(path.id, payload).pipe(withChange("payout_address.updated", (w) => w.id))
      )
      .handle("disable", ({ path }) =>
        h.end(path.id).pipe(withChange("payout_address.disabled", (w) => w.id))
      )
      .handle("cancel", ({ path }) =>
        Effect.flatMap(CurrentIdentity, ({ accountId }) => {
          const uuid = uuidFromId("pa", path.id)
          return uuid === undefined
            ? Effect.fail(NotFound.of("payout_address"))
            : Effect.map(payouts.cancelHold(accountId, uuid), payoutWire)
        }).pipe(withChange("payout_address.hold_cancelled", (w) => w.id))
      )
  })
)
