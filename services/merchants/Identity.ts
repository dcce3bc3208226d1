/** Who is calling: the account and whether by API key or dashboard session. */
export interface Identity {
  readonly accountId: string
  readonly via: "api_key" | "session"
  /** The member a session belongs to; null for API keys and for the operator CLI's sessions. */
  readonly memberId: string | null
  /** The session's own id (never its token); null for API keys. */
  readonly sessionId: string | null
  /** An API key's last four characters (keys have no id); absent for sessions. */
  readonly keyLast4?: string
}
