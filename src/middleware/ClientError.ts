import type { Server } from "node:http"
import type { Duplex } from "node:stream"
import { type ApiError, InvalidRequest, RequestHeadersTooLarge, statusOf } from "../api/Errors"
import { newUuid7 } from "../../services/Ids"
import { errorBody } from "./ErrorEnvelope"

const reasons: Record<number, string> = { 400: "Bad Request", 431: "Request Header Fields Too Large" }

/**
 * Requests Node's parser refuses never reach the framework; Node would answer them with a bare status line. They
 * get the error envelope and an `X-Request-Id` like every other answer, and the connection is closed (the parser
 * cannot find the next request on it).
 */
export const answerClientErrors = (server: Server): Server =>
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === "ECONNRESET" || !socket.writable) {
      socket.destroy()
      return
    }
    const refusal: ApiError =
      error.code === "HPE_HEADER_OVERFLOW"
        ? new RequestHeadersTooLarge({
            message: "The request's headers are larger than the server reads (16 KiB in all)."
          })
        : new InvalidRequest({ message: "The request is not valid HTTP/1.1.", param: "request" })
    const requestId = newUuid7()
    const status = statusOf[refusal._tag]
    const body = JSON.stringify(errorBody(refusal, requestId))
    socket.end(
      `HTTP/1.1 ${status} ${reasons[status] ?? "Error"}\r\ncontent-type: application/json\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`
    )
  })
