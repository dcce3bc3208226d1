import { type ChildProcess, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { createServer } from "node:net"

/**
 * The node flags `npm start` gives the service (read from package.json), so a test or bench that measures a spawned
 * service's memory runs it as it is deployed.
 */
export const serviceNodeFlags = (): ReadonlyArray<string> => {
  const packageJson = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    scripts: { start: string }
  }
  return packageJson.scripts.start.split(/\s+/).filter((token) => token.startsWith("--"))
}

/** A free TCP port on loopback, chosen by the kernel. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })

export interface ServiceProcess {
  readonly baseUrl: string
  readonly child: ChildProcess
  readonly output: () => string
  readonly stop: (signal?: NodeJS.Signals) => Promise<void>
}

/** How long a stopped service may take to exit (a graceful shutdown takes well under a second here). */
const STOP_WITHIN_MS = 30_000

/** `npm start` as a real child process (tsx src/app/main.ts), waiting until its health route answers. */
export const spawnService = async (
  env: Record<string, string>,
  timeoutMs = 60_000,
  /** Node's arguments: the TypeScript entry through tsx (`npm start`), or a compiled one. */
  entry: ReadonlyArray<string> = ["--import", "tsx", "src/app/main.ts"],
  /** The health status that means started: 200, or 503 for an instance expected to start unready. */
  startedWith = 200,
  /** Where the process runs: this checkout, or an earlier release's build (see test/chaos/Release.ts). */
  cwd?: string
): Promise<ServiceProcess> => {
  const port = env.PORT ? Number(env.PORT) : await freePort()
  const child = spawn(process.execPath, [...entry], {
    env: { ...process.env, ...env, PORT: String(port) },
    ...(cwd === undefined ? {} : { cwd }),
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout?.on("data", (d) => {
    output += d
  })
  child.stderr?.on("data", (d) => {
    output += d
  })
  // What the service prints and links to on its defaults (`localhost`, as a browser on this machine reaches it).
  const baseUrl = env.PUBLIC_BASE_URL?.replace(/\/+$/, "") || `http://localhost:${port}`
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  /** Signals the child and waits for its exit; one that outlives `STOP_WITHIN_MS` is killed and fails the test
   * with what it printed, rather than holding it until its timeout with nothing to show. */
  const stop = async (signal: NodeJS.Signals = "SIGTERM") => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal)
    let late: ReturnType<typeof setTimeout> | undefined
    const outlived = await Promise.race([
      exited.then(() => false),
      new Promise<boolean>((resolve) => {
        late = setTimeout(() => resolve(true), STOP_WITHIN_MS)
      })
    ])
    clearTimeout(late)
    if (!outlived) return
    child.kill("SIGKILL")
    await exited
    throw new Error(
      `the service did not stop within ${STOP_WITHIN_MS} ms of ${signal}:\n${output.slice(-8_000)}`
    )
  }
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`service exited early:\n${output}`)
    try {
      const res = await fetch(`${baseUrl}/v1/health`)
      if (res.status === startedWith) return { baseUrl, child, output: () => output, stop }
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  await stop("SIGKILL")
  throw new Error(`service did not become healthy in ${timeoutMs} ms:\n${output}`)
}

/** The environment of a service process that works a local chain: the machine's NATS, the node, its token. */
export const chainServiceEnv = (options: {
  readonly databaseUrl: string
  readonly rpcUrl: string
  readonly token: string
  readonly dataDir: string
}): Record<string, string> => ({
  DATABASE_URL: options.databaseUrl,
  NATS_URL: "nats://127.0.0.1:4222",
  CHAIN_RPC_URL: options.rpcUrl,
  TOKEN_ADDRESS: options.token,
  DATA_DIR: options.dataDir,
  RATE_LIMIT_CAPACITY: "10000"
})

/** This process's environment without the named settings: a spawned service or CLI then uses its own defaults. */
export const environmentWithout = (settings: ReadonlyArray<string>): Record<string, string> =>
  Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined && !settings.includes(entry[0])
    )
  )
