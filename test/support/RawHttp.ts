import { request } from "node:http"
import { connect } from "node:net"

export interface RawAnswer {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly text: string
  /** The parsed body, or undefined when it is not JSON. */
  readonly json:
    | { error?: { code: string; message: string; param?: string }; request_id?: string }
    | undefined
}

/**
 * One request over a fresh connection with nothing added by a client library (no default content type, headers as
 * given, any path bytes), failing when no answer comes within `timeoutMs`: a request left unanswered is a defect.
 */
export const rawRequest = (
  baseUrl: string,
  options: {
    readonly method: string
    readonly path: string
    readonly headers?: Record<string, string>
    readonly body?: string | Buffer
    readonly timeoutMs?: number
  }
): Promise<RawAnswer> =>
  new Promise((resolve, reject) => {
    const url = new URL(baseUrl)
    const timeoutMs = options.timeoutMs ?? 3_000
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method: options.method,
        path: options.path,
        headers: {
          connection: "close",
          ...(options.body === undefined
            ? {}
            : { "content-length": String(Buffer.byteLength(options.body)) }),
          ...options.headers
        },
        agent: false
      },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () => {
          clearTimeout(timer)
          const text = Buffer.concat(chunks).toString("utf8")
          let json: RawAnswer["json"]
          try {
            json = JSON.parse(text)
          } catch {
            json = undefined
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json })
        })
      }
    )
    const timer = setTimeout(() => {
      req.destroy()
      reject(new Error(`no answer within ${timeoutMs} ms to ${options.method} ${options.path.slice(0, 80)}`))
    }, timeoutMs)
    req.on("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    if (options.body !== undefined) req.write(options.body)
    req.end()
  })

/** Writes raw bytes on a fresh connection and reads until the server closes it, failing after `timeoutMs`. */
export const rawExchange = (port: number, bytes: string, timeoutMs = 3_000): Promise<string> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1")
    let out = ""
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`no answer within ${timeoutMs} ms to ${JSON.stringify(bytes.slice(0, 40))}`))
    }, timeoutMs)
    socket.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8")
    })
    socket.on("end", () => {
      clearTimeout(timer)
      resolve(out)
    })
    socket.on("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    socket.write(bytes)
  })
