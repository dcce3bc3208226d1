import { type ChildProcess, execFile, spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { mkdtempSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import { promisify } from "node:util"
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { verify } from "../../src/client/webhooks"
import { eventually } from "../support/eventually"
import { ChainServiceFixture, chainServiceLayer } from "../support/scopedChainService"

// `deposits listen` as a merchant runs it: the real CLI process against the sandbox service on the local chain
// (WEBHOOKS_ALLOW_PRIVATE off, so no endpoint may point at this machine), forwarding to a plain-HTTP server here.
// A request is created, paid with the devnet CLI and settled; the local server gets every lifecycle event, each
// verifying with the secret the CLI printed, in order; its one 500 is retried with the same event id and bytes;
// the CLI prints a line per delivery; its exit removes the listener.

const ChainLive = chainServiceLayer({ blockTime: 0.2 }, { config: { webhookFirstRetryMs: 500 } })
const run = promisify(execFile)

interface Received {
  readonly headers: IncomingHttpHeaders
  readonly body: string
  readonly status: number
}

/** A merchant's local receiver: records every request with its raw body; the first one is answered 500. */
const localServer = Effect.acquireRelease(
  Effect.promise(
    () =>
      new Promise<{ server: Server; port: number; received: Array<Received> }>((resolve) => {
        const received: Array<Received> = []
        const server = createServer((req, res) => {
          const chunks: Array<Buffer> = []
          req.on("data", (chunk: Buffer) => chunks.push(chunk))
          req.on("end", () => {
            const status = received.length === 0 ? 500 : 200
            received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), status })
            res.writeHead(status, { "content-type": "text/plain" }).end(status === 200 ? "ok" : "not yet")
          })
        })
        server.listen(0, "127.0.0.1", () =>
          resolve({ server, port: (server.address() as { port: number }).port, received })
        )
      })
  ),
  ({ server }) =>
    Effect.promise(
      () =>
        new Promise<void>((done) => {
          server.closeAllConnections()
          server.close(() => done())
        })
    )
)

/** A local receiver whose answer the test sets: 200 "ok", or 500 "boom". */
const switchableServer = Effect.acquireRelease(
  Effect.promise(
    () =>
      new Promise<{ server: Server; port: number; received: Array<Received>; failing: { on: boolean } }>(
        (resolve) => {
          const received: Array<Received> = []
          const failing = { on: false }
          const server = createServer((req, res) => {
            const chunks: Array<Buffer> = []
            req.on("data", (chunk: Buffer) => chunks.push(chunk))
            req.on("end", () => {
              const status = failing.on ? 500 : 200
              received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), status })
              res.writeHead(status, { "content-type": "text/plain" }).end(status === 200 ? "ok" : "boom")
            })
          })
          server.listen(0, "127.0.0.1", () =>
            resolve({ server, port: (server.address() as { port: number }).port, received, failing })
          )
        }
      )
  ),
  ({ server }) =>
    Effect.promise(
      () =>
        new Promise<void>((done) => {
          server.closeAllConnections()
          server.close(() => done())
        })
    )
)

/** The CLI as a merchant starts it, its output collected; stopped (SIGKILL) if the test left it running. */
const listenCli = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child: ChildProcess = spawn(process.execPath, ["src/cli/deposits.mjs", "listen", ...args], {
        env: { ...process.env, ...env },
        stdio: ["ignore", "pipe", "pipe"]
      })
      const output = { stdout: "", stderr: "" }
      child.stdout!.on("data", (d) => {
        output.stdout += d
      })
      child.stderr!.on("data", (d) => {
        output.stderr += d
      })
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
      return { child, output, exited }
    }),
    ({ child }) => Effect.sync(() => child.exitCode === null && child.kill("SIGKILL"))
  )

layer(ChainLive, { timeout: 240_000, excludeTestServices: true })("deposits listen", (it) => {
  it.effect(
    "forwards a settled request's events to a local plain-HTTP server, retries a 500, and removes itself on exit",
    () =>
      Effect.gen(function* () {
        const { service, merchant, api, local, db } = yield* ChainServiceFixture
        const receiver = yield* localServer
        const forwardTo = `http://localhost:${receiver.port}/hooks`

        // A real endpoint may still not point at this machine.
        const refused = yield* Effect.promise(() =>
          api.call<{ error: { code: string; message: string } }>("POST", "/v1/webhooks", { url: forwardTo })
        )
        assert.strictEqual(refused.status, 400)
        assert.strictEqual(refused.body.error.code, "invalid_request")

        const cli = yield* listenCli(["--forward-to", forwardTo, "--api", service.baseUrl], {
          DEPOSITS_API_KEY: merchant.apiKey,
          XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), "deposits-config-"))
        })
        assert.isTrue(
          yield* eventually(
            Effect.sync(() => /Webhook signing secret: whsec_\S+/.test(cli.output.stdout)),
            60_000,
            100
          ),
          `stdout:\n${cli.output.stdout}\nstderr:\n${cli.output.stderr}`
        )
        const secret = /Webhook signing secret: (whsec_\S+)/.exec(cli.output.stdout)![1]!
        const listenerId = /listener (wh_[0-9a-f-]+)/.exec(cli.output.stdout)![1]!

        const refs = yield* Effect.promise(() => api.setup())
        const created = yield* Effect.promise(() =>
          api.call<{ id: string }>(
            "POST",
            "/v1/deposit-requests",
            { amount: "2.500000", issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId },
            { "idempotency-key": randomUUID() }
          )
        )
        assert.strictEqual(created.status, 201)
        const requestId = created.body.id
        yield* Effect.promise(() =>
          run(
            process.execPath,
            [
              "src/cli/deposits.mjs",
              "devnet",
              "pay",
              "--request",
              requestId,
              "--mode",
              "exact",
              "--url",
              service.baseUrl
            ],
            {
              env: {
                ...process.env,
                DATABASE_URL: service.databaseUrl,
                CHAIN_RPC_URL: local.node.rpcUrl,
                TOKEN_ADDRESS: local.token
              }
            }
          )
        )

        const typesAnswered = () =>
          receiver.received.filter((r) => r.status === 200).map((r) => r.headers["service-event-type"])
        assert.isTrue(
          yield* eventually(
            Effect.sync(() => typesAnswered().includes("deposit_request.settled")),
            120_000,
            200
          ),
          `received ${JSON.stringify(typesAnswered())}\nstdout:\n${cli.output.stdout}\nstderr:\n${cli.output.stderr}`
        )

        // Every delivery verifies with the printed secret, over the raw bytes, and is about this request.
        const events = yield* Effect.promise(() =>
          Promise.all(
            receiver.received.map(async (r) => ({ ...r, event: await verify(r.body, r.headers, secret) }))
          )
        )
        for (const { event } of events) {
          if ("deposit_request" in event.data) assert.strictEqual(event.data.deposit_request.id, requestId)
          else assert.fail(`an event without a request: ${event.type}`)
        }
        // Only the headers a real endpoint gets (and the transport's own).
        for (const { headers } of events)
          assert.deepStrictEqual(Object.keys(headers).sort(), [
            "connection",
            "content-length",
            "content-type",
            "host",
            "service-event-id",
            "service-event-type",
            "service-signature",
            "user-agent"
          ])
        // Every lifecycle event, in the order it happened (each first arrival).
        const firstArrivals = [...new Map(events.map((e) => [e.event.id, e.event.type])).values()]
        assert.deepStrictEqual(firstArrivals, [
          "deposit_request.ready",
          "deposit_request.deposited",
          "deposit_request.settled"
        ])
        // The first answer was a 500: the retry carried the same event id and the same bytes.
        const [first] = events
        const retry = events.find((e, i) => i > 0 && e.event.id === first!.event.id)
        assert.strictEqual(first!.status, 500)
        assert.isDefined(retry)
        assert.strictEqual(retry!.body, first!.body)
        assert.strictEqual(retry!.headers["service-event-id"], first!.headers["service-event-id"])
        assert.strictEqual(retry!.status, 200)
        assert.strictEqual(events.filter((e) => e.status === 200).length, 3)

        // A line per delivery: time, type, event id, request id, the local status and duration.
        const lines = cli.output.stdout.split("\n").filter((l) => /^\d{4}-\d\d-\d\dT/.test(l))
        const line = (type: string, id: string, status: number) =>
          new RegExp(
            `^\\S+Z  ${type.replace(".", "\\.")}  ${id}  ${requestId}  -> ${status}  \\d+ ms(  \\(attempt \\d+\\))?(  body ".*")?$`
          )
        assert.strictEqual(lines.length, 4, cli.output.stdout)
        assert.match(lines[0]!, line("deposit_request.ready", first!.event.id, 500))
        // The failed answer shows what the local app said.
        assert.match(lines[0]!, / {2}body "not yet"$/)
        assert.match(lines[1]!, line("deposit_request.ready", first!.event.id, 200))
        assert.match(lines[1]!, /\(attempt 2\)$/)
        for (const { event } of events.slice(2))
          assert.isTrue(
            lines.some((l) => line(event.type, event.id, 200).test(l)),
            `${event.type}: ${cli.output.stdout}`
          )

        // The service's delivery log has the attempts as the local server answered them. A listener is no
        // endpoint (its id is 404 on the endpoint routes): its attempts are read among the request's deliveries.
        const log = yield* Effect.promise(() =>
          api.call<{
            deliveries: Array<{
              webhook_id: string
              event_id: string
              attempt: number
              response_status: number
            }>
          }>("GET", `/v1/deposit-requests/${requestId}/deliveries?limit=100`)
        )
        assert.deepStrictEqual(
          log.body.deliveries
            .filter((d) => d.webhook_id === listenerId && d.event_id === first!.event.id)
            .map((d) => [d.attempt, d.response_status]),
          [
            [2, 200],
            [1, 500]
          ]
        )

        // Ctrl-C: the CLI removes its listener and exits 0.
        cli.child.kill("SIGINT")
        const code = yield* Effect.promise(() => cli.exited)
        assert.strictEqual(code, 0, cli.output.stderr)
        assert.match(cli.output.stdout, new RegExp(`Listener ${listenerId} removed`))
        const row = yield* Effect.promise(() =>
          db.query<{ disabled: boolean }>(
            "select disabled_at is not null as disabled from webhook_endpoints where id = $1",
            [listenerId.slice(3)]
          )
        )
        assert.deepStrictEqual(row.rows, [{ disabled: true }])
        const polled = yield* Effect.promise(() =>
          api.call("GET", `/v1/webhook-listeners/${listenerId}/deliveries`)
        )
        assert.strictEqual(polled.status, 404)
      }).pipe(Effect.scoped)
  )

  it.effect(
    "keeps one secret across runs, rotates it on demand, triggers a settled request, resends an event, shows a 500's body",
    () =>
      Effect.gen(function* () {
        const { service, merchant, local } = yield* ChainServiceFixture
        const receiver = yield* switchableServer
        const forwardTo = `http://localhost:${receiver.port}/hooks`
        const configHome = mkdtempSync(join(tmpdir(), "deposits-config-"))
        const env = {
          DEPOSITS_API_KEY: merchant.apiKey,
          XDG_CONFIG_HOME: configHome,
          API: service.baseUrl,
          DATABASE_URL: service.databaseUrl,
          CHAIN_RPC_URL: local.node.rpcUrl,
          TOKEN_ADDRESS: local.token
        }
        /** A run of `deposits listen` until it prints its secret: its listener and secret. */
        const start = (extra: ReadonlyArray<string> = []) =>
          Effect.gen(function* () {
            const cli = yield* listenCli(["--forward-to", forwardTo, ...extra], env)
            assert.isTrue(
              yield* eventually(
                Effect.sync(() => /Webhook signing secret: whsec_\S+/.test(cli.output.stdout)),
                60_000,
                100
              ),
              `stdout:\n${cli.output.stdout}\nstderr:\n${cli.output.stderr}`
            )
            return {
              cli,
              secret: /Webhook signing secret: (whsec_\S+)/.exec(cli.output.stdout)![1]!,
              listenerId: /listener (wh_[0-9a-f-]+)/.exec(cli.output.stdout)![1]!
            }
          })
        const stop = (cli: Effect.Effect.Success<ReturnType<typeof listenCli>>) =>
          Effect.gen(function* () {
            cli.child.kill("SIGINT")
            assert.strictEqual(yield* Effect.promise(() => cli.exited), 0, cli.output.stderr)
          })
        const deposits = (args: ReadonlyArray<string>) =>
          Effect.promise(() =>
            run(process.execPath, ["src/cli/deposits.mjs", ...args], { env: { ...process.env, ...env } })
          )
        const arrivals = (eventId: string) =>
          receiver.received.filter((r) => r.headers["service-event-id"] === eventId)

        // A type the command cannot produce: exit 2 and the list; production: refused, nothing created.
        const unknown = yield* Effect.flip(
          Effect.tryPromise(() =>
            run(process.execPath, ["src/cli/deposits.mjs", "trigger", "deposit_request.created"], {
              env: { ...process.env, ...env }
            })
          )
        ).pipe(Effect.map((e) => e.error as { code: number; stderr: string }))
        assert.strictEqual(unknown.code, 2)
        assert.match(unknown.stderr, /cannot trigger 'deposit_request\.created'; supported:/)
        for (const type of ["ready", "deposited", "settled", "expired", "returned", "recovered_funds"])
          assert.include(unknown.stderr, `deposit_request.${type}`)
        const production = yield* Effect.flip(
          Effect.tryPromise(() =>
            run(process.execPath, ["src/cli/deposits.mjs", "trigger", "deposit_request.ready"], {
              env: { ...process.env, ...env, SERVICE_ENV: "production" }
            })
          )
        ).pipe(Effect.map((e) => e.error as { code: number; stderr: string }))
        assert.strictEqual(production.code, 1)
        assert.match(production.stderr, /trigger is for the sandbox only/)

        // Two runs: the same listener and the same secret, kept in a file only its owner reads.
        const firstRun = yield* start()
        assert.match(firstRun.cli.output.stdout, /\(new: kept for the next runs on this machine\)/)
        yield* stop(firstRun.cli)
        const secondRun = yield* start()
        assert.strictEqual(secondRun.secret, firstRun.secret)
        assert.strictEqual(secondRun.listenerId, firstRun.listenerId)
        assert.match(secondRun.cli.output.stdout, /\(the same as last run\)/)
        assert.strictEqual(statSync(join(configHome, "deposits", "listen.json")).mode & 0o777, 0o600)

        // `trigger deposit_request.settled`: a new request attested, paid and settled; the listener gets the event,
        // signed after the second run began, and it verifies with the secret the first run printed.
        const triggered = yield* deposits(["trigger", "deposit_request.settled"])
        const requestId = /triggered deposit_request\.settled for (dr_\S+)/.exec(triggered.stdout)?.[1]
        assert.isDefined(requestId, triggered.stdout)
        const settledArrival = () =>
          receiver.received.find(
            (r) =>
              r.headers["service-event-type"] === "deposit_request.settled" && r.body.includes(requestId!)
          )
        assert.isTrue(
          yield* eventually(
            Effect.sync(() => settledArrival() !== undefined),
            120_000,
            200
          ),
          `stdout:\n${secondRun.cli.output.stdout}\nstderr:\n${secondRun.cli.output.stderr}`
        )
        const settled = yield* Effect.promise(() =>
          verify(settledArrival()!.body, settledArrival()!.headers, firstRun.secret)
        )
        assert.strictEqual(settled.type, "deposit_request.settled")

        // `events resend`, with no --to: to every endpoint that got it, here the listener; the same id again. The
        // local app answers 500 "boom" this time: the CLI's line shows the status and the body.
        receiver.failing.on = true
        const resent = yield* deposits(["events", "resend", settled.id])
        assert.match(resent.stdout, new RegExp(`queued  ${settled.id}  -> ${firstRun.listenerId}`))
        assert.isTrue(
          yield* eventually(
            Effect.sync(() => arrivals(settled.id).length >= 2),
            30_000,
            100
          )
        )
        const again = arrivals(settled.id)[1]!
        assert.strictEqual(again.status, 500)
        assert.strictEqual(again.body, settledArrival()!.body)
        assert.isTrue(
          yield* eventually(
            Effect.sync(() =>
              new RegExp(`${settled.id}  ${requestId}  -> 500  \\d+ ms  body "boom"`).test(
                secondRun.cli.output.stdout
              )
            ),
            10_000,
            100
          ),
          secondRun.cli.output.stdout
        )
        receiver.failing.on = false
        yield* stop(secondRun.cli)

        // `--rotate-secret`: a new secret for the same listener; the old one no longer verifies what it sends.
        const rotatedRun = yield* start(["--rotate-secret"])
        assert.strictEqual(rotatedRun.listenerId, firstRun.listenerId)
        assert.notStrictEqual(rotatedRun.secret, firstRun.secret)
        const before = arrivals(settled.id).length
        yield* deposits(["events", "resend", settled.id, "--to", firstRun.listenerId])
        assert.isTrue(
          yield* eventually(
            Effect.sync(() =>
              arrivals(settled.id)
                .slice(before)
                .some((r) => r.status === 200)
            ),
            30_000,
            100
          )
        )
        const rotated = arrivals(settled.id)
          .slice(before)
          .find((r) => r.status === 200)!
        const verified = yield* Effect.promise(() => verify(rotated.body, rotated.headers, rotatedRun.secret))
        assert.strictEqual(verified.id, settled.id)
        const stale = yield* Effect.promise(() =>
          verify(rotated.body, rotated.headers, firstRun.secret).then(
            () => undefined,
            (e: unknown) => e
          )
        )
        assert.instanceOf(stale, Error)
        // And the next run keeps the rotated one.
        yield* stop(rotatedRun.cli)
        const lastRun = yield* start()
        assert.strictEqual(lastRun.secret, rotatedRun.secret)
        yield* stop(lastRun.cli)
      }).pipe(Effect.scoped)
  )

  it.effect("trigger emits each supported type to a running listener, on a request of its own", () =>
    Effect.gen(function* () {
      const { service, merchant, local } = yield* ChainServiceFixture
      const receiver = yield* switchableServer
      const env = {
        DEPOSITS_API_KEY: merchant.apiKey,
        XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), "deposits-config-")),
        API: service.baseUrl,
        DATABASE_URL: service.databaseUrl,
        CHAIN_RPC_URL: local.node.rpcUrl,
        TOKEN_ADDRESS: local.token
      }
      const cli = yield* listenCli(["--forward-to", `http://localhost:${receiver.port}/hooks`], env)
      assert.isTrue(
        yield* eventually(
          Effect.sync(() => /Webhook signing secret: whsec_\S+/.test(cli.output.stdout)),
          60_000,
          100
        )
      )
      const types = [
        "deposit_request.ready",
        "deposit_request.deposited",
        "deposit_request.expired",
        "deposit_request.returned",
        "deposit_request.recovered_funds",
        "deposit_request.likely_unsolicited"
      ]
      for (const type of types) {
        const triggered = yield* Effect.promise(() =>
          run(process.execPath, ["src/cli/deposits.mjs", "trigger", type], {
            env: { ...process.env, ...env }
          })
        )
        const requestId = /triggered \S+ for (dr_\S+)/.exec(triggered.stdout)![1]!
        const arrived = () =>
          receiver.received.some(
            (r) => r.headers["service-event-type"] === type && r.body.includes(requestId)
          )
        assert.isTrue(
          yield* eventually(Effect.sync(arrived), 120_000, 200),
          `${type} for ${requestId}: ${JSON.stringify(receiver.received.map((r) => r.headers["service-event-type"]))}`
        )
      }
    }).pipe(Effect.scoped)
  )
})
