// A merchant's app on the installed @deposits/fetch and @deposits/webhooks tarballs, as plain Node runs it
// (their public entry points only). It prints one JSON line of what it saw.
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { ApiError, createClient, isApiError } from "@deposits/fetch"
import { verify, WebhookVerificationError } from "@deposits/webhooks"

const env = process.env
const run = promisify(execFile)
/** The sandbox CLI (the payer's side of the story, not part of the kit). */
const deposits = async (args) =>
  JSON.parse(
    (await run(process.execPath, [env.DEPOSITS_BIN, ...args, "--url", env.BASE_URL, "--json"], { env }))
      .stdout
  )

const client = createClient({ baseUrl: env.BASE_URL, apiKey: env.API_KEY })
const order = {
  amount: "1.750000",
  heading: "Fetch app order",
  issuer_id: env.ISSUER_ID,
  payout_address_id: env.PAYOUT_ADDRESS_ID
}
const key = `fetch-app-${Date.now()}`
const created = await client.createDepositRequest(order, { idempotencyKey: key })
const replayed = await client.createDepositRequest(order, { idempotencyKey: key })
const idle = await client.waitForChange(created.id, created.version, { timeout: 1 })

// Wait for `ready` while the sandbox payer attests its wallet through the CLI.
const ready = client.waitForStatus(created.id, ["ready"], { deadlineMs: 60_000 })
await deposits(["devnet", "attest", "--request", created.id])
const readied = await ready

const paid = await deposits(["devnet", "pay", "--request", created.id, "--mode", "exact"])
const settled = await client.waitForStatus(created.id, ["settled"], { deadlineMs: 90_000 })

const second = await client.createDepositRequest({ ...order, amount: "2.000000", heading: "second" })
const listedIds = []
for await (const request of client.listAll({ limit: 1 })) listedIds.push(request.id)
const issuerIds = []
for await (const issuer of client.list("/v1/issuers", { query: { limit: 1 } })) issuerIds.push(issuer.id)
const unverified = await verify("{}", { "service-signature": "v1,t=1,sha256=00" }, "whsec_x").then(
  () => undefined,
  (error) => error
)
const refused = await client.createDepositRequest({ ...order, amount: "0.000000" }).then(
  () => undefined,
  (error) => error
)

console.log(
  JSON.stringify({
    created: { id: created.id, status: created.status, version: created.version },
    replayedId: replayed.id,
    idle: { status: idle.status, version: idle.version },
    ready: { status: readied.status, address: readied.address },
    paid: { to: paid.to, amount_base_units: paid.amount_base_units },
    settled: { status: settled.status, received_base_units: settled.received_base_units },
    secondId: second.id,
    listedIds,
    issuerIds,
    unverified: { isWebhookError: unverified instanceof WebhookVerificationError, code: unverified?.code },
    refused: {
      isApiError: refused instanceof ApiError,
      ofCreate: isApiError(refused, "POST /v1/deposit-requests"),
      operation: refused?.operation,
      docUrl: refused?.docUrl ?? null,
      status: refused?.status,
      code: refused?.code,
      message: refused?.message,
      param: refused?.param ?? null,
      requestId: refused?.requestId ?? null
    }
  })
)
