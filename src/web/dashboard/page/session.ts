/**
 * The session lives in each tab's sessionStorage, not a cookie: the API authenticates `Authorization: Bearer`
 * (a cookie would need CSRF defences the API does not have), and closing the browser's last tab forgets it
 * (decision 0062). Open tabs share it (below).
 */
export interface StoredSession {
  readonly token: string
  /** Unknown when the token came from elsewhere (the CLI, a test): the app refreshes at once to learn it. */
  readonly expires_at: string | null
}

const KEY = "deposits.session"

export const readSession = (): StoredSession | null => {
  try {
    const raw = sessionStorage.getItem(KEY)
    if (raw === null) return null
    const parsed = JSON.parse(raw) as Partial<StoredSession> | string
    // A bare token is accepted too (what the CLI prints, pasted by a developer or set by a test).
    if (typeof parsed === "string") return { token: parsed, expires_at: null }
    return typeof parsed.token === "string"
      ? { token: parsed.token, expires_at: parsed.expires_at ?? null }
      : null
  } catch {
    const raw = sessionStorage.getItem(KEY)
    return raw?.startsWith("session_") === true && raw !== null ? { token: raw, expires_at: null } : null
  }
}

/**
 * The tabs of one browser share one sign-in (decision 0062, amended): each keeps the session in its own
 * `sessionStorage` (so closing the last tab still forgets it), and tells the others through a channel only this
 * origin can join (the API reference runs in an opaque origin: decision 0078). A new tab asks the open ones; a
 * sign-in or a refresh in one is adopted by all; a log-out in one signs all out.
 */
type TabMessage =
  | { readonly type: "ask" }
  | { readonly type: "session"; readonly session: StoredSession }
  | { readonly type: "signed-out" }

const channel = typeof BroadcastChannel === "undefined" ? null : new BroadcastChannel("deposits.session")

/** What the app does when another tab signs in, refreshes, or logs out. */
let listener: (session: StoredSession | null) => void = () => undefined
export const whenAnotherTabChanges = (f: (session: StoredSession | null) => void) => {
  listener = f
}

/** Whether `value` is a session another tab sent (a message is data from the same origin, checked all the same). */
const isSession = (value: unknown): value is StoredSession =>
  typeof value === "object" &&
  value !== null &&
  typeof (value as StoredSession).token === "string" &&
  (value as StoredSession).token.startsWith("session_") &&
  ((value as StoredSession).expires_at === null || typeof (value as StoredSession).expires_at === "string")

const post = (message: TabMessage) => channel?.postMessage(message)

/** While this tab asks, the answer is the asker's (askOtherTabs), not news to adopt. */
let asking = 0

channel?.addEventListener("message", (e: MessageEvent<TabMessage>) => {
  const message = e.data
  if (message.type === "ask") {
    const mine = readSession()
    if (mine !== null) post({ type: "session", session: mine })
  } else if (message.type === "session" && isSession(message.session)) {
    if (asking > 0 || readSession()?.token === message.session.token) return
    sessionStorage.setItem(KEY, JSON.stringify(message.session))
    listener(message.session)
  } else if (message.type === "signed-out") {
    sessionStorage.removeItem(KEY)
    listener(null)
  }
})

/** Keeps the session in this tab and tells the others, which adopt it. */
export const storeSession = (s: StoredSession) => {
  sessionStorage.setItem(KEY, JSON.stringify(s))
  post({ type: "session", session: s })
}

/** Forgets the session in this tab only (the API refused it here; the others find out on their own). */
export const forgetSession = () => sessionStorage.removeItem(KEY)

/** Forgets the session in every tab: a log-out. */
export const forgetSessionEverywhere = () => {
  sessionStorage.removeItem(KEY)
  post({ type: "signed-out" })
}

/**
 * The session another open tab holds, other than `except`; null when no tab answers within `waitMs`. Kept here
 * (without telling the others: they have it).
 */
export const askOtherTabs = (except: string | null = null, waitMs = 300): Promise<StoredSession | null> =>
  new Promise((resolve) => {
    if (channel === null) return resolve(null)
    const answer = (e: MessageEvent<TabMessage>) => {
      if (e.data.type !== "session" || !isSession(e.data.session) || e.data.session.token === except) return
      done(e.data.session)
    }
    const done = (session: StoredSession | null) => {
      asking -= 1
      clearTimeout(timer)
      channel.removeEventListener("message", answer)
      if (session !== null) sessionStorage.setItem(KEY, JSON.stringify(session))
      resolve(session)
    }
    asking += 1
    const timer = setTimeout(() => done(null), waitMs)
    channel.addEventListener("message", answer)
    post({ type: "ask" })
  })
