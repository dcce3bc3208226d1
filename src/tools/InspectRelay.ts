import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { WebSocket, WebSocketServer } from "ws"
import { depositRequestMachine } from "../../machines/DepositRequest"

/**
 * The relay behind `npm run inspect`, between the service (INSPECT_URL) and Stately's inspector page, on loopback
 * only. Stately's inspector draws an actor from the `definition` of its `@xstate.actor` event, and draws nothing for
 * events of an actor it was never shown: so a page is always sent each actor (with the machine's definition)
 * before anything else of it, whether it joins late, the actor's announcement fell out of the replay, or the
 * service restored the actor from the database and only stepped it.
 */

/** How many inspection events, and actors, a page that joins late is replayed. */
const KEPT = 500

/** The machine's definition as `@statelyai/inspect` sends it: the configuration, as JSON text. */
export const machineDefinitionText = () => JSON.stringify(depositRequestMachine.config)

type Inspection = { readonly type?: unknown; readonly sessionId?: unknown } & Record<string, unknown>

const isInspection = (v: unknown): v is Inspection => typeof v === "object" && v !== null && !Array.isArray(v)

/** The announcement Stately's inspector needs for an actor it has not been shown, from one of its events. */
const actorFor = (event: Inspection, definition: string): Inspection => ({
  type: "@xstate.actor",
  name: depositRequestMachine.id,
  sessionId: event.sessionId,
  rootId: event.rootId ?? event.sessionId,
  id: `${String(event.id ?? event.sessionId)}:actor`,
  createdAt: event.createdAt ?? String(Date.now()),
  _version: event._version,
  definition,
  ...(event.snapshot === undefined ? {} : { snapshot: event.snapshot })
})

export interface Relay {
  readonly port: number
  readonly close: () => Promise<void>
}

export const startRelay = (options: { readonly port: number }): Promise<Relay> => {
  const definition = machineDefinitionText()
  /** Each actor's announcement (with a definition), by session, oldest first. */
  const actors = new Map<string, string>()
  /** Everything else, oldest first. */
  const recent: Array<string> = []
  const server: Server = createServer((_req, res) => {
    const port = (server.address() as AddressInfo).port
    res.writeHead(200, { "content-type": "text/plain; charset=utf-8" })
    res.end(`Stately inspector relay. Open https://stately.ai/inspect?server=ws://127.0.0.1:${port}\n`)
  })
  const wss = new WebSocketServer({ server })
  const send = (from: WebSocket, message: string) => {
    for (const client of wss.clients)
      if (client !== from && client.readyState === WebSocket.OPEN) client.send(message)
  }
  const remember = (session: string, message: string) => {
    actors.delete(session)
    actors.set(session, message)
    if (actors.size > KEPT) actors.delete(actors.keys().next().value as string)
  }
  /** One inspection event: an actor kept (given the definition if it came without), another kept after its actor. */
  const relay = (from: WebSocket, event: Inspection, raw: string | undefined) => {
    const session = typeof event.sessionId === "string" ? event.sessionId : undefined
    if (event.type === "@xstate.actor" && session !== undefined) {
      const message =
        typeof event.definition === "string" && raw !== undefined
          ? raw
          : JSON.stringify({ ...event, definition })
      remember(session, message)
      send(from, message)
      return
    }
    if (session !== undefined && typeof event.type === "string" && event.type.startsWith("@xstate.")) {
      if (!actors.has(session)) {
        const announced = JSON.stringify(actorFor(event, definition))
        remember(session, announced)
        send(from, announced)
      }
    }
    const message = raw ?? JSON.stringify(event)
    recent.push(message)
    if (recent.length > KEPT) recent.shift()
    send(from, message)
  }
  wss.on("connection", (socket) => {
    for (const message of actors.values()) socket.send(message)
    for (const message of recent) socket.send(message)
    socket.on("message", (data) => {
      const text = data.toString()
      let parsed: unknown
      try {
        parsed = JSON.parse(text)
      } catch {
        // Not an inspection event: passed on as it came.
        send(socket, text)
        return
      }
      if (Array.isArray(parsed)) for (const e of parsed) if (isInspection(e)) relay(socket, e, undefined)
      if (isInspection(parsed)) relay(socket, parsed, text)
    })
  })
  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port, "127.0.0.1", () =>
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((done) => {
            for (const client of wss.clients) client.terminate()
            wss.close()
            server.close(() => done())
          })
      })
    )
  })
}
