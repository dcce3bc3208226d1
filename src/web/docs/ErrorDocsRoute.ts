import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import type { ServiceEnv } from "../../../services/domain/Environment"
import { ERROR_DOCS_PATH, errorTable } from "../../http/Errors"
import { ApiSettings } from "../../http/middleware/ApiSettings"
import { HOME_CSP, HOME_STYLESHEET } from "../home/HomeRoute"

const escapeHtml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

/** The table's sentences carry Markdown's inline code (they are the README's too): `x` becomes <code>x</code>. */
const inline = (text: string) =>
  escapeHtml(text).replace(/`([^`]+)`/g, (_, code: string) => `<code>${code}</code>`)

/**
 * `GET /docs/errors`: every code of the error table, one row each with the code as its `id`, so an answer's
 * `doc_url` (`PUBLIC_BASE_URL/docs/errors#code`) lands on its line (decision 0087). Static like `GET /`, styled as
 * it and under its policy: no script, the dashboard's stylesheet, nothing inline.
 */
export const errorDocsHtml = (env: ServiceEnv): string => {
  const sandbox = env === "sandbox"
  const rows = errorTable
    .map(
      (row) => `<tr id="${escapeHtml(row.code)}">
<th scope="row"><a href="#${escapeHtml(row.code)}"><code>${escapeHtml(row.code)}</code></a></th>
<td class="num">${row.status}</td>
<td>${inline(row.when)}</td>
<td>${inline(row.fix)}</td>
</tr>`
    )
    .join("\n")
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Error codes · Deposit requests</title>
<link rel="stylesheet" href="${HOME_STYLESHEET}">
</head>
<body>
<header class="top"><a class="brand" href="/">Deposit requests</a>${sandbox ? '<span class="env" data-env="sandbox">Sandbox</span>' : ""}</header>
<main>
<h1>Error codes</h1>
<p>Every refusal is answered as <code>{ "error": { "code", "message", "param"?, "doc_url" }, "request_id" }</code> with the status below. <code>message</code> is written for the developer and may change; branch on <code>code</code>. <code>doc_url</code> links to the code's line here. Quote <code>request_id</code> (also the <code>X-Request-Id</code> header) when reporting a problem. See also the <a href="/docs">API reference</a>.</p>
<div class="scroll">
<table class="errors">
<thead><tr><th scope="col">Code</th><th scope="col" class="num">Status</th><th scope="col">When</th><th scope="col">What to do</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
</div>
</main>
</body>
</html>
`
}

export const ErrorDocsRouteLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const settings = yield* ApiSettings
    const page = HttpServerResponse.text(errorDocsHtml(settings.serviceEnv), {
      contentType: "text/html; charset=utf-8",
      headers: {
        "content-security-policy": HOME_CSP,
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
        "cache-control": "no-cache"
      }
    })
    yield* router.get(ERROR_DOCS_PATH, Effect.succeed(page))
  })
)
