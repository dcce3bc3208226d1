import { render } from "preact"
import { useEffect, useRef, useState } from "preact/hooks"
import { api, planRefresh, refreshSession, sentence, stopRefreshing, whenSignedOut } from "./api"
import { exchangeFragment } from "./confirmSignIn"
import { Developers } from "./developers"
import { Inspector } from "./inspector"
import { Overview } from "./overview"
import { Reconciliation } from "./reconciliation"
import { Records } from "./records"
import { RequestView } from "./request"
import { Requests } from "./requests"
import {
  askOtherTabs,
  forgetSession,
  forgetSessionEverywhere,
  readSession,
  storeSession,
  whenAnotherTabChanges
} from "./session"
import { SignIn } from "./signIn"
import { Team } from "./team"
import type { Account, Answer, SignedIn } from "./types"
import { Events, WebhookView, Webhooks } from "./webhooks"

/**
 * The merchant dashboard: Preact views over the public API alone, routed by the URL's fragment (`#/overview`, the
 * home; `#/requests`, `#/requests/dr_…`, …) so the service serves one page, and a `#sign-in=`/`#invite=` token is
 * told apart from a route by its `=`.
 */
const views = [
  ["overview", "Overview"],
  ["requests", "Requests"],
  ["webhooks", "Webhooks"],
  ["events", "Events"],
  ["developers", "Developers"],
  ["customers", "Customers"],
  ["issuers", "Issuers"],
  ["payout-addresses", "Payout addresses"],
  ["reconciliation", "Reconciliation"],
  ["inspector", "Inspector"],
  ["team", "Team"]
] as const

const routeOf = (hash: string): Array<string> => {
  const parts = hash
    .replace(/^#\/?/, "")
    .split("/")
    .filter((p) => p !== "")
  return parts.length === 0 ? ["overview"] : parts.map(decodeURIComponent)
}

const useRoute = () => {
  const [route, setRoute] = useState(() => routeOf(location.hash))
  useEffect(() => {
    const changed = () => setRoute(routeOf(location.hash))
    addEventListener("hashchange", changed)
    return () => removeEventListener("hashchange", changed)
  }, [])
  return route
}

const View = ({ route, account }: { route: Array<string>; account: Account | undefined }) => {
  const [name, id] = route
  const sandbox = account?.environment === "sandbox"
  switch (name) {
    case "overview":
      return <Overview />
    case "requests":
      return id === undefined ? <Requests /> : <RequestView id={id} sandbox={sandbox} />
    case "webhooks":
      return id === undefined ? <Webhooks /> : <WebhookView id={id} />
    case "events":
      return <Events />
    case "developers":
      return <Developers />
    case "customers":
    case "issuers":
    case "payout-addresses":
      return <Records kind={name} />
    case "reconciliation":
      return <Reconciliation />
    case "team":
      return <Team />
    case "inspector":
      return <Inspector id={id} at={route[2]} />
    default:
      return (
        <>
          <h1 tabIndex={-1}>Not found</h1>
          <p>
            There is no such page. <a href="#/requests">Go to the requests.</a>
          </p>
        </>
      )
  }
}

/** How often the page asks the service whether the token is paused. */
const TOKEN_CHECK_MS = 30_000

/** When the USDC token was paused, while it is (from the service's health); undefined otherwise. */
const useTokenPause = () => {
  const [since, setSince] = useState<string>()
  useEffect(() => {
    const check = () =>
      api<Answer<"/v1/health", "get">>("GET", "/v1/health").then(
        (h) => setSince(h.token?.paused === true ? h.token.since : undefined),
        () => undefined
      )
    void check()
    const timer = setInterval(check, TOKEN_CHECK_MS)
    return () => clearInterval(timer)
  }, [])
  return since
}

const Shell = ({ onLogOut }: { onLogOut: () => void }) => {
  const route = useRoute()
  const [account, setAccount] = useState<Account>()
  const [error, setError] = useState<string>()
  const main = useRef<HTMLElement>(null)
  useEffect(() => {
    api<Answer<"/v1/account", "get">>("GET", "/v1/account").then(setAccount, (e: unknown) =>
      setError(sentence(e))
    )
  }, [])
  const tokenPause = useTokenPause()
  // A new view (not the first): its heading takes the focus, so a screen reader announces where the reader is.
  const first = useRef(true)
  useEffect(() => {
    if (first.current) {
      first.current = false
      return
    }
    requestAnimationFrame(() => main.current?.querySelector("h1")?.focus())
  }, [route.join("/")])
  return (
    <>
      <header class="top">
        <span class="brand">Deposits</span>
        {account === undefined ? null : (
          <>
            <span class="env" data-env={account.environment} id="environment">
              {account.environment === "sandbox" ? "Sandbox" : "Production"}
            </span>
            <span>{account.name}</span>
          </>
        )}
        <button
          type="button"
          class="secondary"
          onClick={async () => {
            await api("DELETE", "/v1/account/session").catch(() => undefined)
            onLogOut()
          }}
        >
          Log out
        </button>
      </header>
      <nav class="views" aria-label="Views">
        <ul>
          {views.map(([path, label]) => (
            <li key={path}>
              <a href={`#/${path}`} {...(route[0] === path ? { "aria-current": "page" } : {})}>
                {label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main ref={main}>
        {error === undefined ? null : (
          <p class="refusal" role="alert">
            {error}
          </p>
        )}
        {tokenPause === undefined ? null : (
          <p class="refusal" role="alert" id="token-paused">
            USDC is paused by its issuer since {new Date(tokenPause).toLocaleString()}: settlements and
            returns wait, for every request, and go out by themselves once it is unpaused. Nothing needs
            resuming.
          </p>
        )}
        <View route={route} account={account} />
      </main>
    </>
  )
}

type Phase = { tag: "starting" } | { tag: "signed-out"; error?: string } | { tag: "signed-in" }

const App = () => {
  const [phase, setPhase] = useState<Phase>({ tag: "starting" })
  const signedIn = (s: SignedIn) => {
    storeSession({ token: s.session_token, expires_at: s.expires_at })
    planRefresh()
    if (!location.hash.startsWith("#/")) history.replaceState(null, "", `${location.pathname}#/overview`)
    setPhase({ tag: "signed-in" })
  }
  useEffect(() => {
    whenSignedOut(() => {
      stopRefreshing()
      setPhase({ tag: "signed-out", error: "The session has ended. Sign in again." })
    })
    // Another tab signed in or refreshed (this one follows), or logged out (so does this one).
    whenAnotherTabChanges((session) => {
      if (session === null) {
        stopRefreshing()
        setPhase({ tag: "signed-out", error: "Logged out in another tab." })
        return
      }
      planRefresh()
      setPhase((p) => (p.tag === "signed-out" ? { tag: "signed-in" } : p))
    })
    void start(signedIn, setPhase)
  }, [])
  if (phase.tag === "starting") return <p role="status">Loading…</p>
  if (phase.tag === "signed-out")
    return (
      <SignIn
        onSignedIn={signedIn}
        onToken={(token) => {
          // Checked (and traded for a fresh one) by the start, as any token of unknown expiry.
          storeSession({ token, expires_at: null })
          setPhase({ tag: "starting" })
          void start(signedIn, setPhase)
        }}
        {...(phase.error === undefined ? {} : { error: phase.error })}
      />
    )
  return (
    <Shell
      onLogOut={() => {
        stopRefreshing()
        forgetSessionEverywhere()
        setPhase({ tag: "signed-out" })
      }}
    />
  )
}

/**
 * A sign-in or invitation link carries its token in the fragment, which no server sees; it is taken off the
 * address at once (so it is neither kept in history nor shared by copying the address) and exchanged by POST.
 */
const start = async (signedIn: (s: SignedIn) => void, setPhase: (p: Phase) => void) => {
  const fragment = new URLSearchParams(location.hash.slice(1))
  const link = fragment.get("sign-in")
  const invite = fragment.get("invite")
  // `npm run cli -- sandbox` hands its session over here: traded at once below (unknown expiry), so the link it
  // printed works once and the same account opens, with the requests its API key made.
  const handed = fragment.get("session")
  if (handed !== null && link === null && invite === null) {
    history.replaceState(null, "", location.pathname + location.search)
    storeSession({ token: handed, expires_at: null })
  }
  if (link !== null || invite !== null) {
    history.replaceState(null, "", location.pathname + location.search)
    try {
      signedIn(await exchangeFragment(link, invite))
    } catch (e) {
      setPhase({ tag: "signed-out", error: sentence(e) })
    }
    return
  }
  // A new tab takes the session of a tab already open in this browser, if there is one.
  const session = readSession() ?? (await askOtherTabs())
  if (session === null) return setPhase({ tag: "signed-out" })
  if (session.expires_at === null || Date.parse(session.expires_at) - Date.now() < 60_000) {
    // A token of unknown age (from the CLI, say) is traded first, so every later call uses one that will last.
    try {
      await refreshSession()
    } catch (e) {
      forgetSession()
      return setPhase({ tag: "signed-out", error: sentence(e) })
    }
  } else planRefresh()
  setPhase({ tag: "signed-in" })
}

const root = document.getElementById("app")
if (root !== null) {
  root.replaceChildren()
  render(<App />, root)
}
