import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import type { ServiceEnv } from "../../../services/domain/Environment"
import { publicBaseUrl } from "../../../services/platform/Settings"
import { ApiSettings } from "../../http/middleware/ApiSettings"

/**
 * The dashboard's policy without its script: text, same-origin links and the dashboard's stylesheet, nothing inline,
 * no script, image or frame.
 */
export const HOME_CSP =
  "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/** The dashboard's own stylesheet, served on every origin of the service, so the two pages look alike. */
export const HOME_STYLESHEET = "/dashboard/assets/app.css"

/**
 * `GET /`: where someone who opens the service's address lands (decision 0056), styled as the dashboard: links to
 * the dashboard, the reference and how a checkout comes about; the sandbox adds the first steps. Static per
 * environment, built once. `dashboard` is `/dashboard/` on this origin, or its address on `DASHBOARD_ORIGIN`.
 */
export const homeHtml = (env: ServiceEnv, dashboard = "/dashboard/"): string => {
  const sandbox = env === "sandbox"
  const title = `Deposit requests${sandbox ? " (sandbox)" : ""}`
  const firstSteps = sandbox
    ? `
<section aria-labelledby="first-steps">
<h2 id="first-steps">First steps in the sandbox</h2>
<ol>
<li>Make a merchant account and an API key: <code>npm run cli -- sandbox</code> (the key starts with <code>service_test_</code>).</li>
<li>Open the <a href="/docs">API reference</a>, authenticate with the key as a bearer token, and create an issuer, a payout address and a deposit request.</li>
<li>Open the request's <code>checkout_url</code> (<code>/checkout/dr_…</code>): the hosted checkout pays it on the local chain.</li>
<li>Watch the service's log: each request's lifecycle change is one line (<code>lifecycle dr_…</code>), and payer mail codes are logged when no <code>SMTP_URL</code> is set.</li>
</ol>
<p class="hint">Webhooks to a receiver on this machine need <code>WEBHOOKS_ALLOW_PRIVATE=true</code>, read at start: restart after setting it.</p>
</section>`
    : ""
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="stylesheet" href="${HOME_STYLESHEET}">
</head>
<body>
<header class="top"><span class="brand">Deposit requests</span>${sandbox ? '<span class="env" data-env="sandbox">Sandbox</span>' : ""}</header>
<main>
<h1>${title}</h1>
<p>USDC deposit requests: one-time addresses, exact settlement, returns and signed webhooks. The API lives under <code>/v1</code>.</p>
<div class="amounts">
<div><h2><a href="${dashboard}">Merchant dashboard</a></h2><p class="hint">Sign in by email: requests, webhooks, API keys, reconciliation and the team.</p></div>
<div><h2><a href="/docs">API reference</a></h2><p class="hint">Every route, tried in the browser with an API key; also the <a href="/openapi.json">OpenAPI document</a>, the <a href="/docs/errors">error codes</a> and <a href="/v1/health">health</a>.</p></div>
<div><h2><a href="#checkout">A checkout</a></h2><p class="hint">The payer's page of each deposit request, on this origin.</p></div>
</div>
<section aria-labelledby="checkout">
<h2 id="checkout">Getting a checkout</h2>
<p>Every deposit request has a <code>checkout_url</code> (<code>/checkout/dr_…</code>): send your payer there. Create one in the <a href="${dashboard}">dashboard</a> (Requests, then New request, which copies its link), or with <code>POST /v1/deposit-requests</code> (see the <a href="/docs">reference</a>).</p>
</section>${firstSteps}
</main>
</body>
</html>
`
}

export const HomeRouteLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const settings = yield* ApiSettings
    const own = new URL(yield* publicBaseUrl).origin
    const dashboard =
      settings.dashboardOrigin === own ? "/dashboard/" : `${settings.dashboardOrigin}/dashboard/`
    const page = HttpServerResponse.text(homeHtml(settings.serviceEnv, dashboard), {
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
