/**
 * Bench target: a bare Effect `HttpApi` with one no-op GET endpoint and no middleware of ours, served with
 * `HttpApiBuilder.serve()` on NodeHttpServer, with the framework's defaults (tracer on, default logger). This is
 * the baseline the service's own routes are compared with. A second endpoint, `POST /create-shaped`, decodes the
 * service's create payload and answers a fixed request with the service's answer schema and no other work: what
 * the framework alone costs for a create's body and answer. Prints `PORT <n>`.
 */
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpServer } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Schema } from "effect"
import { createServer } from "node:http"
import { CreateDepositRequest, CreatedDepositRequest } from "../../../src/http/DepositRequests/Api"

const Api = HttpApi.make("bench").add(
  HttpApiGroup.make("noop")
    .add(HttpApiEndpoint.get("noop", "/noop").addSuccess(Schema.Struct({ status: Schema.Literal("ok") })))
    .add(
      HttpApiEndpoint.post("createShaped", "/create-shaped")
        .setPayload(CreateDepositRequest)
        .addSuccess(CreatedDepositRequest, { status: 201 })
    )
)

/** A fresh request as the service answers it (every field, the nulls of a new one). */
const created: typeof CreatedDepositRequest.Type = {
  id: "dr_019ab0c1-7a6e-7c3b-9d2f-0c1e2d3f4a5b",
  status: "awaiting_payer",
  amount: "12.500000",
  amount_base_units: "12500000",
  received: "0.000000",
  received_base_units: "0",
  heading: "",
  reference: "",
  metadata: {},
  customer_id: null,
  issuer_id: "iss_019ab0c1-7a6e-7c3b-9d2f-0c1e2d3f4a5c",
  payer_policy_mode: "none",
  payer_reference: null,
  verification_completed_at: null,
  likely_unsolicited_at: null,
  payer_wallet: null,
  address: null,
  wallet_bound_at: null,
  expires_at: "2026-11-23T19:00:00Z",
  created_at: "2026-11-22T19:00:00Z",
  payout_address_id: "pa_019ab0c1-7a6e-7c3b-9d2f-0c1e2d3f4a5d",
  expected_email: null,
  return_url: null,
  attention: null,
  settlement: null,
  chain_id: 10143,
  checkout_url: "http://127.0.0.1:8080/checkout/dr_019ab0c1-7a6e-7c3b-9d2f-0c1e2d3f4a5b",
  version: "1",
  updated_at: "2026-11-22T19:00:00Z"
}

const NoopLive = HttpApiBuilder.group(Api, "noop", (handlers) =>
  handlers
    .handle("noop", () => Effect.succeed({ status: "ok" as const }))
    .handle("createShaped", () => Effect.succeed(created))
)

const ServerLive = HttpApiBuilder.serve().pipe(
  Layer.provide(HttpApiBuilder.api(Api).pipe(Layer.provide(NoopLive))),
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
)

const program = Effect.gen(function* () {
  const server = yield* HttpServer.HttpServer
  if (server.address._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
  const port = server.address.port
  yield* Effect.sync(() => process.stdout.write(`PORT ${port}\n`))
  return yield* Effect.never
})

// runMain interrupts on SIGTERM/SIGINT, which closes the server.
NodeRuntime.runMain(program.pipe(Effect.provide(ServerLive)))
