/**
 * A local EVM node: anvil from the npm package `@foundry-rs/anvil`, spawned as a child on 127.0.0.1.
 * Used as the embedded chain of `npm start` and by the tests (one node per test worker).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { createServer } from "node:net"
import { type Chain, defineChain } from "viem"
import { type HDAccount, mnemonicToAccount } from "viem/accounts"

/** Anvil's own default mnemonic; its first accounts hold 10,000 ETH each on every fresh node. */
export const ANVIL_DEFAULT_MNEMONIC = "test test test test test test test test test test test junk"

/** The sandbox chain id (the spec's test network). */
export const DEFAULT_CHAIN_ID = 10143

/** States kept in memory; without a bound anvil writes every historical state under $HOME and leaves it there. */
export const DEFAULT_PRUNE_HISTORY = 300

export interface AnvilOptions {
  /** 0 or absent: a free port chosen here. A fixed port that is taken fails the start. */
  readonly port?: number
  /** Default 10143. */
  readonly chainId?: number
  /** Seconds between blocks (fractions allowed); absent = automine, one block per transaction. */
  readonly blockTime?: number
  /** With `blockTime`: mine each transaction at once and also on the interval. */
  readonly mixedMining?: boolean
  /** Finality lag: safe = latest − S, finalized = latest − 2S. Needs `blockTime` to ever catch up. */
  readonly slotsInAnEpoch?: number
  /** Load the chain from this file if it exists and dump it there on exit (`--state`). */
  readonly stateFile?: string
  /** With `stateFile`: also dump every N seconds, so a SIGKILL loses at most N seconds of chain. */
  readonly stateIntervalSeconds?: number
  /** States kept in memory (`--prune-history N`); default 300; `false` keeps anvil's on-disk history. */
  readonly pruneHistory?: number | false
  /** Dev-account mnemonic (default: anvil's). Passed on the command line: dev chains only. */
  readonly mnemonic?: string
  /** Number of funded dev accounts (default 10). */
  readonly accounts?: number
  /** ETH per dev account (default 10,000). */
  readonly balanceEth?: number
  /** Any further anvil flags. */
  readonly extraArgs?: ReadonlyArray<string>
  /** Give up waiting for readiness after this long (default 15 s; loading a large state file takes a while). */
  readonly readyTimeoutMs?: number
  /**
   * Default true: SIGINT/SIGTERM/SIGHUP stop the node and, when nothing else listens, end this process. False when
   * the caller stops the node itself on shutdown (an Effect scope under `NodeRuntime.runMain`, whose own signal
   * handler removes itself and would otherwise look absent); the stop-on-exit hook stays either way.
   */
  readonly handleSignals?: boolean
  /** Receives anvil's stdout and stderr; by default they are kept only for error messages. */
  readonly onOutput?: (chunk: string) => void
}

export interface AnvilHandle {
  readonly rpcUrl: string
  readonly port: number
  readonly chainId: number
  /** SIGTERM (anvil then writes its state file), SIGKILL after a grace period; idempotent. */
  readonly stop: () => Promise<void>
  /** Settles when the node exits, for whatever reason. */
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
  readonly process: ChildProcess
}

export class AnvilStartError extends Error {
  override readonly name = "AnvilStartError"
  constructor(
    message: string,
    readonly output: string
  ) {
    super(output.trim() === "" ? message : `${message}\n--- anvil output (tail) ---\n${output.trim()}`)
  }
}

const require = createRequire(import.meta.url)

const platformPackages: Record<string, Record<string, string>> = {
  linux: { x64: "@foundry-rs/anvil-linux-amd64", arm64: "@foundry-rs/anvil-linux-arm64" },
  darwin: { x64: "@foundry-rs/anvil-darwin-amd64", arm64: "@foundry-rs/anvil-darwin-arm64" },
  win32: { x64: "@foundry-rs/anvil-win32-amd64" }
}

/** The binary shipped by the platform package that `@foundry-rs/anvil` installs as an optional dependency. */
export const anvilBinaryPath = (): string => {
  const pkg = platformPackages[process.platform]?.[process.arch]
  if (pkg === undefined)
    throw new Error(`@foundry-rs/anvil has no build for ${process.platform}/${process.arch}`)
  const binary = `${pkg}/bin/anvil${process.platform === "win32" ? ".exe" : ""}`
  try {
    const resolved = require.resolve(binary)
    if (existsSync(resolved)) return resolved
  } catch {
    // reported below
  }
  throw new Error(`${binary} is not installed (optional dependencies skipped, or a musl system?)`)
}

/** A port that was free a moment ago; anvil may still lose it to another process, which `startAnvil` retries. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() =>
        typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))
      )
    })
  })

export const anvilArgs = (port: number, options: AnvilOptions): Array<string> => {
  const args = [
    "--host",
    "127.0.0.1",
    "--port",
    String(port),
    "--chain-id",
    String(options.chainId ?? DEFAULT_CHAIN_ID)
  ]
  if (options.blockTime !== undefined) args.push("--block-time", String(options.blockTime))
  if (options.mixedMining === true) {
    if (options.blockTime === undefined) throw new Error("mixedMining needs a blockTime")
    args.push("--mixed-mining")
  }
  if (options.slotsInAnEpoch !== undefined) args.push("--slots-in-an-epoch", String(options.slotsInAnEpoch))
  if (options.stateFile !== undefined) args.push("--state", options.stateFile)
  if (options.stateIntervalSeconds !== undefined) {
    if (options.stateFile === undefined) throw new Error("stateIntervalSeconds needs a stateFile")
    args.push("--state-interval", String(options.stateIntervalSeconds))
  }
  const prune = options.pruneHistory ?? DEFAULT_PRUNE_HISTORY
  if (prune !== false) args.push("--prune-history", String(prune))
  if (options.mnemonic !== undefined) args.push("--mnemonic", options.mnemonic)
  if (options.accounts !== undefined) args.push("--accounts", String(options.accounts))
  if (options.balanceEth !== undefined) args.push("--balance", String(options.balanceEth))
  args.push(...(options.extraArgs ?? []))
  return args
}

const SETPRIV = "/usr/bin/setpriv"

/**
 * On Linux the node is told to stop (SIGTERM, so it still writes its state) when the process that started it dies,
 * even by SIGKILL, which runs no exit hook. Otherwise an orphaned node went on serving the old port and writing the
 * same state file as the node its restarted parent starts. `setpriv` (util-linux) sets that and execs anvil, so the
 * child's pid is anvil's own. Elsewhere the exit and signal hooks below are all there is.
 */
const withParentDeathSignal = (
  binary: string,
  args: ReadonlyArray<string>
): readonly [string, ReadonlyArray<string>] =>
  process.platform === "linux" && existsSync(SETPRIV)
    ? [SETPRIV, ["--pdeathsig", "SIGTERM", "--", binary, ...args]]
    : [binary, args]

/**
 * Starts anvil and resolves once it is ours that answers: anvil printed that it listens on the port (so it bound
 * it; a node that finds the port taken exits instead) and `eth_chainId` returns the expected id.
 */
export const startAnvil = async (options: AnvilOptions = {}): Promise<AnvilHandle> => {
  const fixedPort = options.port !== undefined && options.port !== 0
  // A chosen port can be taken between the probe and anvil's bind; only then is a retry right.
  for (let attempt = 1; ; attempt++) {
    const port = fixedPort ? options.port! : await freePort()
    try {
      return await launch(port, options)
    } catch (error) {
      const portLost = error instanceof AnvilStartError && /address already in use/i.test(error.output)
      if (fixedPort || !portLost || attempt >= 3) throw error
    }
  }
}

const launch = (port: number, options: AnvilOptions): Promise<AnvilHandle> => {
  const chainId = options.chainId ?? DEFAULT_CHAIN_ID
  const rpcUrl = `http://127.0.0.1:${port}`
  const [command, args] = withParentDeathSignal(anvilBinaryPath(), anvilArgs(port, options))
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] })
  track(child, options.handleSignals ?? true)
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => {
      running.delete(child)
      resolve({ code, signal })
    })
  )
  let tail = ""
  let listening = false
  const onChunk = (chunk: Buffer) => {
    const text = chunk.toString("utf8")
    options.onOutput?.(text)
    // Kept short: anvil logs every RPC method name, and only the last lines explain a failure.
    tail = (tail + text).slice(-4096)
    if (!listening && tail.includes(`Listening on 127.0.0.1:${port}`)) listening = true
  }
  child.stdout.on("data", onChunk)
  child.stderr.on("data", onChunk)

  let stopping: Promise<void> | undefined
  const stop = () => {
    stopping ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill("SIGTERM")
      const grace = setTimeout(() => child.kill("SIGKILL"), 10_000)
      grace.unref()
      await exited
      clearTimeout(grace)
    })()
    return stopping
  }

  return new Promise<AnvilHandle>((resolve, reject) => {
    let settled = false
    const fail = (message: string) => {
      if (settled) return
      settled = true
      clearTimeout(deadline)
      void stop()
      reject(new AnvilStartError(message, tail))
    }
    const deadline = setTimeout(
      () => fail(`anvil on port ${port} was not ready within ${options.readyTimeoutMs ?? 15_000} ms`),
      options.readyTimeoutMs ?? 15_000
    )
    child.once("error", (error) => fail(`cannot run anvil: ${error.message}`))
    void exited.then(({ code, signal }) =>
      fail(`anvil exited (${signal ?? `code ${code}`}) before it was ready on port ${port}`)
    )
    const probe = async (): Promise<void> => {
      while (!settled) {
        if (listening) {
          const answered = await rpcChainId(rpcUrl)
          if (answered !== undefined) {
            if (answered !== chainId)
              return fail(`the node on port ${port} reports chain ${answered}, not ${chainId}`)
            settled = true
            clearTimeout(deadline)
            return resolve({ rpcUrl, port, chainId, stop, exited, process: child })
          }
        }
        await new Promise((r) => setTimeout(r, 20))
      }
    }
    void probe()
  })
}

const rpcChainId = async (rpcUrl: string): Promise<number | undefined> => {
  try {
    const response = await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      signal: AbortSignal.timeout(1_000)
    })
    const body = (await response.json()) as { result?: string }
    return body.result === undefined ? undefined : Number(body.result)
  } catch {
    return undefined
  }
}

// Every live child, so that the parent's exit or a signal takes them down too. A SIGKILLed parent cannot do this;
// its orphan keeps the port until killed.
const running = new Set<ChildProcess>()
let exitHookInstalled = false
let signalHooksInstalled = false

// SIGTERM rather than SIGKILL so that a node with a state file still writes it.
const terminateAll = () => {
  for (const c of running) c.kill("SIGTERM")
}

const track = (child: ChildProcess, handleSignals: boolean) => {
  running.add(child)
  if (!exitHookInstalled) {
    exitHookInstalled = true
    process.on("exit", terminateAll)
  }
  if (!handleSignals || signalHooksInstalled) return
  signalHooksInstalled = true
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    const handler = () => {
      terminateAll()
      // Alone, our handler would swallow the signal: restore the default and re-raise it.
      if (process.listenerCount(signal) === 1) {
        process.off(signal, handler)
        process.kill(process.pid, signal)
      }
    }
    process.on(signal, handler)
  }
}

/** A viem chain for a local node. */
export const anvilChain = (node: { readonly chainId: number; readonly rpcUrl: string }): Chain =>
  defineChain({
    id: node.chainId,
    name: `Local anvil (${node.chainId})`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [node.rpcUrl] } },
    testnet: true
  })

const devAccounts = new Map<string, HDAccount>()

/**
 * Anvil's funded dev account `index` (`m/44'/60'/0'/0/index` of the mnemonic). By our convention account 0
 * holds every USDC role (owner, minter, pauser, blacklister: the sandbox faucet), account 1 is the
 * treasury that pays gas and account 19 (past the funded ten, so never a payer) is the USDC proxy's admin, which
 * cannot call the token through the proxy. Remembered:
 * deriving the BIP-39 seed is deliberately slow.
 */
export const anvilDevAccount = (index: number, mnemonic: string = ANVIL_DEFAULT_MNEMONIC): HDAccount => {
  const key = `${index}/${mnemonic}`
  let account = devAccounts.get(key)
  if (account === undefined) {
    account = mnemonicToAccount(mnemonic, { addressIndex: index })
    devAccounts.set(key, account)
  }
  return account
}

export const DEV_ACCOUNT = { faucetOwner: 0, treasury: 1, proxyAdmin: 19 } as const
