import { askOtherTabs, forgetSession, readSession, storeSession } from "./session"
import type { Answer } from "./types"

/** A refusal of the API (or of the network), carrying the API's own sentence (`error.message`) to show. */
export class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The code's line on the service's error page (`error.doc_url`), shown as "Learn more". */
    readonly docUrl?: string
  ) {
    super(message)
  }
}

/** The "Learn more" link of anything thrown: an API refusal's `doc_url`, when it is an http(s) address. */
export const docUrlOf = (e: unknown): string | undefined =>
  e instanceof Refusal && e.docUrl !== undefined && /^https?:\/\//.test(e.docUrl) ? e.docUrl : undefined

/** Told when the API no longer accepts the session (expired, ended elsewhere): the app shows the sign-in. */
let onSignedOut: () => void = () => undefined
export const whenSignedOut = (f: () => void) => {
  onSignedOut = f
}

const refusalOf = async (res: Response): Promise<Refusal> => {
  const text = await res.text().catch(() => "")
  try {
    const body = JSON.parse(text) as { error?: { code?: string; message?: string; doc_url?: string } }
    if (body.error?.message !== undefined)
      return new Refusal(res.status, body.error.code ?? "", body.error.message, body.error.doc_url)
  } catch {
    // not JSON: a proxy's page, say
  }
  return new Refusal(
    res.status,
    "http",
    `The service answered with HTTP ${res.status}. Try again in a moment.`
  )
}

/** A call to the public API as the signed-in member: JSON in and out, 204 as undefined. */
export const api = <T>(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal
): Promise<T> => call<T>(method, path, body, headers, signal, "recover")

/**
 * A file the API streams (a CSV export), read whole into a Blob as the signed-in member: the session goes in the
 * `Authorization` header, never in a URL, so the browser cannot be handed a plain download link.
 */
export const download = (path: string): Promise<Blob> =>
  call<Blob>("GET", path, undefined, {}, undefined, "recover", "blob")

/**
 * The session to use after the API refused `refused`: the one this tab or another has since traded it for (a
 * refresh in another tab ends the token this one sent), or null when no tab holds a newer one.
 */
/** The API refused `token` and no tab has a newer one: this tab is signed out (unless it moved on meanwhile). */
const signedOutHere = (token: string) => {
  if (readSession()?.token !== token) return
  forgetSession()
  onSignedOut()
}

const newerThan = async (refused: string) => {
  const here = readSession()
  if (here !== null && here.token !== refused) return here
  return askOtherTabs(refused)
}

const call = async <T>(
  method: string,
  path: string,
  body: unknown,
  headers: Record<string, string>,
  signal: AbortSignal | undefined,
  /** On a 401: try a newer session once, then sign out (`recover`), or leave it to the caller (`throw`). */
  on401: "recover" | "retried" | "throw",
  as: "json" | "blob" = "json"
): Promise<T> => {
  const session = readSession()
  let res: Response
  try {
    res = await fetch(path, {
      method,
      headers: {
        ...(session === null ? {} : { authorization: `Bearer ${session.token}` }),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...headers
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      ...(signal === undefined ? {} : { signal })
    })
  } catch (e) {
    if (signal?.aborted === true) throw e
    throw new Refusal(0, "network", "The service could not be reached. Check the connection and try again.")
  }
  if (!res.ok) {
    const refusal = await refusalOf(res)
    if (res.status === 401 && session !== null && !path.startsWith("/v1/sign-in/") && on401 !== "throw") {
      if (on401 === "recover" && (await newerThan(session.token)) !== null)
        return call<T>(method, path, body, headers, signal, "retried", as)
      signedOutHere(session.token)
    }
    throw refusal
  }
  if (res.status === 204) return undefined as T
  if (as === "blob") return (await res.blob()) as T
  return (await res.json()) as T
}

/** The message to show for anything thrown: the API's sentence, or the error's own. */
export const sentence = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** A query string from the set values only. */
export const query = (params: Record<string, string | undefined>): string => {
  const set = Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== "")
  return set.length === 0 ? "" : `?${new URLSearchParams(set).toString()}`
}

let refreshTimer: ReturnType<typeof setTimeout> | undefined

/**
 * Trades the session for a fresh one (the old one ends), which every open tab adopts, and plans the next trade.
 * Two tabs may trade the same token at once: the one refused takes the other's fresh session instead.
 */
export const refreshSession = async (): Promise<void> => {
  const traded = readSession()
  try {
    const fresh = await call<Answer<"/v1/account/session", "post">>(
      "POST",
      "/v1/account/session",
      {},
      {},
      undefined,
      "throw"
    )
    storeSession({ token: fresh.session_token, expires_at: fresh.expires_at })
  } catch (e) {
    const other = traded === null ? null : await newerThan(traded.token)
    if (other === null) {
      if (traded !== null && e instanceof Refusal && e.status === 401) signedOutHere(traded.token)
      throw e
    }
  }
  planRefresh()
}

/**
 * Refreshes ten minutes before expiry (or at half the time left, when less remains), so a dashboard left open
 * keeps working; a token of unknown expiry is refreshed at once.
 */
export const planRefresh = () => {
  if (refreshTimer !== undefined) clearTimeout(refreshTimer)
  const session = readSession()
  if (session === null) return
  const left = session.expires_at === null ? 0 : Date.parse(session.expires_at) - Date.now()
  const wait = Math.max(0, left > 20 * 60_000 ? left - 10 * 60_000 : left / 2)
  refreshTimer = setTimeout(() => void refreshSession().catch(() => undefined), Math.min(wait, 2 ** 31 - 1))
}

export const stopRefreshing = () => {
  if (refreshTimer !== undefined) clearTimeout(refreshTimer)
  refreshTimer = undefined
}
