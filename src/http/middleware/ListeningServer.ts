import { Context } from "effect"
import type { Server } from "node:http"
import type { Socket } from "node:net"
import { newUuid7 } from "../../../services/platform/Ids"
import { headersOf, ServiceUnavailable, statusOf } from "../Errors"
import { NO_SNIFF, NO_STORE } from "./AnswerPolicy"
import { errorBody } from "./ErrorBody"

/**
 * The Node server as far as a shutdown needs it: stop taking connections at once. The long polls' registry calls
 * it as it closes; the server also does so itself the moment the framework removes its handler, whichever comes
 * first (see `shutdownAware`).
 */
export class ListeningServer extends Context.Tag("deposits/ListeningServer")<
  ListeningServer,
  { readonly stopAccepting: () => void }
>() {}

/** While the close waits, how often connections left idle by answers finished since are closed. */
const IDLE_SWEEP_MS = 50

/**
 * How long the close waits for answers under way before it ends every connection left. Parked polls are answered
 * before the close begins, so an answer still unfinished past it is stuck, and would hold the close for good.
 */
export const CLOSE_GRACE_MS = 10_000

const shuttingDown = new ServiceUnavailable({ message: "The service is shutting down; try again shortly." })

/**
 * The server's side of a shutdown, so nothing can hold its close:
 * - `stopAccepting` (called by the long polls' registry as it closes, and at the latest when the framework removes
 *   its request handler) refuses new connections and closes idle ones; until the close completes, connections that
 *   fall idle later (an answer begun before the close, sent with keep-alive) are closed too, within
 *   `IDLE_SWEEP_MS`, instead of lingering for the keep-alive timeout, and so are connections that never sent a
 *   request; after `CLOSE_GRACE_MS` every connection still open is ended, so a stuck answer cannot hold the close;
 * - every answer begun after the close says `Connection: close`;
 * - a request that arrives once no handler is left (on a kept-alive connection, in the moment before it is swept)
 *   is answered `503 service_unavailable` with `Connection: close`. Unanswered, it would hold the close for good: a
 *   browser whose poll was answered just before the close polls again at once on the same connection.
 *
 * This listener is registered before the framework's, so on each request it runs first and sees whether a
 * handler is still there. The answers under way (parked polls among them) are still awaited by `closed`. `base`
 * starts the 503's `doc_url`.
 */
export const shutdownAware = (server: Server, base: string, closeGraceMs = CLOSE_GRACE_MS) => {
  // Connections that have not sent a request yet (a client's spare connection): Node's own idle list leaves them
  // out, so one would hold the close until its headers time out. Once a connection has sent one, Node tracks it.
  const silent = new Set<Socket>()
  server.on("connection", (socket: Socket) => {
    silent.add(socket)
    socket.once("close", () => silent.delete(socket))
  })
  server.on("request", (request, response) => {
    silent.delete(request.socket)
    if (server.listening) return
    response.shouldKeepAlive = false
    if (server.listenerCount("request") > 1) return
    const body = JSON.stringify(errorBody(shuttingDown, newUuid7(), base))
    response.writeHead(statusOf(shuttingDown), {
      ...headersOf(shuttingDown),
      "content-type": "application/json",
      "cache-control": NO_STORE,
      "x-content-type-options": NO_SNIFF,
      "content-length": Buffer.byteLength(body)
    })
    response.end(body)
  })
  const closeQuiet = () => {
    server.closeIdleConnections()
    for (const socket of silent) socket.destroy()
  }
  let closed: Promise<void> | undefined
  const stopAccepting = () => {
    if (server.listening) {
      // Unreferenced: the close it speeds up is what keeps the process alive, not the sweep.
      const sweep = setInterval(closeQuiet, IDLE_SWEEP_MS).unref()
      const cutOff = setTimeout(() => server.closeAllConnections(), closeGraceMs).unref()
      closed = new Promise((resolve) =>
        server.close(() => {
          clearInterval(sweep)
          clearTimeout(cutOff)
          resolve()
        })
      )
    }
    closeQuiet()
  }
  server.on("removeListener", (event) => {
    if (event === "request" && server.listenerCount("request") === 1) stopAccepting()
  })
  return { server, stopAccepting, closed: () => closed ?? Promise.resolve() }
}
