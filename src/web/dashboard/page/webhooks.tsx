import { useState } from "preact/hooks"
import { api, query } from "./api"
import type {
  Answer,
  CreatedWebhookEndpoint,
  Delivery,
  DeliveryDetail,
  RotatedWebhookEndpoint,
  WebhookEndpoint
} from "./types"
import { Confirm, Field, Loading, Notice, OnceSecret, Refused, Scroll, useAction, useLoad, When } from "./ui"

/** The types an endpoint can subscribe to (`webhook.test` always reaches the endpoint it was sent to). */
const SUBSCRIBABLE = [
  "deposit_request.ready",
  "verification.approved",
  "deposit_request.deposited",
  "deposit_request.settled",
  "deposit_request.expired",
  "deposit_request.returned",
  "deposit_request.recovered_funds",
  "deposit_request.likely_unsolicited",
  "deposit_request.needs_attention"
]

/**
 * The event types an endpoint receives: every type, or the ones ticked. Read from the form by `pickedEvents`.
 * `name` tells several pickers on one page apart.
 */
const EventPicker = ({ name, initial }: { name: string; initial: ReadonlyArray<string> }) => {
  const [all, setAll] = useState(initial.includes("*"))
  return (
    <fieldset class="events">
      <legend>Event types</legend>
      <label>
        <input type="radio" name={`${name}-scope`} value="all" checked={all} onChange={() => setAll(true)} />{" "}
        All event types
      </label>
      <label>
        <input
          type="radio"
          name={`${name}-scope`}
          value="some"
          checked={!all}
          onChange={() => setAll(false)}
        />{" "}
        Only these:
      </label>
      {SUBSCRIBABLE.map((t) => (
        <label key={t}>
          <input
            type="checkbox"
            name={`${name}-type`}
            value={t}
            disabled={all}
            defaultChecked={initial.includes(t)}
          />{" "}
          <span class="mono">{t}</span>
        </label>
      ))}
    </fieldset>
  )
}

/** The picker's choice as `enabled_events`: `["*"]`, or the ticked types (the API refuses none ticked). */
const pickedEvents = (form: HTMLFormElement, name: string): Array<string> => {
  const scope = form.querySelector<HTMLInputElement>(`input[name="${name}-scope"]:checked`)
  if (scope?.value !== "some") return ["*"]
  return [...form.querySelectorAll<HTMLInputElement>(`input[name="${name}-type"]:checked`)].map(
    (i) => i.value
  )
}

const eventsInWords = (enabled: ReadonlyArray<string>) =>
  enabled.includes("*") ? "every event type" : enabled.join(", ")

/** Changes which event types an endpoint receives; events that happen afterwards follow it. */
const ChangeEvents = ({ endpoint, reload }: { endpoint: WebhookEndpoint; reload: () => void }) => {
  const action = useAction()
  const name = `events-${endpoint.id}`
  return (
    <form
      aria-label={`Event types of ${endpoint.url}`}
      onSubmit={(e) => {
        e.preventDefault()
        const form = e.currentTarget
        void action.run(async () => {
          await api("PATCH", `/v1/webhooks/${endpoint.id}`, { enabled_events: pickedEvents(form, name) })
          reload()
          return "Event types saved."
        })
      }}
    >
      <EventPicker name={name} initial={endpoint.enabled_events} />
      <button type="submit" disabled={action.busy}>
        Save event types
      </button>
      <Refused error={action.error} docUrl={action.docUrl} />
      <Notice text={action.notice} />
    </form>
  )
}

const loadEndpoints = () => api<Answer<"/v1/webhooks", "get">>("GET", "/v1/webhooks?limit=100")

/**
 * Rotating a secret: the endpoint itself gets a new secret, shown once, and the previous one keeps signing beside it
 * until it expires, so a receiver moves over at its own pace and no second endpoint is ever registered.
 */
const Rotate = ({ endpoint }: { endpoint: WebhookEndpoint }) => {
  const [rotated, setRotated] = useState<RotatedWebhookEndpoint>()
  const action = useAction()
  return (
    <section class="secret" aria-label={`Rotate the secret of ${endpoint.url}`}>
      {rotated === undefined ? (
        <>
          <p>
            The endpoint gets a new secret. For 24 hours every delivery is signed with both the new and the
            current secret, so your receiver can move over without missing an event.
          </p>
          <button
            type="button"
            disabled={action.busy}
            onClick={() =>
              void action.run(async () => {
                setRotated(
                  await api<RotatedWebhookEndpoint>("POST", `/v1/webhooks/${endpoint.id}/rotate-secret`, {})
                )
              })
            }
          >
            Roll the secret
          </button>
        </>
      ) : (
        <OnceSecret title="New signing secret" value={rotated.secret}>
          <p id="secret-grace" role="status">
            {rotated.previous_secret_expires_at === null ? (
              "The previous secret no longer signs."
            ) : (
              <>
                The previous secret keeps signing beside it until{" "}
                <When at={rotated.previous_secret_expires_at} />.
              </>
            )}
          </p>
        </OnceSecret>
      )}
      <Refused error={action.error} docUrl={action.docUrl} />
    </section>
  )
}

const EndpointRow = ({ endpoint, reload }: { endpoint: WebhookEndpoint; reload: () => void }) => {
  const [rotating, setRotating] = useState(false)
  const [choosing, setChoosing] = useState(false)
  const test = useAction()
  return (
    <li data-id={endpoint.id}>
      <p>
        <a href={`#/webhooks/${endpoint.id}`}>
          <span class="mono">{endpoint.url}</span>
        </a>{" "}
        <code>{endpoint.id}</code> — created <When at={endpoint.created_at} />
        {endpoint.disabled_at === null ? (
          ""
        ) : (
          <>
            , disabled <When at={endpoint.disabled_at} />
          </>
        )}
        <br />
        Receives {eventsInWords(endpoint.enabled_events)}
      </p>
      {endpoint.disabled_at !== null ? null : (
        <div class="row">
          <button
            type="button"
            class="secondary"
            disabled={test.busy}
            onClick={() =>
              void test.run(async () => {
                const sent = await api<Answer<"/v1/webhooks/{id}/test", "post">>(
                  "POST",
                  `/v1/webhooks/${endpoint.id}/test`,
                  {}
                )
                return `Test event ${sent.event_id} sent; see its delivery in the endpoint's log.`
              })
            }
          >
            Send a test event
          </button>
          <button
            type="button"
            class="secondary"
            onClick={() => setRotating(!rotating)}
            aria-expanded={rotating}
          >
            Rotate secret
          </button>
          <button
            type="button"
            class="secondary"
            onClick={() => setChoosing(!choosing)}
            aria-expanded={choosing}
          >
            Event types
          </button>
          <Confirm
            label="Disable"
            question={`Disable ${endpoint.url}? It receives nothing more, and cannot be enabled again.`}
            confirmLabel="Disable it"
            onConfirm={async () => {
              await api("POST", `/v1/webhooks/${endpoint.id}/disable`, {})
              reload()
            }}
          />
        </div>
      )}
      {rotating ? <Rotate endpoint={endpoint} /> : null}
      {choosing && endpoint.disabled_at === null ? (
        <ChangeEvents endpoint={endpoint} reload={reload} />
      ) : null}
      <Refused error={test.error} docUrl={test.docUrl} />
      <Notice text={test.notice} />
    </li>
  )
}

export const Webhooks = () => {
  const endpoints = useLoad(loadEndpoints, [])
  const [created, setCreated] = useState<CreatedWebhookEndpoint>()
  const create = useAction()
  return (
    <>
      <h1 tabIndex={-1}>Webhooks</h1>
      <section aria-labelledby="new-webhook-title">
        <h2 id="new-webhook-title">Add an endpoint</h2>
        <form
          onSubmit={(e) => {
            e.preventDefault()
            const form = e.currentTarget
            const url = (form.elements.namedItem("url") as HTMLInputElement).value.trim()
            const enabled_events = pickedEvents(form, "new-webhook")
            void create.run(async () => {
              setCreated(await api<CreatedWebhookEndpoint>("POST", "/v1/webhooks", { url, enabled_events }))
              form.reset()
              endpoints.reload()
            })
          }}
        >
          <div class="row">
            <Field id="webhook-url" label="Endpoint URL" hint="https, reachable from the internet">
              <input id="webhook-url" name="url" type="url" required aria-describedby="webhook-url-hint" />
            </Field>
          </div>
          <EventPicker name="new-webhook" initial={["*"]} />
          <button type="submit" disabled={create.busy}>
            Add endpoint
          </button>
        </form>
        <Refused error={create.error} docUrl={create.docUrl} />
        {created === undefined ? null : (
          <OnceSecret title={`Signing secret of ${created.url}`} value={created.secret} />
        )}
      </section>
      <section aria-labelledby="endpoints-title">
        <h2 id="endpoints-title">Endpoints</h2>
        <Refused error={endpoints.error} />
        {endpoints.data === undefined ? (
          endpoints.error === undefined ? (
            <Loading what="endpoints" />
          ) : null
        ) : endpoints.data.webhooks.length === 0 ? (
          <p>No endpoints yet.</p>
        ) : (
          <ul class="plain" id="endpoints">
            {endpoints.data.webhooks.map((w) => (
              <EndpointRow key={w.id} endpoint={w} reload={endpoints.reload} />
            ))}
          </ul>
        )}
      </section>
    </>
  )
}

/**
 * Every attempt that did not succeed failed, whatever comes next (the API's `outcome=failed` filter reads it so
 * too): `retrying` is a failed attempt with another planned, `failed` the last one, `cancelled` one whose retries
 * stopped (the endpoint disabled).
 */
const attemptFailed = (d: Delivery) => d.outcome !== "succeeded"
const AFTER_FAILURE: Record<string, string> = {
  retrying: "will be retried",
  failed: "no more retries",
  cancelled: "retries cancelled"
}

/** An attempt's outcome in words: "Succeeded", or "Failed (what comes next)". */
export const outcomeInWords = (d: Delivery) =>
  attemptFailed(d) ? `Failed (${AFTER_FAILURE[d.outcome] ?? d.outcome})` : "Succeeded"

/** A body as text: pretty-printed when it is JSON, as received otherwise. Always text, never markup. */
const readable = (body: string) => {
  try {
    return JSON.stringify(JSON.parse(body), null, 2)
  } catch {
    return body
  }
}

/** What one attempt sent (the event's JSON and the headers) and what came back. */
const AttemptDetail = ({ webhookId, d }: { webhookId: string; d: Delivery }) => {
  const detail = useLoad(
    () => api<DeliveryDetail>("GET", `/v1/webhooks/${webhookId}/deliveries/${d.id}`),
    [webhookId, d.id]
  )
  if (detail.data === undefined) {
    return detail.error === undefined ? <Loading what="the attempt" /> : <Refused error={detail.error} />
  }
  const { request, response } = detail.data
  return (
    <>
      <h3>Event {d.event_id}</h3>
      <p>
        <a href={`#/inspector/${d.event_id}`} class="step-link">
          The step that emitted it, in the inspector
        </a>
      </p>
      <pre class="wire" id={`event-${d.id}`}>
        {readable(request.body)}
      </pre>
      <h3>Request headers</h3>
      <pre class="wire">
        {request.headers === null
          ? "Not kept for this attempt."
          : Object.entries(request.headers)
              .map(([k, v]) => `${k}: ${v}`)
              .join("\n")}
      </pre>
      <h3>Answer</h3>
      {response === null ? (
        <p>No answer{d.error_message ? `: ${d.error_message}` : "."}</p>
      ) : (
        <>
          <p>
            HTTP {response.status}
            {response.body_truncated ? " — only the first 4096 characters of the body are kept" : ""}
          </p>
          <pre class="wire" id={`answer-${d.id}`}>
            {response.body === null ? "Not kept for this attempt." : readable(response.body)}
          </pre>
        </>
      )}
    </>
  )
}

const DeliveryRow = ({
  d,
  redeliver,
  open,
  toggle
}: {
  d: Delivery
  redeliver: (d: Delivery) => void
  open: boolean
  toggle: () => void
}) => (
  <tr data-outcome={d.outcome}>
    <td>
      <When at={d.attempted_at} />
    </td>
    <td>
      {d.event_type}
      <br />
      <code>{d.event_id}</code>
    </td>
    <td>
      {attemptFailed(d) ? (
        <>
          <strong>Failed</strong> ({AFTER_FAILURE[d.outcome] ?? d.outcome})
        </>
      ) : (
        "Succeeded"
      )}
      {d.redelivery ? " (redelivery)" : ""}, attempt {d.attempt}
    </td>
    <td>
      {d.response_status === null ? "no answer" : `HTTP ${d.response_status}`}
      {d.error_message ? ` — ${d.error_message}` : ""}
      {d.next_attempt_at === null ? null : (
        <>
          ; next try <When at={d.next_attempt_at} />
        </>
      )}
    </td>
    <td class="num">{d.duration_ms} ms</td>
    <td>
      <button
        type="button"
        class="secondary"
        onClick={toggle}
        aria-expanded={open}
        aria-label={`Details of attempt ${d.attempt} of ${d.event_id}`}
      >
        Details
      </button>{" "}
      <button type="button" class="secondary" onClick={() => redeliver(d)}>
        Redeliver
      </button>
    </td>
  </tr>
)

/** One endpoint's delivery log, failures first-class (a filter for them, and marked in the table). */
export const WebhookView = ({ id }: { id: string }) => {
  const [outcome, setOutcome] = useState("")
  const endpoint = useLoad(() => api<WebhookEndpoint>("GET", `/v1/webhooks/${id}`), [id])
  const deliveries = useLoad(
    () =>
      api<Answer<"/v1/webhooks/{id}/deliveries", "get">>(
        "GET",
        `/v1/webhooks/${id}/deliveries${query({ limit: "100", outcome })}`
      ),
    [id, outcome]
  )
  const redeliver = useAction()
  const [opened, setOpened] = useState<string>()
  const rows = deliveries.data?.deliveries ?? []
  const failed = rows.filter(attemptFailed).length
  return (
    <>
      <p>
        <a href="#/webhooks">All endpoints</a>
      </p>
      <h1 tabIndex={-1}>Deliveries to {endpoint.data?.url ?? id}</h1>
      <Refused error={endpoint.error} />
      <div class="row">
        <Field id="delivery-outcome" label="Show">
          <select id="delivery-outcome" value={outcome} onChange={(e) => setOutcome(e.currentTarget.value)}>
            <option value="">Every delivery</option>
            <option value="failed">Failed only</option>
            <option value="succeeded">Succeeded only</option>
          </select>
        </Field>
        <button type="button" class="secondary" onClick={deliveries.reload}>
          Refresh
        </button>
      </div>
      <Refused error={deliveries.error} />
      <Refused error={redeliver.error} docUrl={redeliver.docUrl} />
      <Notice text={redeliver.notice} />
      {deliveries.data === undefined ? (
        deliveries.error === undefined ? (
          <Loading what="deliveries" />
        ) : null
      ) : rows.length === 0 ? (
        <p>No deliveries.</p>
      ) : (
        <>
          <p id="failed-count">
            {failed === 0
              ? "No failed deliveries shown."
              : `${failed} failed ${failed === 1 ? "delivery" : "deliveries"} shown.`}
          </p>
          <Scroll label="Deliveries">
            <table id="deliveries">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Event</th>
                  <th scope="col">Outcome</th>
                  <th scope="col">Answer</th>
                  <th scope="col" class="num">
                    Took
                  </th>
                  <th scope="col">
                    <span class="visually-hidden">Action</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.map((d) => (
                  <DeliveryRow
                    key={d.id}
                    d={d}
                    open={opened === d.id}
                    toggle={() => setOpened(opened === d.id ? undefined : d.id)}
                    redeliver={(x) =>
                      void redeliver.run(async () => {
                        await api("POST", `/v1/events/${x.event_id}/redeliver`, { webhook_id: id })
                        deliveries.reload()
                        return `Event ${x.event_id} queued for redelivery.`
                      })
                    }
                  />
                ))}
              </tbody>
            </table>
          </Scroll>
          {(() => {
            const d = rows.find((r) => r.id === opened)
            return d === undefined ? null : (
              <section id="attempt" aria-labelledby="attempt-title">
                <h2 id="attempt-title" tabIndex={-1}>
                  Attempt {d.attempt}, <When at={d.attempted_at} />
                </h2>
                <AttemptDetail webhookId={id} d={d} />
              </section>
            )
          })()}
        </>
      )}
    </>
  )
}

const EVENT_TYPES = [
  "deposit_request.ready",
  "verification.approved",
  "deposit_request.deposited",
  "deposit_request.settled",
  "deposit_request.expired",
  "deposit_request.returned",
  "deposit_request.recovered_funds",
  "deposit_request.likely_unsolicited",
  "deposit_request.needs_attention",
  "webhook.test"
]

/** The account's events, newest first, by type. */
export const Events = () => {
  const [type, setType] = useState("")
  const [cursor, setCursor] = useState<string>()
  const events = useLoad(
    () =>
      api<Answer<"/v1/events", "get">>(
        "GET",
        `/v1/events${query({ type, limit: "50", starting_after: cursor })}`
      ),
    [type, cursor]
  )
  return (
    <>
      <h1 tabIndex={-1}>Events</h1>
      <Field id="event-type" label="Type">
        <select
          id="event-type"
          value={type}
          onChange={(e) => {
            setCursor(undefined)
            setType(e.currentTarget.value)
          }}
        >
          <option value="">Every type</option>
          {EVENT_TYPES.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
      </Field>
      <Refused error={events.error} />
      {events.data === undefined ? (
        events.error === undefined ? (
          <Loading what="events" />
        ) : null
      ) : events.data.events.length === 0 ? (
        <p>No events.</p>
      ) : (
        <>
          <Scroll label="Events">
            <table id="events">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Type</th>
                  <th scope="col">About</th>
                </tr>
              </thead>
              <tbody>
                {events.data.events.map((e) => (
                  <tr key={e.id}>
                    <td>
                      <When at={e.occurred_at} />
                    </td>
                    <td>
                      {e.type}
                      <br />
                      <code>{e.id}</code>
                    </td>
                    <td>
                      {"deposit_request" in e.data ? (
                        <a href={`#/requests/${e.data.deposit_request.id}`}>{e.data.deposit_request.id}</a>
                      ) : "webhook_id" in e.data ? (
                        <a href={`#/webhooks/${e.data.webhook_id}`}>{e.data.webhook_id}</a>
                      ) : (
                        "—"
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </Scroll>
          {events.data.next_cursor === null ? null : (
            <button
              type="button"
              class="secondary"
              onClick={() => setCursor(events.data?.next_cursor ?? undefined)}
            >
              Older events
            </button>
          )}
        </>
      )}
    </>
  )
}
