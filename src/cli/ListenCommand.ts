import { Effect } from "effect"
import { request as httpRequest } from "node:http"
import { request as httpsRequest } from "node:https"
import { API_KEY_ENV, refusal } from "./ApiClient"
import { keepListener, keptListener } from "./ListenState"
import { CliError, type CliValues } from "./Output"
import { attempt, runCommand } from "./Run"
import { serviceUrlOf } from "./ServiceUrl"

/**
 * `deposits listen`: local webhook forwarding in the sandbox, as `stripe listen` does
 * (infra/decisions/0068-local-webhook-forwarding.md). It opens a listener with the API key, long-polls it for due
 * deliveries, POSTs each one's exact bytes and signed headers to the local URL, and reports the local answer, which
 * the service records as the attempt (a failure is retried as for any endpoint). Only HTTP to the service: it works
 * against a remote sandbox, and the service never connects to this machine. Ctrl-C removes the listener; the next
 * run on this machine reopens it, so its signing secret stays the same until `--rotate-secret`
 * (infra/decisions/0091-cli-developer-loop.md).
 */

/** How long the local server has to answer, as an endpoint has. */
export const FORWARD_TIMEOUT_MS = 10_000
/** The hold of each poll, in seconds. */
const POLL_SECONDS = 25
/** The start of a local answer's body kept with the attempt. */
const EXCERPT_CHARS = 500
/** The start of a failed local answer's body printed on its line. */
const PRINTED_EXCERPT_CHARS = 200

interface Delivery {
  readonly event_id: string
  readonly event_type: string
  readonly attempt: number
  readonly body: string
  readonly headers: Record<string, string>
}

interface LocalAnswer {
  readonly status: number | null
  readonly error: "connection" | "timeout" | null
  readonly excerpt: string
  readonly durationMs: number
}

const settingsOf = (values: CliValues) =>
  Effect.gen(function* () {
    const forwardTo = values["forward-to"]
    if (forwardTo === undefined)
      return yield* Effect.fail(
        new CliError("--forward-to is required: the local URL, e.g. http://localhost:3000/hooks")
      )
    const target = URL.canParse(forwardTo) ? new URL(forwardTo) : undefined
    if (target === undefined || (target.protocol !== "http:" && target.protocol !== "https:"))
      return yield* Effect.fail(new CliError("--forward-to must be an http:// or https:// URL"))
    const key = values.key ?? process.env[API_KEY_ENV]
    if (key === undefined || key === "")
      return yield* Effect.fail(
        new CliError(`an API key is needed: --key KEY, or ${API_KEY_ENV} in the environment`)
      )
    const api = yield* serviceUrlOf(values.api)
    const events =
      values.events === undefined
        ? undefined
        : values.events
            .split(",")
            .map((type) => type.trim())
            .filter((type) => type !== "")
    return { forwardTo: target.href, key, api, events, rotate: values["rotate-secret"] === true }
  })

/**
 * POSTs one delivery to the local URL as the service would have: the same bytes and only the delivery's headers
 * (node:http, not fetch, which adds its own), no redirects followed, the endpoints' time limit.
 */
const forward = (url: string, delivery: Delivery): Promise<LocalAnswer> =>
  new Promise((resolve) => {
    const started = performance.now()
    const elapsed = () => Math.round(performance.now() - started)
    const body = Buffer.from(delivery.body, "utf8")
    let settled = false
    const finish = (answer: Omit<LocalAnswer, "durationMs">) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve({ ...answer, durationMs: elapsed() })
    }
    const target = new URL(url)
    const request = (target.protocol === "https:" ? httpsRequest : httpRequest)(target, {
      method: "POST",
      headers: { ...delivery.headers, "content-length": String(body.length) }
    })
    const timer = setTimeout(() => {
      finish({ status: null, error: "timeout", excerpt: `no answer within ${FORWARD_TIMEOUT_MS} ms` })
      request.destroy()
    }, FORWARD_TIMEOUT_MS)
    request.once("error", (e) =>
      finish({ status: null, error: "connection", excerpt: e.message.slice(0, EXCERPT_CHARS) })
    )
    request.once("response", (res) => {
      const chunks: Array<Buffer> = []
      let kept = 0
      res.on("data", (chunk: Buffer) => {
        if (kept < EXCERPT_CHARS * 4) chunks.push(chunk)
        kept += chunk.length
      })
      res.once("end", () =>
        finish({
          status: res.statusCode ?? null,
          error: null,
          excerpt: Buffer.concat(chunks).toString("utf8").slice(0, EXCERPT_CHARS)
        })
      )
      res.once("error", (e) =>
        finish({ status: null, error: "connection", excerpt: e.message.slice(0, EXCERPT_CHARS) })
      )
    })
    request.end(body)
  })

/** The request an event is about, if any (a `webhook.test` has none). */
const requestIdOf = (body: string) => {
  try {
    const event = JSON.parse(body) as { data?: { deposit_request?: { id?: string } } }
    return event.data?.deposit_request?.id ?? "-"
  } catch {
    return "-"
  }
}

/** A failed answer's body on one line: its start, quoted, with control characters escaped (JSON's escapes). */
export const excerptOf = (text: string) => {
  const start = [...text].slice(0, PRINTED_EXCERPT_CHARS).join("")
  return `${JSON.stringify(start)}${start.length < text.length ? "…" : ""}`
}

const line = (delivery: Delivery, answer: LocalAnswer) =>
  [
    new Date().toISOString().replace(/\.\d{3}Z$/, "Z"),
    delivery.event_type,
    delivery.event_id,
    requestIdOf(delivery.body),
    answer.status === null ? `-> ${answer.error}` : `-> ${answer.status}`,
    `${answer.durationMs} ms`,
    ...(delivery.attempt > 1 ? [`(attempt ${delivery.attempt})`] : []),
    // A failure shows what the local app said (or why it said nothing), so the developer sees the cause here.
    ...(answer.status === null
      ? [excerptOf(answer.excerpt)]
      : answer.status >= 200 && answer.status < 300
        ? []
        : [`body ${excerptOf(answer.excerpt)}`])
  ].join("  ")

/**
 * Reports one answer; a 429 (a burst of deliveries empties the account's token bucket) is tried again after its
 * `Retry-After`, so the attempt is recorded rather than handed out again once its claim lapses.
 */
const report = async (url: string, headers: Record<string, string>, body: unknown): Promise<unknown> => {
  for (let tries = 0; ; tries++) {
    const res = await fetch(url, { method: "POST", headers, body: JSON.stringify(body) }).catch(
      (e: unknown) => e
    )
    if (!(res instanceof Response) || res.status !== 429 || tries >= 5) return res
    await res.body?.cancel()
    const wait = Number(res.headers.get("retry-after") ?? "1")
    await new Promise((r) => setTimeout(r, Math.min(Number.isFinite(wait) ? wait : 1, 60) * 1000))
  }
}

type Settings = Effect.Effect.Success<ReturnType<typeof settingsOf>>

/**
 * This machine's listener for the account: the one an earlier run kept, reopened with the same secret (rotated
 * first with `--rotate-secret`), or a new one when there is none or the service no longer has it.
 */
const openListener = async (settings: Settings, headers: Record<string, string>) => {
  const { api } = settings
  const call = (path: string, body?: unknown) =>
    fetch(`${api}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    }).catch((e: unknown) => {
      const cause = e instanceof Error && e.cause instanceof Error ? e.cause.message : String(e)
      throw new CliError(`cannot reach the service at ${api} (${cause}); set --api to its URL`)
    })
  const account = await call("/v1/account")
  if (account.status !== 200) throw new CliError(`the API key was refused: ${await refusal(account)}`)
  const accountId = ((await account.json()) as { id: string }).id
  const filter = settings.events === undefined ? {} : { event_types: settings.events }
  const kept = keptListener(api, accountId)
  if (kept !== undefined) {
    const reopened = await call(`/v1/webhook-listeners/${kept.listener_id}/reopen`, filter)
    if (reopened.status === 200) {
      if (!settings.rotate)
        return { id: kept.listener_id, secret: kept.secret, note: "(the same as last run)" }
      const rotated = await call(`/v1/webhook-listeners/${kept.listener_id}/rotate-secret`, {})
      if (rotated.status !== 200) throw new CliError(`the rotation was refused: ${await refusal(rotated)}`)
      const { secret } = (await rotated.json()) as { secret: string }
      keepListener(api, accountId, { listener_id: kept.listener_id, secret })
      return { id: kept.listener_id, secret, note: "(new: the previous one no longer verifies)" }
    }
    // 404: removed from the database, or another service at the same URL: a new one below.
    if (reopened.status !== 404) throw new CliError(`the listener was refused: ${await refusal(reopened)}`)
    await reopened.body?.cancel()
  }
  const created = await call("/v1/webhook-listeners", filter)
  if (created.status !== 201) throw new CliError(`the listener was refused: ${await refusal(created)}`)
  const listener = (await created.json()) as { id: string; secret: string }
  keepListener(api, accountId, { listener_id: listener.id, secret: listener.secret })
  return { id: listener.id, secret: listener.secret, note: "(new: kept for the next runs on this machine)" }
}

const listen = async (settings: Settings) => {
  const { api, key, forwardTo } = settings
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" }
  const listener = await openListener(settings, headers)
  const out = (text: string) => process.stdout.write(`${text}\n`)
  out(`> Ready: forwarding to ${forwardTo} (listener ${listener.id}; Ctrl-C to quit)`)
  out(`> Webhook signing secret: ${listener.secret} ${listener.note}`)

  const stopping = new AbortController()
  let removed: Promise<void> | undefined
  const remove = () => {
    removed ??= (async () => {
      stopping.abort()
      try {
        const res = await fetch(`${api}/v1/webhook-listeners/${listener.id}`, { method: "DELETE", headers })
        if (res.status === 204) out(`> Listener ${listener.id} removed`)
        else process.stderr.write(`could not remove the listener: ${await refusal(res)}\n`)
      } catch (e) {
        process.stderr.write(`could not remove the listener: ${e instanceof Error ? e.message : String(e)}\n`)
      }
    })()
    return removed
  }
  const onSignal = () => {
    void remove().then(() => process.exit(0))
  }
  process.once("SIGINT", onSignal)
  process.once("SIGTERM", onSignal)

  const pollUrl = `${api}/v1/webhook-listeners/${listener.id}/deliveries?wait_for=change&timeout=${POLL_SECONDS}`
  while (!stopping.signal.aborted) {
    let deliveries: ReadonlyArray<Delivery>
    try {
      const res = await fetch(pollUrl, { headers, signal: stopping.signal })
      if (res.status === 404)
        throw new CliError(`the listener ${listener.id} is gone (it expired or was removed)`)
      if (res.status !== 200) {
        process.stderr.write(`poll refused, trying again: ${await refusal(res)}\n`)
        await new Promise((r) => setTimeout(r, 1_000))
        continue
      }
      deliveries = ((await res.json()) as { deliveries: ReadonlyArray<Delivery> }).deliveries
    } catch (e) {
      if (stopping.signal.aborted) break
      if (e instanceof CliError) throw e
      // The service restarted or the network dropped: poll again shortly; the listener lives for minutes.
      process.stderr.write(`poll failed: ${e instanceof Error ? e.message : String(e)}; trying again\n`)
      await new Promise((r) => setTimeout(r, 1_000))
      continue
    }
    // One at a time, oldest first: the local server sees a request's events in order.
    for (const delivery of deliveries) {
      if (stopping.signal.aborted) break
      const answer = await forward(forwardTo, delivery)
      out(line(delivery, answer))
      const reported = await report(`${api}/v1/webhook-listeners/${listener.id}/answers`, headers, {
        event_id: delivery.event_id,
        attempt: delivery.attempt,
        status: answer.status,
        error: answer.error,
        ...(answer.excerpt === "" ? {} : { excerpt: answer.excerpt }),
        duration_ms: answer.durationMs
      })
      if (!(reported instanceof Response) || reported.status !== 200) {
        // Unrecorded, the delivery is handed out again once its claim lapses: the receiver dedupes by event id.
        const why = reported instanceof Response ? await refusal(reported) : String(reported)
        process.stderr.write(`the answer to ${delivery.event_id} was not recorded: ${why}\n`)
      }
    }
  }
  await removed
}

const program = (values: CliValues) =>
  Effect.flatMap(settingsOf(values), (settings) => attempt(() => listen(settings)))

export const run = (values: CliValues) => runCommand(program(values))
