import { Effect } from "effect"
import { apiCaller, type ApiCall, apiKeyOf, expectJson, refusal } from "./ApiClient"
import { CliError, type CliValues } from "./Output"
import { attempt, runCommand } from "./Run"
import { serviceUrlOf } from "./ServiceUrl"

/**
 * `deposits events resend evt_… [--to wh_…]`, as `stripe events resend`: the event again (same id, same bytes, a
 * new attempt series marked as a redelivery) through `POST /v1/events/{id}/redeliver`, to the endpoint or listener
 * named, or else to every endpoint and listener of the account that got it (infra/decisions/0091-cli-developer-loop.md).
 */

/** Pages of the events list read to find the event when no `--to` names where it goes. */
const MAX_EVENT_PAGES = 20

interface EventBody {
  readonly id: string
  readonly type: string
  readonly data: { readonly deposit_request?: { readonly id: string } }
}

const findEvent = async (call: ApiCall, eventId: string) => {
  let cursor: string | undefined
  for (let page = 0; page < MAX_EVENT_PAGES; page++) {
    const listed = await expectJson<{ events: ReadonlyArray<EventBody>; next_cursor: string | null }>(
      await call("GET", `/v1/events?limit=100${cursor === undefined ? "" : `&starting_after=${cursor}`}`),
      200,
      "the events list"
    )
    const found = listed.events.find((e) => e.id === eventId)
    if (found !== undefined) return found
    if (listed.next_cursor === null) break
    cursor = listed.next_cursor
  }
  throw new CliError(`no event ${eventId} in this account's recent events`)
}

/** Every endpoint and listener that had a delivery of the event, from the delivery log of its request. */
const recipientsOf = async (call: ApiCall, eventId: string) => {
  const event = await findEvent(call, eventId)
  const requestId = event.data.deposit_request?.id
  if (requestId === undefined)
    throw new CliError(`${eventId} (${event.type}) is about no request: name where it goes with --to wh_…`)
  const recipients = new Set<string>()
  let cursor: string | undefined
  for (;;) {
    const page = await expectJson<{
      deliveries: ReadonlyArray<{ webhook_id: string; event_id: string }>
      next_cursor: string | null
    }>(
      await call(
        "GET",
        `/v1/deposit-requests/${requestId}/deliveries?limit=100${cursor === undefined ? "" : `&starting_after=${cursor}`}`
      ),
      200,
      "the request's delivery log"
    )
    for (const d of page.deliveries) if (d.event_id === eventId) recipients.add(d.webhook_id)
    if (page.next_cursor === null) break
    cursor = page.next_cursor
  }
  if (recipients.size === 0)
    throw new CliError(`no endpoint got ${eventId} yet: name where it goes with --to wh_…`)
  return [...recipients].sort()
}

const resend = async (values: CliValues, eventId: string | undefined, api: string) => {
  if (eventId === undefined || !/^evt_\S+$/.test(eventId))
    throw new CliError("name the event: deposits events resend evt_… [--to wh_…]")
  const call = apiCaller(api, apiKeyOf(values))
  const targets = values.to === undefined ? await recipientsOf(call, eventId) : [values.to]
  let queued = 0
  for (const webhookId of targets) {
    const res = await call("POST", `/v1/events/${eventId}/redeliver`, { webhook_id: webhookId })
    if (res.status === 202) {
      queued++
      process.stdout.write(`queued  ${eventId}  -> ${webhookId}\n`)
    } else process.stderr.write(`not queued  ${eventId}  -> ${webhookId}: ${await refusal(res)}\n`)
  }
  if (queued === 0) throw new CliError(`${eventId} was not queued anywhere`)
}

const program = (values: CliValues, eventId: string | undefined) =>
  Effect.flatMap(serviceUrlOf(values.api), (api) => attempt(() => resend(values, eventId, api)))

export const run = (values: CliValues, eventId: string | undefined) => runCommand(program(values, eventId))
