/**
 * The session lives in this tab's sessionStorage, not a cookie: the API authenticates `Authorization: Bearer`
 * (a cookie would need CSRF defences the API does not have), and closing the tab forgets it (decision 0062).
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

export const storeSession = (s: StoredSession) => sessionStorage.setItem(KEY, JSON.stringify(s))
export const forgetSession = () => sessionStorage.removeItem(KEY)
