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
import { created } from "./createdAnswer"

const Api = HttpApi.make("bench").add(
  HttpApiGroup.make("noop")
    .add(HttpApiEndpoint.get("noop", "/noop").addSuccess(Schema.Struct({ status: Schema.Literal("ok") })))
    .add(
      HttpApiEndpoint.post("createShaped", "/create-shaped")
        .setPayload(CreateDepositRequest)
        .addSuccess(CreatedDepositRequest, { status: 201 })
    )
)

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
