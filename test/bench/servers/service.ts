/**
 * Bench target: the real service (`AppLive`, the whole edge middleware) on a random port against a fresh database
 * on the real PostgreSQL, dropped again on SIGTERM. Prints `PORT <n>` once it accepts connections.
 *
 * With no `BENCH_*` variables set it is exactly `startService()` of the integration tests. For investigating where
 * the time goes, variants (none of which changes src/):
 * - `BENCH_TRACER=off` runs the whole service with `FiberRef.currentTracerEnabled` false (no spans anywhere);
 *   `BENCH_TRACER=http-off` only disables the HTTP server span (`HttpMiddleware.withTracerDisabledWhen`).
 * - `BENCH_MIN_LOG_LEVEL=<Effect log level>` (e.g. `Warning`, `None`) sets the minimum log level.
 * - `BENCH_HEALTH_SQL=stub` serves the health group with a SqlClient whose every query succeeds at once, so
 *   `/v1/health` measures the routing, edge middleware and encoding with no database round trip.
 */
import { HttpApiBuilder, HttpApiScalar, HttpMiddleware, HttpServer } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, FiberRef, Layer, LogLevel, ManagedRuntime, Option, Redacted } from "effect"
import { Api } from "../../../src/http/Api"
import { HealthLive } from "../../../src/http/Health/Http"
import { ApiSettings, settingsLayer } from "../../../src/app/Config"
import { EdgeLive } from "../../../src/http/edge/Edge"
import { AppLive, HttpServerLive, makeHandlers, ServicesLive } from "../../../src/app/Server"
import { createTestDatabase } from "../../support/Database"
import { startService } from "../../support/Service"

const tracer = process.env.BENCH_TRACER ?? "on"
const minLogLevel = process.env.BENCH_MIN_LOG_LEVEL
const healthSql = process.env.BENCH_HEALTH_SQL ?? "real"
const isVariant = tracer !== "on" || minLogLevel !== undefined || healthSql !== "real"

/** A SqlClient stand-in for the health handler only: `sql\`…\`` succeeds at once with no rows. */
const StubSqlLive = Layer.succeed(SqlClient.SqlClient, (() =>
  Effect.succeed([])) as unknown as SqlClient.SqlClient)

/** `AppLive` as src/app/Server.ts composes it, but with the health group on the stub SqlClient. */
const appWithStubbedHealth = () => {
  const handlers = makeHandlers(HealthLive.pipe(Layer.provide(StubSqlLive)) as typeof HealthLive)
  const api = HttpApiBuilder.serve().pipe(
    Layer.provide(EdgeLive),
    Layer.provide(HttpApiScalar.layer({ path: "/docs" })),
    Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" })),
    Layer.provide(HttpApiBuilder.api(Api).pipe(Layer.provide(handlers)))
  )
  return api.pipe(
    Layer.provideMerge(HttpServerLive),
    Layer.provideMerge(ServicesLive),
    HttpServer.withLogAddress
  )
}

const startVariant = async () => {
  const db = await createTestDatabase()
  let app = healthSql === "stub" ? appWithStubbedHealth() : AppLive
  if (tracer === "off") app = Layer.locally(app, FiberRef.currentTracerEnabled, false)
  if (tracer === "http-off") app = HttpMiddleware.withTracerDisabledWhen(app, () => true)
  if (minLogLevel !== undefined) {
    const level = LogLevel.fromLiteral(minLogLevel as LogLevel.Literal)
    app = Layer.locally(app, FiberRef.currentMinimumLogLevel, level)
  }
  const settings = settingsLayer({ databaseUrl: Option.some(Redacted.make(db.url)), port: 0 })
  const runtime = ManagedRuntime.make(app.pipe(Layer.provide(ApiSettings.Default), Layer.provide(settings)))
  const server = await runtime.runPromise(HttpServer.HttpServer)
  if (server.address._tag !== "TcpAddress") throw new Error("expected a TCP address")
  return {
    port: server.address.port,
    stop: async () => {
      await runtime.dispose()
      await db.drop()
    }
  }
}

const startDefault = async () => {
  const service = await startService()
  return { port: Number(new URL(service.baseUrl).port), stop: service.stop }
}

const running = await (isVariant ? startVariant() : startDefault())
process.stdout.write(`PORT ${running.port}\n`)

let stopping = false
const stop = () => {
  if (stopping) return
  stopping = true
  running.stop().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`${String(error)}\n`)
      process.exit(1)
    }
  )
}
process.once("SIGTERM", stop)
process.once("SIGINT", stop)
