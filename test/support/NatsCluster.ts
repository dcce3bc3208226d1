import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort } from "./Process"

const NATS_SERVER = "/usr/sbin/nats-server"
const NODES = 3
/** A node that started and joined the cluster: a JetStream metadata leader is seen through it within this. */
const READY_WITHIN_MS = 20_000

interface NodePorts {
  readonly name: string
  readonly client: number
  readonly cluster: number
  readonly monitor: number
  readonly storeDir: string
  readonly configFile: string
}

/** What a node's monitoring `/jsz` says about the JetStream metadata group (nats-server 2.9). */
interface Jsz {
  readonly meta_cluster?: { readonly leader?: string; readonly cluster_size?: number }
}

const jszOf = async (monitorPort: number): Promise<Jsz | undefined> => {
  try {
    const res = await fetch(`http://127.0.0.1:${monitorPort}/jsz`, { signal: AbortSignal.timeout(1_000) })
    return res.ok ? ((await res.json()) as Jsz) : undefined
  } catch {
    return undefined
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * A private three-node NATS cluster with JetStream (Debian's nats-server 2.9, as on the machines): each node has its
 * own client, cluster and monitoring port, store and `server_name` (`n0`…`n2`), and routes to all three, so a test
 * can SIGKILL a node (the stream leader, say), wipe its store while it is down, and start it again on the same
 * ports. Streams on it take `num_replicas` up to 3.
 */
export const natsCluster = async () => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startCluster()
    } catch (error) {
      // A port found free can be taken by another test before the node binds it, and the node exits: pick again.
      if (attempt >= 3 || !(error instanceof Error && error.message.endsWith(" exited"))) throw error
    }
  }
}

const startCluster = async () => {
  const root = mkdtempSync(join(tmpdir(), "nats-cluster-"))
  const nodes: Array<NodePorts> = []
  const taken = new Set<number>()
  const distinctPort = async () => {
    let port = await freePort()
    while (taken.has(port)) port = await freePort()
    taken.add(port)
    return port
  }
  for (let i = 0; i < NODES; i++) {
    nodes.push({
      name: `n${i}`,
      client: await distinctPort(),
      cluster: await distinctPort(),
      monitor: await distinctPort(),
      storeDir: join(root, `n${i}`, "store"),
      configFile: join(root, `n${i}.conf`)
    })
  }
  const routes = nodes.map((n) => `nats-route://127.0.0.1:${n.cluster}`).join(", ")
  for (const n of nodes) {
    writeFileSync(
      n.configFile,
      [
        `server_name: ${n.name}`,
        `listen: 127.0.0.1:${n.client}`,
        `http: 127.0.0.1:${n.monitor}`,
        `jetstream { store_dir: "${n.storeDir}" }`,
        `cluster { name: deposits-test, listen: 127.0.0.1:${n.cluster}, routes: [${routes}] }`,
        ""
      ].join("\n")
    )
  }
  const children = new Map<number, ChildProcess>()

  const running = (node: number) => {
    const child = children.get(node)
    return child !== undefined && child.exitCode === null && child.signalCode === null
  }

  /** Until the node answers on its monitoring port and names a metadata leader (it has joined the cluster). */
  const ready = async (node: number) => {
    const until = Date.now() + READY_WITHIN_MS
    while (Date.now() < until) {
      if (!running(node)) throw new Error(`nats-server ${nodes[node]!.name} exited`)
      const jsz = await jszOf(nodes[node]!.monitor)
      if (jsz?.meta_cluster?.leader) return
      await sleep(100)
    }
    throw new Error(`nats-server ${nodes[node]!.name} saw no JetStream metadata leader`)
  }

  const spawnNode = (node: number) => {
    const child = spawn(NATS_SERVER, ["-c", nodes[node]!.configFile], { stdio: "ignore" })
    children.set(node, child)
  }

  const kill = async (node: number) => {
    const child = children.get(node)
    if (child === undefined || !running(node)) return
    const exited = new Promise((resolve) => child.once("exit", resolve))
    child.kill("SIGKILL")
    await exited
  }

  const stopAll = async () => {
    for (let i = 0; i < NODES; i++) await kill(i)
    rmSync(root, { recursive: true, force: true })
  }

  try {
    for (let i = 0; i < NODES; i++) spawnNode(i)
    for (let i = 0; i < NODES; i++) await ready(i)
  } catch (error) {
    await stopAll()
    throw error
  }

  return {
    /** Every node's client URL, node 0 first. */
    urls: nodes.map((n) => `nats://127.0.0.1:${n.client}`),
    /** The nodes' `server_name`s, as JetStream names a stream's leader and replicas. */
    names: nodes.map((n) => n.name),
    /** The node with that `server_name`. */
    nodeNamed: (name: string) => {
      const i = nodes.findIndex((n) => n.name === name)
      if (i < 0) throw new Error(`no node named ${name}`)
      return i
    },
    running,
    /** SIGKILL: no flush, no goodbye to the cluster. */
    kill,
    /** Starts a stopped node again on its ports and store, once it has rejoined the cluster. */
    start: async (node: number) => {
      if (running(node)) return
      spawnNode(node)
      await ready(node)
    },
    /** Deletes a stopped node's store: it comes back knowing nothing and is caught up by the others. */
    wipe: (node: number) => {
      if (running(node)) throw new Error(`wipe ${nodes[node]!.name}: it is running`)
      rmSync(nodes[node]!.storeDir, { recursive: true, force: true })
    },
    stop: stopAll
  }
}

export type NatsCluster = Awaited<ReturnType<typeof natsCluster>>
