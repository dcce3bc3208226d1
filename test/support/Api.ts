import type { Merchant } from "./Merchant"
import type { HttpTarget } from "./Service"

/** JSON calls to a running service as a merchant, returning status, headers and the parsed body. */
export const merchantClient = (service: HttpTarget, merchant: Merchant) => {
  const call = async <T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {}
  ) => {
    const res = await service.request(path, {
      method,
      headers: merchant.headers("api_key", {
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...headers
      }),
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
    })
    const text = await res.text()
    return { status: res.status, headers: res.headers, body: (text === "" ? null : JSON.parse(text)) as T }
  }
  return {
    call,
    /** An issuer and a payout address, the two references every deposit request needs. */
    setup: async () => {
      const issuer = await call<{ id: string }>("POST", "/v1/issuers", { display_name: "Acme Books" })
      const payout = await call<{ id: string }>("POST", "/v1/payout-addresses", {
        address: "0x52908400098527886e0f7030069857d2e4169ee7"
      })
      if (issuer.status !== 201 || payout.status !== 201) {
        throw new Error(`setup failed: ${JSON.stringify([issuer.body, payout.body])}`)
      }
      return { issuerId: issuer.body.id, payoutAddressId: payout.body.id }
    }
  }
}

export type MerchantClient = ReturnType<typeof merchantClient>
