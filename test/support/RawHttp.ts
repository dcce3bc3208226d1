import { request } from "node:http"

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
