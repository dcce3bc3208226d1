import { createServer } from "node:http"
import { WebSocket, WebSocketServer } from "ws"

/**
 * `npm run inspect`: a relay on 127.0.0.1 between the service (INSPECT_URL) and Stately's inspector page. Unlike
 * @statelyai/inspect's own server it binds loopback only, and it replays recent events to a page that joins late.
 */
const port = Number(process.env.INSPECT_PORT ?? 4242)
const recent: Array<string> = []
const server = createServer((_req, res) => {
  res.writeHead(200, { "content-type": "text/plain; charset=utf-8" })
  res.end(`Stately inspector relay. Open https://stately.ai/inspect?server=ws://127.0.0.1:${port}\n`)
})
const wss = new WebSocketServer({ server })
wss.on("connection", (socket) => {
  for (const message of recent) socket.send(message)
  socket.on("message", (data) => {
    const message = data.toString()
    recent.push(message)
    if (recent.length > 500) recent.shift()
    for (const client of wss.clients) {
      if (client !== socket && client.readyState === WebSocket.OPEN) client.send(message)
    }
  })
})
server.listen(port, "127.0.0.1", () => {
  process.stdout.write(
    [
      `Inspector relay on ws://127.0.0.1:${port} (loopback only).`,
      `1. Start the service with INSPECT_URL=ws://127.0.0.1:${port} npm start`,
      `2. Open https://stately.ai/inspect?server=ws://127.0.0.1:${port} in a browser on this machine`,
      ""
    ].join("\n")
  )
})
