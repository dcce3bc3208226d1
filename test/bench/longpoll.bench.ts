import { type ChildProcess, spawn } from "node:child_process"
import { Agent, request } from "node:http"
import { fileURLToPath } from "node:url"
import { recordFigure, serviceNodeFlags } from "./harness"

/**
 * Issue 5: 10,000 concurrent long polls (`wait_for=change`) held on one service instance, beside a bare node:http
 * server holding the same 10,000 requests. Prints heap and RSS per held request for both, and the time from a
 * change (PATCH sent) to each woken poll's answer. Targets: ≤ 3× the bare holder's memory per waiter, p99 < 100 ms.
 */
const WAITERS = Number(process.env.BENCH_WAITERS ?? 10_000)
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1000)
const here = fileURLToPath(new URL(".", import.meta.url))

interface Target {
  readonly child: ChildProcess
  readonly lines: AsyncIterator<string>
  readonly next: (prefix: string) => Promise<string>
}

const startTarget = (
  script: string,
  env: Record<string, string> = {},
  nodeArgs: ReadonlyArray<string> = []
): Target => {
  const child = spawn(process.execPath, ["--expose-gc", ...nodeArgs, "--import", "tsx", `${here}${script}`], {
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "inherit"]
  })
  let buffer = ""
  const waiting: Array<{ prefix: string; resolve: (line: string) => void }> = []
  child.stdout?.on("data", (d: Buffer) => {
    buffer += d.toString()
    let nl = buffer.indexOf("\n")
    while (nl !== -1) {
      const line = buffer.slice(0, nl)
      buffer = buffer.slice(nl + 1)
      const at = waiting.findIndex((w) => line.startsWith(w.prefix))
      if (at !== -1) waiting.splice(at, 1)[0]?.resolve(line)
      nl = buffer.indexOf("\n")
    }
  })
  return {
    child,
    lines: [][Symbol.iterator]() as unknown as AsyncIterator<string>,
    next: (prefix) => new Promise((resolve) => waiting.push({ prefix, resolve }))
  }
}

const memory = async (t: Target) => {
  const line = t.next("MEM ")
  t.child.stdin?.write("mem\n")
  const [, heap, rss, waiting] = (await line).split(" ")
  return { heap: Number(heap), rss: Number(rss), waiting: Number(waiting ?? 0) }
}

const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY })

/** Opens a request and resolves with the time its answer arrived. */
const hold = (port: number, path: string, headers: Record<string, string>) =>
  new Promise<number>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers, agent }, (res) => {
      res.resume()
      res.on("end", () => resolve(performance.now()))
    })
    req.on("error", (error) => reject(new Error(`request to port ${port} failed: ${error.message}`)))
    req.end()
  })

/**
 * Opens the requests in waves of 500, 50 ms apart: ten thousand connects at once overflow the listen backlog and
 * some are reset by the kernel before either server sees them, which measures the machine, not the server.
 */
const openInWaves = async <A>(count: number, open: (i: number) => Promise<A>) => {
  const all: Array<Promise<A>> = []
  for (let i = 0; i < count; i++) {
    if (i > 0 && i % 500 === 0) await new Promise((r) => setTimeout(r, 50))
    all.push(open(i))
  }
  return all
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`
const pct = (xs: Array<number>, q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))] ?? 0

export async function run() {
  process.stdout.write(
    `\n== longpoll: ${WAITERS} held requests (service: ${REQUESTS} requests × ${WAITERS / REQUESTS} waiters)\n`
  )

  // Baseline: bare node:http holding the same number of requests.
  const bare = startTarget("servers/bareHolder.ts")
  const barePort = Number((await bare.next("READY ")).split(" ")[1])
  await new Promise((r) => setTimeout(r, 500))
  const bareIdle = await memory(bare)
  let bareDone = 0
  const bareAnswers = await openInWaves(WAITERS, () =>
    hold(barePort, "/", {}).then((t) => {
      bareDone++
      return t
    })
  )
  await new Promise((r) => setTimeout(r, 3000))
  const bareHeld = await memory(bare)
  bare.child.stdin?.write("release\n")
  await Promise.all(bareAnswers)
  bare.child.kill("SIGTERM")

  // The service as `npm start` runs it; the bare holder with Node's defaults.
  const svc = startTarget(
    "servers/longPollService.ts",
    { BENCH_REQUESTS: String(REQUESTS) },
    serviceNodeFlags()
  )
  const [, portText, apiKey, idList] = (await svc.next("READY ")).split(" ")
  const port = Number(portText)
  const ids = (idList ?? "").split(",")
  const auth = { authorization: `Bearer ${apiKey}` }
  await new Promise((r) => setTimeout(r, 500))
  const svcIdle = await memory(svc)
  let opened = 0
  const answers = await openInWaves(WAITERS, (i) => {
    const id = ids[i % ids.length]!
    opened++
    return hold(port, `/v1/deposit-requests/${id}?wait_for=change&version=1&timeout=30`, auth).then((t) => ({
      id,
      t
    }))
  })
  // Measure once every poll is parked (or after 20 s), so no first read is still in flight.
  const openedAt = performance.now()
  const waitingNow = async () => {
    const line = svc.next("WAITING ")
    svc.child.stdin?.write("waiting\n")
    return Number((await line).split(" ")[1])
  }
  while ((await waitingNow()) < WAITERS && performance.now() - openedAt < 20_000) {
    await new Promise((r) => setTimeout(r, 100))
  }
  const parkedAfterMs = performance.now() - openedAt
  const svcHeld = await memory(svc)

  // Change every request, one after another so the changes do not queue behind each other; each PATCH's answer
  // (the commit is done by then) is the reference for its waiters. A waiter answered before the PATCH's own answer
  // arrived counts as 0 ms.
  const committedAt = new Map<string, number>()
  for (const id of ids) {
    await new Promise<void>((resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.1",
          port,
          path: `/v1/deposit-requests/${id}`,
          method: "PATCH",
          headers: { ...auth, "content-type": "application/json" },
          agent
        },
        (res) => {
          res.resume()
          res.on("end", () => {
            committedAt.set(id, performance.now())
            resolve()
          })
        }
      )
      req.on("error", reject)
      req.end(JSON.stringify({ heading: "changed" }))
    })
  }
  const done = await Promise.all(answers)
  const latencies = done.map(({ id, t }) => Math.max(0, t - (committedAt.get(id) ?? t)))
  svc.child.kill("SIGTERM")
  await new Promise((r) => svc.child.once("exit", r))

  const perBare = {
    heap: (bareHeld.heap - bareIdle.heap) / WAITERS,
    rss: (bareHeld.rss - bareIdle.rss) / WAITERS
  }
  const perSvc = { heap: (svcHeld.heap - svcIdle.heap) / WAITERS, rss: (svcHeld.rss - svcIdle.rss) / WAITERS }
  process.stdout.write(
    [
      `bare node:http holder: ${kib(perBare.heap)} heap, ${kib(perBare.rss)} RSS per held request (${bareDone} answered)`,
      `service long polls:    ${kib(perSvc.heap)} heap, ${kib(perSvc.rss)} RSS per waiter (${opened} opened, ${svcHeld.waiting} parked after ${(parkedAfterMs / 1000).toFixed(1)} s, ${done.length} answered)`,
      `ratio service/bare: heap ${(perSvc.heap / perBare.heap).toFixed(2)}x, RSS ${(perSvc.rss / perBare.rss).toFixed(2)}x (target ≤ 3x)`,
      `commit → answer: p50 ${pct(latencies, 0.5).toFixed(1)} ms, p99 ${pct(latencies, 0.99).toFixed(1)} ms (target p99 < 100 ms)`,
      ""
    ].join("\n")
  )
  for (const kind of ["heap", "rss"] as const) {
    recordFigure({
      figure: `${kind === "heap" ? "heap" : "RSS"} per held long poll (${opened} opened)`,
      value: perSvc[kind] / 1024,
      unit: "KiB",
      target: "≤ 3× baseline",
      met: perSvc[kind] / perBare[kind] <= 3,
      baseline: { name: "bare node:http holder", value: perBare[kind] / 1024, unit: "KiB" }
    })
  }
  recordFigure({
    figure: "commit → long poll answered, p99",
    value: pct(latencies, 0.99),
    unit: "ms",
    target: "< 100 ms",
    met: pct(latencies, 0.99) < 100
  })
}
