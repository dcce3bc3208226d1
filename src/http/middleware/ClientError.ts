import type { Server } from "node:http"
import type { Duplex } from "node:stream"
import { newUuid7 } from "../../../services/platform/Ids"
import {
  type ApiError,
  InvalidRequest,
  PayloadTooLarge,
  RequestHeadersTooLarge,
  RequestTimeout,
  statusOf
} from "../Errors"
import { NO_SNIFF, NO_STORE } from "./AnswerPolicy"
import { errorBody } from "./ErrorBody"

const reasons: Record<number, string> = {
  400: "Bad Request",
  408: "Request Timeout",
  413: "Payload Too Large",
  431: "Request Header Fields Too Large"
}

const refusalFor = (code: string | undefined): ApiError => {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return new RequestHeadersTooLarge({
        message: "The request's headers are larger than the server reads (16 KiB in all)."
      })
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return new PayloadTooLarge({ message: "The body's chunk extensions are too large." })
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return new RequestTimeout({ message: "The request did not arrive in time." })
    default:
      return new InvalidRequest({ message: "The request is not valid HTTP/1.1.", param: "request" })
  }
}

/**
 * Requests Node's parser refuses never reach the framework; Node would answer them with a bare status line. They
 * get the error envelope and an `X-Request-Id` like every other answer (a fresh one: the headers were not read),
 * then the connection is closed, as the parser cannot find the next request on it. `base` starts the `doc_url`.
 */
export const answerClientErrors = (server: Server, base: string): Server =>
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    // As Node's own handler: nothing to answer on a reset or closed socket, or after an answer has begun.
    const answering = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage
    if (error.code === "ECONNRESET" || !socket.writable || answering?.headersSent === true) {
      socket.destroy()
      return
    }
    const refusal = refusalFor(error.code)
    const requestId = newUuid7()
    const status = statusOf(refusal)
    const body = JSON.stringify(errorBody(refusal, requestId, base))
    socket.end(
      `HTTP/1.1 ${status} ${reasons[status] ?? "Error"}\r\ncontent-type: application/json\r\n` +
        `cache-control: ${NO_STORE}\r\nx-content-type-options: ${NO_SNIFF}\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`
    )
  })
