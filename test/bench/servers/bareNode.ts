/** Bench target: a bare `node:http` server answering every request with a small JSON 200. Prints `PORT <n>`. */
import { createServer } from "node:http"

const body = JSON.stringify({ status: "ok" })

const server = createServer((_request, response) => {
  response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
  response.end(body)
})

server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("expected a TCP address")
  process.stdout.write(`PORT ${address.port}\n`)
})

const stop = () => server.close(() => process.exit(0))
process.once("SIGTERM", stop)
process.once("SIGINT", stop)
