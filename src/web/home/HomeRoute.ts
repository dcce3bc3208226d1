import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import type { ServiceEnv } from "../../../services/domain/Environment"
import { ApiSettings } from "../../http/middleware/ApiSettings"

/** Nothing at all from anywhere: the page is text and same-origin links, no script, style, image or frame. */
export const HOME_CSP = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/**
 * `GET /`: where someone who opens the service's address lands (decision 0056). Links to the reference, the OpenAPI
 * document and the health route; the sandbox adds the first steps. Static per environment, built once.
 */
export const homeHtml = (env: ServiceEnv): string => {
  const sandbox =
    env === "sandbox"
      ? `
<h2>First steps in the sandbox</h2>
<ol>
<li>Make a merchant account and an API key: <code>npm run cli -- sandbox</code> (the key starts with <code>service_test_</code>).</li>
<li>Open the <a href="/docs">API reference</a>, authenticate with the key as a bearer token, and create an issuer, a payout address and a deposit request.</li>
<li>Open the request's <code>checkout_url</code> (<code>/checkout/dr_…</code>): the hosted checkout pays it on the local chain.</li>
<li>Watch the service's log: each request's lifecycle change is one line (<code>lifecycle dr_…</code>), and payer mail codes are logged when no <code>SMTP_URL</code> is set.</li>
</ol>
<p>Webhooks to a receiver on this machine need <code>WEBHOOKS_ALLOW_PRIVATE=true</code>, read at start: restart after setting it.</p>`
      : ""
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Deposit requests${env === "sandbox" ? " (sandbox)" : ""}</title>
</head>
<body>
<main>
<h1>Deposit requests${env === "sandbox" ? " (sandbox)" : ""}</h1>
<p>USDC deposit requests: one-time addresses, exact settlement, returns and signed webhooks. The API lives under <code>/v1</code>.</p>
<ul>
<li><a href="/docs">API reference</a></li>
<li><a href="/openapi.json">OpenAPI document</a></li>
<li><a href="/v1/health">Health</a></li>
</ul>${sandbox}
</main>
</body>
</html>
`
}

export const HomeRouteLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const settings = yield* ApiSettings
    const page = HttpServerResponse.text(homeHtml(settings.serviceEnv), {
      contentType: "text/html; charset=utf-8",
      headers: {
        "content-security-policy": HOME_CSP,
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
        "cache-control": "no-cache"
      }
    })
    yield* router.get("/", Effect.succeed(page))
  })
)
