import { type PublicKeyCredentialRequestOptionsJSON, startAuthentication } from "@simplewebauthn/browser"
import { useEffect, useState } from "preact/hooks"
import { api, sentence } from "./api"
import type { Answer, SignedIn } from "./types"
import { Field, PasskeysNeedAName, passkeyPlace, Refused } from "./ui"

const BINDING_KEY = "deposits.signInBinding"
/** Kept when `localStorage` is refused (a private window's policy, say): this tab still completes its code. */
let bindingInMemory: string | null = null

/**
 * The secret the start of the latest sign-in answered for this browser: a code completes only with it, and a
 * link without a confirmation (infra/decisions/0074-sign-in-codes-and-forwarded-links.md). In `localStorage`, so
 * the mail's link opened in another tab of this browser finds it.
 */
export const signInBinding = (): string | null => {
  try {
    return localStorage.getItem(BINDING_KEY) ?? bindingInMemory
  } catch {
    return bindingInMemory
  }
}
const keepBinding = (binding: string) => {
  bindingInMemory = binding
  try {
    localStorage.setItem(BINDING_KEY, binding)
  } catch {
    // the memory copy serves this tab
  }
}

/** An account of this sandbox instance, as `GET /dashboard/sandbox/accounts` lists it. */
interface SandboxAccount {
  readonly id: string
  readonly name: string
  readonly created_at: string
  readonly member_emails: ReadonlyArray<string>
}

/**
 * The sandbox's accounts already made, each with a one-click way in (decision 0087): the service answers only a
 * page on the machine it runs on, and only in the sandbox; anywhere else the list is absent and nothing shows. The
 * session it hands over is traded at once, as the CLI's dashboard link's is.
 */
const SandboxAccounts = ({ onToken }: { onToken: (token: string) => void }) => {
  const [accounts, setAccounts] = useState<ReadonlyArray<SandboxAccount>>()
  const [error, setError] = useState<string>()
  const [busy, setBusy] = useState(false)
  useEffect(() => {
    void fetch("/dashboard/sandbox/accounts")
      .then(async (res) =>
        res.ok ? ((await res.json()) as { accounts: Array<SandboxAccount> }).accounts : []
      )
      .then(setAccounts, () => setAccounts([]))
  }, [])
  if (accounts === undefined || accounts.length === 0) return null
  const signInAs = async (account: SandboxAccount) => {
    setBusy(true)
    setError(undefined)
    try {
      const res = await fetch("/dashboard/sandbox/sign-in", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ account_id: account.id })
      })
      const body = (await res.json().catch(() => ({}))) as {
        session_token?: string
        error?: { message?: string }
      }
      if (body.session_token === undefined) throw new Error(body.error?.message ?? `HTTP ${res.status}`)
      onToken(body.session_token)
    } catch (e) {
      setError(sentence(e))
      setBusy(false)
    }
  }
  return (
    <section aria-labelledby="sandbox-accounts">
      <h2 id="sandbox-accounts">Sandbox accounts on this machine</h2>
      <p class="hint">
        Made here before (by the CLI or an invitation). Only offered in the sandbox, to this machine.
      </p>
      <ul class="plain">
        {accounts.map((a) => (
          <li key={a.id}>
            <strong>{a.name}</strong> <span class="mono hint">{a.id}</span>
            {a.member_emails.length > 0 ? <p class="hint">{a.member_emails.join(", ")}</p> : null}
            <p>
              <button type="button" class="secondary" disabled={busy} onClick={() => void signInAs(a)}>
                Sign in as {a.name}
              </button>
            </p>
          </li>
        ))}
      </ul>
      <Refused error={error} />
    </section>
  )
}

/**
 * Signing in, per the sign-in contract: an emailed six-digit code (the email's link lands on `#sign-in=` and is
 * exchanged by the app), or a passkey. Every refusal is the API's sentence.
 */
export const SignIn = ({
  onSignedIn,
  onToken,
  error: initial
}: {
  onSignedIn: (s: SignedIn) => void
  /** The sandbox's way in before any member exists: a session token the CLI printed. */
  onToken: (token: string) => void
  error?: string
}) => {
  const [sentTo, setSentTo] = useState<{ email: string; to: string }>()
  const [error, setError] = useState<string | undefined>(initial)
  // The app may tell a newer reason while this screen is up (a refused token's sentence after "signed out").
  useEffect(() => setError(initial), [initial])
  const [busy, setBusy] = useState(false)
  const attempt = async (f: () => Promise<void>) => {
    setBusy(true)
    setError(undefined)
    try {
      await f()
    } catch (e) {
      setError(sentence(e))
    } finally {
      setBusy(false)
    }
  }
  return (
    <main class="signin">
      <h1 tabIndex={-1}>Sign in to the dashboard</h1>
      {/* Keyed: without it Preact reuses the code's input for the address, keeping maxlength 0 and a pattern. */}
      {sentTo === undefined ? (
        <form
          key="email"
          onSubmit={(e) => {
            e.preventDefault()
            const email = new FormData(e.currentTarget).get("email")?.toString().trim() ?? ""
            void attempt(async () => {
              const sent = await api<Answer<"/v1/sign-in/email", "post">>("POST", "/v1/sign-in/email", {
                email
              })
              keepBinding(sent.binding)
              setSentTo({ email, to: sent.sent_to })
            })
          }}
        >
          <Field id="email" label="Email address" hint="We email you a six-digit code and a sign-in link.">
            <input
              id="email"
              name="email"
              type="email"
              autocomplete="email"
              required
              aria-describedby="email-hint"
            />
          </Field>
          <p>
            <button type="submit" disabled={busy}>
              Email me a code
            </button>
          </p>
        </form>
      ) : (
        <form
          key="code"
          onSubmit={(e) => {
            e.preventDefault()
            const code = new FormData(e.currentTarget).get("code")?.toString().trim() ?? ""
            void attempt(async () =>
              onSignedIn(
                await api<SignedIn>("POST", "/v1/sign-in/email/verify", {
                  email: sentTo.email,
                  code,
                  binding: signInBinding() ?? ""
                })
              )
            )
          }}
        >
          <p role="status">We sent a code to {sentTo.to}. It works for 10 minutes, once.</p>
          <Field id="code" label="Code from the email">
            <input
              id="code"
              name="code"
              inputMode="numeric"
              autocomplete="one-time-code"
              pattern="[0-9]{6}"
              maxLength={6}
              required
            />
          </Field>
          <div class="row">
            <button type="submit" disabled={busy}>
              Sign in
            </button>
            <button type="button" class="secondary" onClick={() => setSentTo(undefined)}>
              Use another address
            </button>
          </div>
        </form>
      )}
      <PasskeysNeedAName />
      <p>
        <button
          type="button"
          class="secondary"
          disabled={busy || !passkeyPlace(location).usable}
          onClick={() =>
            void attempt(async () => {
              const { challenge_id, options } = await api<Answer<"/v1/sign-in/passkey/options", "post">>(
                "POST",
                "/v1/sign-in/passkey/options",
                {}
              )
              let response: unknown
              try {
                // The contract carries WebAuthn's options as opaque JSON; the library names their shape.
                response = await startAuthentication({
                  optionsJSON: options as unknown as PublicKeyCredentialRequestOptionsJSON
                })
              } catch (e) {
                throw new Error(`The passkey was not used: ${sentence(e)}`)
              }
              onSignedIn(await api<SignedIn>("POST", "/v1/sign-in/passkey", { challenge_id, response }))
            })
          }
        >
          Sign in with a passkey
        </button>
      </p>
      <Refused error={error} />
      {document.body.dataset.sandbox === "true" ? <SandboxAccounts onToken={onToken} /> : null}
      {document.body.dataset.sandbox === "true" ? (
        <details>
          <summary>Sandbox: use a session token from the CLI</summary>
          <form
            onSubmit={(e) => {
              e.preventDefault()
              const token = new FormData(e.currentTarget).get("token")?.toString().trim() ?? ""
              onToken(token)
            }}
          >
            <Field
              id="cli-token"
              label="Session token"
              hint="session_… as printed by: npm run cli -- accounts create"
            >
              <input
                id="cli-token"
                name="token"
                type="password"
                autocomplete="off"
                required
                aria-describedby="cli-token-hint"
              />
            </Field>
            <p>
              <button type="submit" class="secondary">
                Use this token
              </button>
            </p>
          </form>
        </details>
      ) : null}
    </main>
  )
}
