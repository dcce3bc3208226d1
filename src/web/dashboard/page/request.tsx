import { useEffect, useState } from "preact/hooks"
import { api, sentence } from "./api"
import type {
  Answer,
  ApiEvent,
  Attachment,
  Delivery,
  DepositRequest,
  Recovery,
  Transfer,
  VerificationAttempt
} from "./types"
import { outcomeInWords } from "./webhooks"
import {
  Confirm,
  CopyButton,
  Field,
  Loading,
  Money,
  Notice,
  Refused,
  Scroll,
  Status,
  useAction,
  useLoad,
  When
} from "./ui"

interface Related {
  readonly events: ReadonlyArray<ApiEvent>
  readonly transfers: ReadonlyArray<Transfer>
  readonly recoveries: ReadonlyArray<Recovery>
  readonly attempts: ReadonlyArray<VerificationAttempt>
  readonly attachments: ReadonlyArray<Attachment>
  /** The API's sentence when a part could not be read. */
  readonly refusals: Partial<
    Record<"events" | "transfers" | "recoveries" | "attempts" | "attachments" | "deliveries", string>
  >
  readonly deliveries: ReadonlyArray<Delivery>
}

const settle = async <T,>(p: Promise<T>): Promise<{ ok: T } | { refused: string }> => {
  try {
    return { ok: await p }
  } catch (e) {
    return { refused: sentence(e) }
  }
}

const loadRelated = async (id: string): Promise<Related> => {
  const [events, transfers, recoveries, attempts, attachments, deliveries] = await Promise.all([
    settle(api<Answer<"/v1/events", "get">>("GET", `/v1/events?deposit_request_id=${id}&limit=100`)),
    settle(
      api<Answer<"/v1/deposit-requests/{id}/transfers", "get">>("GET", `/v1/deposit-requests/${id}/transfers`)
    ),
    settle(
      api<Answer<"/v1/deposit-requests/{id}/recoveries", "get">>(
        "GET",
        `/v1/deposit-requests/${id}/recoveries`
      )
    ),
    settle(
      api<Answer<"/v1/deposit-requests/{id}/verification-attempts", "get">>(
        "GET",
        `/v1/deposit-requests/${id}/verification-attempts?limit=100`
      )
    ),
    settle(
      api<Answer<"/v1/deposit-requests/{id}/attachments", "get">>(
        "GET",
        `/v1/deposit-requests/${id}/attachments`
      )
    ),
    settle(
      api<Answer<"/v1/deposit-requests/{id}/deliveries", "get">>(
        "GET",
        `/v1/deposit-requests/${id}/deliveries`
      )
    )
  ])
  const refusals: Related["refusals"] = {}
  const take = <T, K extends keyof Related["refusals"]>(
    r: { ok: T } | { refused: string },
    k: K
  ): T | undefined => {
    if ("ok" in r) return r.ok
    refusals[k] = r.refused
    return undefined
  }
  return {
    events: [...(take(events, "events")?.events ?? [])].sort((a, b) =>
      a.occurred_at.localeCompare(b.occurred_at)
    ),
    transfers: take(transfers, "transfers")?.transfers ?? [],
    recoveries: take(recoveries, "recoveries")?.recoveries ?? [],
    attempts: take(attempts, "attempts")?.verification_attempts ?? [],
    attachments: take(attachments, "attachments")?.attachments ?? [],
    deliveries: take(deliveries, "deliveries")?.deliveries ?? [],
    refusals
  }
}

/** A copy button beside a value, when there is one. */
const Copyable = ({ text, label }: { text: string | null; label: string }) =>
  text === null ? null : (
    <>
      {" "}
      <CopyButton text={text} label="Copy" ariaLabel={label} />
    </>
  )

/** A customer's or issuer's name, read from its own route, with its id to copy; the id alone if it cannot be read. */
const Named = ({ id, path }: { id: string; path: "/v1/customers" | "/v1/issuers" }) => {
  const named = useLoad(async () => {
    const record = await api<{ name?: string; display_name?: string }>("GET", `${path}/${id}`)
    return record.name ?? record.display_name ?? null
  }, [id])
  return (
    <>
      {named.data === undefined || named.data === null ? null : <span class="name">{named.data} </span>}
      <code>{id}</code>
      <Copyable text={id} label={`Copy ${id}`} />
    </>
  )
}

/** Asks for a short-lived link to the PDF and opens it (the browser downloads it: the answer names the file). */
const Download = ({ attachment }: { attachment: Attachment }) => {
  const link = useAction()
  return (
    <>
      {" "}
      <button
        type="button"
        class="secondary"
        disabled={link.busy}
        aria-label={`Download ${attachment.file_name}`}
        onClick={() =>
          void link.run(async () => {
            const { download_url } = await api<Answer<"/v1/attachments/{id}/download-link", "get">>(
              "GET",
              `/v1/attachments/${attachment.id}/download-link`
            )
            location.assign(download_url)
            return undefined
          })
        }
      >
        Download
      </button>
      <Refused error={link.error} docUrl={link.docUrl} />
    </>
  )
}

const sum = (units: ReadonlyArray<string>) => units.reduce((a, u) => a + BigInt(u), 0n).toString()

const EVENT_WORDS: Record<string, string> = {
  "deposit_request.ready": "Ready: the payer's wallet is known and the address given",
  "verification.approved": "The payer was verified",
  "deposit_request.deposited": "Paid in full",
  "deposit_request.settled": "Settled to the payout address",
  "deposit_request.expired": "Expired",
  "deposit_request.returned": "Money returned to the payer",
  "deposit_request.recovered_funds": "Funds recovered",
  "deposit_request.likely_unsolicited": "A transfer looks unsolicited",
  "deposit_request.needs_attention": "Needs attention"
}

/** One request: its amounts, history, money movements and documents, kept current by a long poll. */
export const RequestView = ({ id, sandbox }: { id: string; sandbox: boolean }) => {
  const [request, setRequest] = useState<DepositRequest>()
  const [error, setError] = useState<string>()
  const [live, setLive] = useState("")
  const related = useLoad(() => loadRelated(id), [id, request?.version])
  const resume = useAction()
  // A change's webhook deliveries are attempted just after it is committed, so the first read after a change
  // often misses them: read once more a few seconds later (the change itself bumps no version again).
  const { reload } = related
  useEffect(() => {
    if (request === undefined) return
    const later = setTimeout(reload, 3_000)
    return () => clearTimeout(later)
  }, [request?.version])

  useEffect(() => {
    const controller = new AbortController()
    const follow = async () => {
      let version: string | undefined
      let delay = 1_000
      while (!controller.signal.aborted) {
        try {
          const path =
            version === undefined
              ? `/v1/deposit-requests/${encodeURIComponent(id)}`
              : `/v1/deposit-requests/${encodeURIComponent(id)}?wait_for=change&version=${encodeURIComponent(version)}&timeout=25`
          const asked = Date.now()
          const fresh = await api<Answer<"/v1/deposit-requests/{id}", "get">>(
            "GET",
            path,
            undefined,
            {},
            controller.signal
          )
          if (version !== undefined && fresh.version !== version)
            setLive(`Updated: now ${fresh.status.replaceAll("_", " ")}.`)
          // Answered at once with nothing new: pause before asking again, not a busy loop.
          if (fresh.version === version && Date.now() - asked < 1_000)
            await new Promise((r) => setTimeout(r, delay))
          version = fresh.version
          setRequest(fresh)
          setError(undefined)
          delay = 1_000
        } catch (e) {
          if (controller.signal.aborted) return
          setError(sentence(e))
          if (version === undefined) return
          await new Promise((r) => setTimeout(r, delay))
          delay = Math.min(delay * 2, 15_000)
        }
      }
    }
    void follow()
    return () => controller.abort()
  }, [id])

  if (request === undefined)
    return (
      <>
        <h1 tabIndex={-1}>Request {id}</h1>
        {error === undefined ? <Loading what="the request" /> : <Refused error={error} />}
      </>
    )
  const r = related.data
  // Each amount once: a recovery is the ledger entry of an amount returned (the spec), so the return transfers are
  // the same money and are listed below, not added again. Held is what is on the address neither settled nor returned.
  const returned = sum((r?.recoveries ?? []).map((x) => x.amount_base_units))
  const settledUnits = request.settlement?.amount_base_units ?? "0"
  const held = BigInt(request.received_base_units) - BigInt(settledUnits) - BigInt(returned)
  const stuck = request.status === "needs_attention" || request.attention !== null
  return (
    <>
      <p>
        <a href="#/requests">All requests</a> ·{" "}
        <a href={`#/inspector/${request.id}`}>Inspect its lifecycle</a>
      </p>
      <h1 tabIndex={-1}>{request.heading || `Request ${request.id}`}</h1>
      <p>
        <code>{request.id}</code> <Copyable text={request.id} label="Copy the id" />{" "}
        <Status status={request.status} />{" "}
        <span role="status" id="live-status">
          {live}
        </span>
      </p>
      <Refused error={error} />
      <dl class="amounts">
        <div>
          <dt>Requested</dt>
          <dd id="amount-requested">
            <Money units={request.amount_base_units} />
          </dd>
        </div>
        <div>
          <dt>Received</dt>
          <dd id="amount-received">
            <Money units={request.received_base_units} />
          </dd>
        </div>
        <div>
          <dt>Settled</dt>
          <dd id="amount-settled">
            <Money units={settledUnits} />
          </dd>
        </div>
        <div>
          <dt>Returned</dt>
          <dd id="amount-returned">
            <Money units={returned} />
          </dd>
        </div>
        <div>
          <dt>Held</dt>
          <dd id="amount-held">
            <Money units={(held > 0n ? held : 0n).toString()} />
          </dd>
        </div>
      </dl>
      <p class="hint" id="amounts-defined">
        Received = settled to you + returned to the payer + held. Returned counts each amount sent back to the
        payer's wallet once it is recorded (a recovery below); held is on the deposit address, neither settled
        nor returned yet.
      </p>
      {stuck ? (
        <section aria-labelledby="attention-title">
          <h2 id="attention-title">Needs attention</h2>
          {request.attention === null ? null : (
            <dl class="facts">
              <dt>What</dt>
              <dd>{request.attention.message}</dd>
              <dt>Code</dt>
              <dd>
                <code>{request.attention.code}</code>
              </dd>
              <dt>Since</dt>
              <dd>
                <When at={request.attention.since} />
              </dd>
              <dt>What to do</dt>
              <dd>{request.attention.resolution}</dd>
            </dl>
          )}
          <button
            type="button"
            disabled={resume.busy}
            onClick={() =>
              void resume.run(async () => {
                const resumed = await api<Answer<"/v1/deposit-requests/{id}/resume", "post">>(
                  "POST",
                  `/v1/deposit-requests/${request.id}/resume`,
                  {}
                )
                setRequest(resumed)
                // Said outside this section, which goes once the request is no longer paused.
                setLive(`Resumed: now ${resumed.status.replaceAll("_", " ")}.`)
              })
            }
          >
            Resume
          </button>
          <Refused error={resume.error} docUrl={resume.docUrl} />
        </section>
      ) : null}
      {request.cancellation !== null ? (
        <p id="cancellation">
          Cancelled <When at={request.cancellation.cancelled_at} />
          {request.cancellation.reason === null ? "." : `: ${request.cancellation.reason}`}
        </p>
      ) : request.status === "awaiting_payer" || request.status === "ready" ? (
        <Confirm
          label="Cancel this request"
          question="Cancel this request? Nobody has paid it yet; it expires now, and a transfer that arrives later goes back to its sender."
          confirmLabel="Cancel the request"
          onConfirm={async () => {
            const ended = await api<Answer<"/v1/deposit-requests/{id}/cancel", "post">>(
              "POST",
              `/v1/deposit-requests/${request.id}/cancel`,
              {}
            )
            setRequest(ended)
            setLive("Cancelled: now expired.")
          }}
        />
      ) : null}
      <section aria-labelledby="details-title">
        <h2 id="details-title">Details</h2>
        <dl class="facts">
          <dt>Checkout link</dt>
          <dd>
            <a href={request.checkout_url} target="_blank" rel="noopener noreferrer">
              {request.checkout_url}
            </a>
            {sandbox ? (
              <>
                {" "}
                (
                <a
                  href={request.checkout_url}
                  target="_blank"
                  rel="noopener noreferrer"
                  id="sandbox-pay-link"
                >
                  pay it with the checkout's sandbox panel
                </a>
                )
              </>
            ) : null}
          </dd>
          <dt>Reference</dt>
          <dd>{request.reference || "—"}</dd>
          <dt>Created</dt>
          <dd>
            <When at={request.created_at} />
          </dd>
          <dt>Expires</dt>
          <dd>
            <When at={request.expires_at} />
          </dd>
          <dt>Deposit address</dt>
          <dd class="mono">
            {request.address ?? "— (given once the payer's wallet is known)"}
            <Copyable text={request.address} label="Copy the deposit address" />
          </dd>
          <dt>Payer wallet</dt>
          <dd class="mono">
            {request.payer_wallet ?? "—"}
            <Copyable text={request.payer_wallet} label="Copy the payer's wallet" />
          </dd>
          <dt>Payer check</dt>
          <dd>{request.payer_policy_mode.replaceAll("_", " ")}</dd>
          {request.customer_id === null ? null : (
            <>
              <dt>Customer</dt>
              <dd id="customer">
                <Named id={request.customer_id} path="/v1/customers" />
              </dd>
            </>
          )}
          <dt>Issuer</dt>
          <dd id="issuer">
            <Named id={request.issuer_id} path="/v1/issuers" />
          </dd>
          <dt>Metadata</dt>
          <dd class="mono">{JSON.stringify(request.metadata)}</dd>
          {request.settlement === null ? null : (
            <>
              <dt>Settled to</dt>
              <dd class="mono">
                {request.settlement.payout_address}
                <Copyable text={request.settlement.payout_address} label="Copy the payout address" />
              </dd>
            </>
          )}
        </dl>
      </section>
      {r === undefined ? (
        <Loading what="the request's history" />
      ) : (
        <>
          <section aria-labelledby="timeline-title">
            <h2 id="timeline-title">Timeline</h2>
            <Refused error={r.refusals.events} />
            <ol class="timeline" id="timeline">
              <li>
                <When at={request.created_at} /> — Created
              </li>
              {r.events.map((e) => (
                <li key={e.id} data-type={e.type}>
                  <When at={e.occurred_at} /> — {EVENT_WORDS[e.type] ?? e.type} <code>{e.type}</code>
                </li>
              ))}
            </ol>
          </section>
          <section aria-labelledby="transfers-title">
            <h2 id="transfers-title">Transfers</h2>
            <Refused error={r.refusals.transfers} />
            {r.transfers.length === 0 ? (
              <p>No transfers yet.</p>
            ) : (
              <Scroll label="Transfers">
                <table id="transfers">
                  <thead>
                    <tr>
                      <th scope="col">Direction</th>
                      <th scope="col" class="num">
                        Amount
                      </th>
                      <th scope="col">Block</th>
                      <th scope="col">Transaction</th>
                      <th scope="col">When</th>
                    </tr>
                  </thead>
                  <tbody>
                    {r.transfers.map((t) => (
                      <tr key={`${t.transaction_hash}-${t.log_index ?? ""}-${t.kind}`}>
                        <td>
                          {t.direction === "in" ? "In" : "Out"}: {t.kind} ({t.finality})
                        </td>
                        <td class="num">
                          <Money units={t.amount_base_units} />
                        </td>
                        <td class="num">{t.block_number ?? "—"}</td>
                        <td class="mono">
                          {t.transaction_hash}
                          <Copyable text={t.transaction_hash} label="Copy the transaction hash" />
                        </td>
                        <td>
                          <When at={t.at} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </Scroll>
            )}
          </section>
          <section aria-labelledby="recoveries-title">
            <h2 id="recoveries-title">Recoveries</h2>
            <Refused error={r.refusals.recoveries} />
            {r.recoveries.length === 0 ? (
              <p>Nothing recovered.</p>
            ) : (
              <ul class="plain">
                {r.recoveries.map((x) => (
                  <li key={x.id}>
                    <Money units={x.amount_base_units} /> — {x.reason}, block {x.block_number},{" "}
                    <When at={x.recovered_at} /> <span class="mono">{x.transaction_hash}</span>
                  </li>
                ))}
              </ul>
            )}
          </section>
          <section aria-labelledby="attempts-title">
            <h2 id="attempts-title">Verification attempts</h2>
            <Refused error={r.refusals.attempts} />
            {r.attempts.length === 0 ? (
              <p>No attempts.</p>
            ) : (
              <ul class="plain">
                {r.attempts.map((a) => (
                  <li key={a.id}>
                    <When at={a.attempted_at} /> — {a.kind.replaceAll("_", " ")}: {a.outcome}
                    {a.reason === null ? "" : ` (${a.reason})`}
                    {a.wallet === null ? "" : ` from ${a.wallet}`}
                  </li>
                ))}
              </ul>
            )}
          </section>
          <Attachments
            request={request}
            attachments={r.attachments}
            refused={r.refusals.attachments}
            reload={related.reload}
          />
          <section aria-labelledby="deliveries-title">
            <h2 id="deliveries-title">Webhook deliveries</h2>
            <Refused error={r.refusals.deliveries} />
            {r.refusals.deliveries === undefined && r.deliveries.length === 0 ? <p>No deliveries.</p> : null}
            {r.deliveries.length === 0 ? null : (
              <ul class="plain">
                {r.deliveries.map((d) => (
                  <li key={d.id}>
                    <When at={d.attempted_at} /> — {d.event_type} to <code>{d.webhook_id}</code>:{" "}
                    {outcomeInWords(d)}
                    {d.response_status === null ? "" : ` (HTTP ${d.response_status})`}
                    {d.error_message ? ` — ${d.error_message}` : ""} ·{" "}
                    <a href={`#/inspector/${d.event_id}`} class="step-link">
                      its step
                    </a>
                  </li>
                ))}
              </ul>
            )}
          </section>
        </>
      )}
    </>
  )
}

/**
 * The request's PDFs: listed, and one uploaded straight to the object store from the page (the service hands out
 * a presigned PUT), checked, then added to the request's list.
 */
const Attachments = ({
  request,
  attachments,
  refused,
  reload
}: {
  request: DepositRequest
  attachments: ReadonlyArray<Attachment>
  refused: string | undefined
  reload: () => void
}) => {
  const upload = useAction()
  return (
    <section aria-labelledby="attachments-title">
      <h2 id="attachments-title">Attachments</h2>
      <Refused error={refused} />
      {attachments.length === 0 ? (
        <p>No attachments.</p>
      ) : (
        <ul class="plain" id="attachments">
          {attachments.map((a) => (
            <li key={a.id}>
              {a.file_name} — {Math.ceil(a.size_bytes / 1024)} KB, {a.status}
              {a.status === "uploaded" ? <Download attachment={a} /> : null}
            </li>
          ))}
        </ul>
      )}
      <form
        onSubmit={(e) => {
          e.preventDefault()
          const input = e.currentTarget.elements.namedItem("file") as HTMLInputElement
          const file = input.files?.[0]
          const form = e.currentTarget
          void upload.run(async () => {
            if (file === undefined) throw new Error("Choose a PDF file first.")
            const made = await api<Answer<"/v1/attachments", "post">>("POST", "/v1/attachments", {
              file_name: file.name,
              size_bytes: file.size
            })
            if (made.upload === null) throw new Error("The service gave no upload link for this file.")
            let put: Response
            try {
              put = await fetch(made.upload.url, {
                method: made.upload.method,
                headers: made.upload.headers,
                body: file
              })
            } catch {
              throw new Error("The file could not be sent to storage. Check the connection and try again.")
            }
            if (!put.ok) throw new Error(`Storage refused the file (HTTP ${put.status}).`)
            const checked = await api<Answer<"/v1/attachments/{id}", "get">>(
              "GET",
              `/v1/attachments/${made.id}`
            )
            if (checked.status !== "uploaded")
              throw new Error(checked.rejection_reason ?? `The file is ${checked.status}, not accepted.`)
            await api("PUT", `/v1/deposit-requests/${request.id}/attachments`, {
              attachment_ids: [...attachments.map((a) => a.id), made.id]
            })
            form.reset()
            reload()
            return `${file.name} attached.`
          })
        }}
      >
        <div class="row">
          <Field id="attachment-file" label="Attach a PDF">
            <input id="attachment-file" name="file" type="file" accept="application/pdf" required />
          </Field>
          <button type="submit" disabled={upload.busy}>
            Upload
          </button>
        </div>
      </form>
      <Refused error={upload.error} docUrl={upload.docUrl} />
      <Notice text={upload.notice} />
    </section>
  )
}
