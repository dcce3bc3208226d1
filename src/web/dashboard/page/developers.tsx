import { useState } from "preact/hooks"
import { api } from "./api"
import type { Answer } from "./types"
import { Confirm, Loading, OnceSecret, Refused, useAction, useLoad, When } from "./ui"

type KeyInfo = Answer<"/v1/account/api-key", "get">
type IssuedKey = Answer<"/v1/account/api-key", "post">

/** The account's API key: what is live (by its last four), issued or rotated (shown once), revoked. */
export const Developers = () => {
  const info = useLoad(() => api<KeyInfo>("GET", "/v1/account/api-key"), [])
  const [issued, setIssued] = useState<IssuedKey>()
  const issue = useAction()
  const active = info.data?.active ?? null
  const previous = info.data?.previous ?? null
  return (
    <>
      <h1 tabIndex={-1}>Developers</h1>
      <section aria-labelledby="key-title">
        <h2 id="key-title">API key</h2>
        <Refused error={info.error} />
        {info.data === undefined ? (
          info.error === undefined ? (
            <Loading what="the key" />
          ) : null
        ) : (
          <dl class="facts" id="key-info">
            <dt>Live key</dt>
            <dd>
              {active === null ? (
                "None: issue one for your integration."
              ) : (
                <>
                  ending <code>{active.last4}</code>, issued <When at={active.created_at} />
                </>
              )}
            </dd>
            <dt>Previous key</dt>
            <dd id="previous-key">
              {previous === null ? (
                "None."
              ) : (
                <>
                  ending <code>{previous.last4}</code> keeps working until <When at={previous.valid_until} />{" "}
                  (24 hours of grace to move your integration over)
                </>
              )}
            </dd>
          </dl>
        )}
        <div class="row">
          <button
            type="button"
            disabled={issue.busy}
            onClick={() =>
              void issue.run(async () => {
                setIssued(await api<IssuedKey>("POST", "/v1/account/api-key", {}))
                info.reload()
              })
            }
          >
            {active === null ? "Issue a key" : "Rotate the key"}
          </button>
          {active === null ? null : (
            <Confirm
              label="Revoke the key"
              question={`Revoke the key ending ${active.last4}? Integrations using it are refused at once${previous === null ? "" : ", and so is the previous key"}.`}
              confirmLabel="Revoke it"
              onConfirm={async () => {
                await api("DELETE", "/v1/account/api-key")
                setIssued(undefined)
                info.reload()
              }}
            />
          )}
        </div>
        <Refused error={issue.error} docUrl={issue.docUrl} />
        {issued === undefined ? null : (
          <OnceSecret title="New API key" value={issued.api_key}>
            {issued.previous_key_expires_at === null ? null : (
              <p id="grace">
                The previous key keeps working until <When at={issued.previous_key_expires_at} />.
              </p>
            )}
          </OnceSecret>
        )}
      </section>
      <section aria-labelledby="docs-title">
        <h2 id="docs-title">Reference</h2>
        <p>
          The API's reference is at <a href="/docs">/docs</a> and its OpenAPI document at{" "}
          <a href="/openapi.json">/openapi.json</a>.
        </p>
      </section>
    </>
  )
}
