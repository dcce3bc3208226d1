import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:https"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { makeCertificates } from "../support/HttpsReceiver"
import { type LocalChain, startLocalChain } from "../support/LocalChain"
import { type NatsCluster, natsCluster } from "../support/NatsCluster"
import { type PostgresCluster, startPostgresCluster } from "../support/PostgresCluster"
import { freePort, type ServiceProcess, spawnService } from "../support/Process"
import { type RpcFaultProxy, startRpcFaultProxy } from "../support/RpcFaultProxy"
import { REPORTS } from "./Faults"
import type { Delivery, History, ReceiverKind } from "./History"
import { type Build, currentBuild } from "./Release"

/** A throwaway CA and a certificate for 127.0.0.1, so the services deliver over real TLS to local receivers. */
const makeLoopbackCertificates = () => {
  const { ca, key, cert } = makeCertificates("127.0.0.1")
  const dir = mkdtempSync(join(tmpdir(), "chaos-certs-"))
  writeFileSync(join(dir, "ca.crt"), ca)
  return { dir, caFile: join(dir, "ca.crt"), key, cert }
}

/** How long a `hang` receiver holds a delivery before cutting the connection (past the sender's own limit). */
const HANG_MS = 30_000
/** How long a `slow` receiver takes to answer 200. */
const SLOW_MS = 1_500

/**
 * One HTTPS receiver per behaviour; the path names the endpoint. Every request is recorded with what it was answered
 * (a hang is recorded as 0: no answer).
 */
const startReceivers = async (tls: { key: Buffer; cert: Buffer }, history: History) => {
  const servers: Array<Server> = []
  const ports = {} as Record<ReceiverKind, number>
  for (const kind of ["ok", "slow", "fail", "hang"] as const) {
    const server = createServer(tls, (req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        const record = (status: number): Delivery => ({
          path: req.url ?? "",
          eventId: String(req.headers["service-event-id"] ?? ""),
          body: Buffer.concat(chunks),
          signature: String(req.headers["service-signature"] ?? ""),
          at: Date.now(),
          status
        })
        if (kind === "ok") {
          history.deliveries.push(record(200))
          res.writeHead(200).end("ok")
        } else if (kind === "slow") {
          setTimeout(() => {
            history.deliveries.push(record(200))
            res.writeHead(200).end("ok")
          }, SLOW_MS)
        } else if (kind === "fail") {
          history.deliveries.push(record(500))
          res.writeHead(500).end("nope")
        } else {
          history.deliveries.push(record(0))
          setTimeout(() => req.socket.destroy(), HANG_MS)
        }
      })
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    ports[kind] = (server.address() as { port: number }).port
    history.notes.push(`receiver ${kind} on port ${ports[kind]}`)
    servers.push(server)
  }
  return {
    urlOf: (kind: ReceiverKind, path: string) => `https://127.0.0.1:${ports[kind]}${path}`,
    close: async () => {
      for (const server of servers) {
        server.closeAllConnections()
        await new Promise<void>((resolve) => server.close(() => resolve()))
      }
    }
  }
}

export interface Instance {
  readonly index: number
  readonly port: number
  readonly baseUrl: string
  process: ServiceProcess | undefined
  /** Being stopped, or down: calls to it may fail without an answer. */
  down: boolean
  /** What it runs (an upgrade replaces it mid-run); it is named `i<index>@<version>` in the step history. */
  build: Build
}

/**
 * Every real part of a run: its own PostgreSQL, a three-node JetStream cluster, a local chain behind the RPC fault
 * proxy, HTTPS receivers, and the service instances as processes.
 */
/** The cleanups of every run under way in this process, for a runner stopped by a signal. */
export const running = new Set<() => Promise<void>>()

export const startParts = async (
  history: History,
  instances: number,
  /** What every instance runs at first: this checkout, or the release an upgrade starts from. */
  firstBuild: Build = currentBuild()
) => {
  const cleanups: Array<() => Promise<unknown>> = []
  const cleanup = async () => {
    running.delete(cleanup)
    for (const step of cleanups.reverse()) await step().catch(() => undefined)
  }
  running.add(cleanup)
  try {
    const pg: PostgresCluster = await startPostgresCluster()
    cleanups.push(() => pg.destroy())
    const nats: NatsCluster = await natsCluster()
    cleanups.push(() => nats.stop())
    // Mixed mining: each transaction is mined at once, and a block a second keeps finality moving. `finalized` lags
    // `latest` by four blocks, so a reorganisation two deep stays short of it.
    const chain: LocalChain = await startLocalChain({ blockTime: 1, mixedMining: true, slotsInAnEpoch: 2 })
    cleanups.push(() => chain.node.stop())
    const rpc: RpcFaultProxy = await startRpcFaultProxy(chain.node.rpcUrl)
    cleanups.push(() => rpc.stop())
    const certs = makeLoopbackCertificates()
    cleanups.push(async () => rmSync(certs.dir, { recursive: true, force: true }))
    const receivers = await startReceivers(certs, history)
    cleanups.push(() => receivers.close())
    mkdirSync(REPORTS, { recursive: true })
    const dataRoot = mkdtempSync(join(tmpdir(), "chaos-data-"))
    cleanups.push(async () => rmSync(dataRoot, { recursive: true, force: true }))

    const envOf = (index: number): Record<string, string> => ({
      DATABASE_URL: pg.url,
      NATS_URL: nats.urls.join(","),
      NATS_STREAM_REPLICAS: "3",
      CHAIN_RPC_URL: rpc.url,
      TOKEN_ADDRESS: chain.token,
      DATA_DIR: join(dataRoot, `i${index}`),
      RATE_LIMIT_CAPACITY: "100000",
      // Sandbox only: lets deliveries reach receivers on loopback; the receivers are HTTPS with a CA of the run's.
      WEBHOOKS_ALLOW_PRIVATE: "true",
      NODE_EXTRA_CA_CERTS: certs.caFile,
      WEBHOOK_FIRST_RETRY_MS: "500",
      WEBHOOK_CLAIM_TTL_MS: "5000",
      CHAIN_RPC_TIMEOUT_MS: "3000",
      NODE_OPTIONS: `--report-on-signal --report-signal=SIGUSR2 --report-directory=${REPORTS}`
    })
    const fleet: Array<Instance> = []
    for (let index = 0; index < instances; index++) {
      const port = await freePort()
      fleet.push({
        index,
        port,
        baseUrl: `http://127.0.0.1:${port}`,
        process: undefined,
        down: true,
        build: firstBuild
      })
    }
    /**
     * Starts an instance as a supervisor would: one that exits while starting (its database or JetStream not
     * reachable yet) is started again a second later, for up to two minutes.
     */
    /** Every process the run started, stopped ones included: what each printed is checked at the end. */
    const processes: Array<ServiceProcess> = []
    const startInstance = async (instance: Instance) => {
      const until = Date.now() + 120_000
      for (;;) {
        try {
          instance.process = await spawnService(
            {
              ...envOf(instance.index),
              PORT: String(instance.port),
              INSTANCE_ID: `i${instance.index}@${instance.build.version}`
            },
            120_000,
            instance.build.entry,
            200,
            instance.build.cwd
          )
          processes.push(instance.process)
          instance.down = false
          return
        } catch (error) {
          if (Date.now() > until) throw error
          const said = String(error)
            .split("\n")
            .filter((line) => /ERROR|refus/i.test(line))
          const file = join(REPORTS, `instance-${instance.index}-start-${Date.now()}.log`)
          writeFileSync(file, String(error))
          history.notes.push(
            `instance ${instance.index} exited while starting (${(said.slice(0, 2).join(" ") || String(error)).slice(0, 200)}; all it printed: ${file}); started again`
          )
          await new Promise((resolve) => setTimeout(resolve, 1_000))
        }
      }
    }
    cleanups.push(async () => {
      for (const instance of fleet) await instance.process?.stop("SIGKILL").catch(() => undefined)
    })
    // The first one migrates the database; the others start on it.
    await startInstance(fleet[0]!)
    await Promise.all(fleet.slice(1).map(startInstance))
    return {
      pg,
      nats,
      chain,
      rpc,
      receivers,
      fleet,
      startInstance,
      processes,
      cleanup,
      ca: readFileSync(certs.caFile)
    }
  } catch (error) {
    await cleanup()
    throw error
  }
}

export type Parts = Awaited<ReturnType<typeof startParts>>
