/**
 * Baseline for the long-poll bench: a bare `node:http` server that holds every request until `release` arrives
 * on stdin, then answers each with a small JSON body. Answers `mem` like the service target.
 */
import { createServer, type ServerResponse } from "node:http"
import { createInterface } from "node:readline"

const held: Array<ServerResponse> = []
const server = createServer((_req, res) => {
  held.push(res)
})
server.maxConnections = 30_000
server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("expected a TCP address")
  process.stdout.write(`READY ${address.port}\n`)
})
const gc = (globalThis as { gc?: () => void }).gc
createInterface({ input: process.stdin }).on("line", (line) => {
  if (line.trim() === "mem") {
    gc?.()
    const m = process.memoryUsage()
    process.stdout.write(`MEM ${m.heapUsed} ${m.rss}\n`)
  }
  if (line.trim() === "release") for (const res of held.splice(0)) res.end('{"status":"changed"}')
})
process.once("SIGTERM", () => process.exit(0))
