import { useState } from "preact/hooks"
import { api, query } from "./api"
import type { Answer } from "./types"
import { Field, Loading, Money, Refused, Scroll, Status, When, useLoad } from "./ui"

type Summary = Answer<"/v1/account/summary", "get">
type Period = Summary["periods"]["today"]
type Day = Summary["days"][number]

/** The browser's own zone, which the overview starts in (UTC where the browser says none). */
const browserZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC"

/** Every zone the browser knows, the current one included even when the list leaves it out. */
const zones = (current: string): Array<string> => {
  const known = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : []
  return known.includes(current) ? known : [current, ...known]
}

const periods: ReadonlyArray<readonly [keyof Summary["periods"], string]> = [
  ["today", "Today"],
  ["last_7_days", "Last 7 days"],
  ["last_30_days", "Last 30 days"]
]

const reasons: Record<string, string> = {
  held_transfer: "Transfer held",
  needs_attention: "Needs attention",
  expiring_soon: "Expires within the hour"
}

const PeriodTile = ({ id, label, period }: { id: string; label: string; period: Period }) => (
  <section class="tile" id={id} aria-labelledby={`${id}-title`}>
    <h2 id={`${id}-title`}>{label}</h2>
    <dl class="amounts">
      <div>
        <dt>Settled volume</dt>
        <dd class="settled-volume">
          <Money units={period.settled_volume_base_units} />
        </dd>
      </div>
      <div>
        <dt>Settled</dt>
        <dd class="settled-count">{period.settled_count}</dd>
      </div>
      <div>
        <dt>Created</dt>
        <dd class="created-count">{period.created_count}</dd>
      </div>
      <div>
        <dt>Returned to payers</dt>
        <dd class="returned-volume">
          <Money units={period.returned_volume_base_units} />
        </dd>
      </div>
    </dl>
  </section>
)

/** Chart geometry in the SVG's own units; it scales to the column's width. */
const BAR = 10
const GAP = 4
const HEIGHT = 120

/**
 * Settled volume per local day as bars. Heights are scaled with bigint arithmetic (a float never holds money);
 * each bar's title names its day, volume and count, and the whole chart is one labelled image.
 */
const DayChart = ({ days, zone }: { days: ReadonlyArray<Day>; zone: string }) => {
  const max = days.reduce((m, d) => {
    const v = BigInt(d.settled_volume_base_units)
    return v > m ? v : m
  }, 0n)
  const width = days.length * (BAR + GAP)
  return (
    <svg
      class="chart"
      id="day-chart"
      viewBox={`0 0 ${width} ${HEIGHT}`}
      role="img"
      aria-label={`Settled volume per day for the last ${days.length} days, in ${zone}`}
      preserveAspectRatio="none"
    >
      {days.map((d, i) => {
        const v = BigInt(d.settled_volume_base_units)
        const h = max === 0n ? 0 : Math.max(v === 0n ? 0 : 1, Number((v * BigInt(HEIGHT)) / max))
        return (
          <g key={d.date}>
            <rect class="track" x={i * (BAR + GAP)} y={0} width={BAR} height={HEIGHT} />
            <rect
              class="bar"
              data-date={d.date}
              data-units={d.settled_volume_base_units}
              x={i * (BAR + GAP)}
              y={HEIGHT - h}
              width={BAR}
              height={h}
            >
              <title>{`${d.date}: ${d.settled_volume} USDC settled in ${d.settled_count} requests`}</title>
            </rect>
          </g>
        )
      })}
    </svg>
  )
}

/**
 * The dashboard's home (issue 48): the merchant's day in figures, from `GET /v1/account/summary` alone, so the page
 * and an integrator read the same numbers. Days are counted in a zone the reader picks, their browser's at first.
 */
export const Overview = () => {
  const [zone, setZone] = useState(browserZone)
  const summary = useLoad(
    () => api<Summary>("GET", `/v1/account/summary${query({ time_zone: zone })}`),
    [zone]
  )
  const s = summary.data
  return (
    <>
      <h1 tabIndex={-1}>Overview</h1>
      <div class="row">
        <Field id="overview-zone" label="Days counted in">
          <select id="overview-zone" value={zone} onChange={(e) => setZone(e.currentTarget.value)}>
            {zones(zone).map((z) => (
              <option key={z} value={z}>
                {z}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <Refused error={summary.error} />
      {s === undefined ? (
        summary.error === undefined ? (
          <Loading what="the overview" />
        ) : null
      ) : (
        <>
          <p class="hint" id="overview-zone-shown">
            Local days in <strong>{s.time_zone}</strong>, as of <When at={s.generated_at} />.
          </p>
          <div class="tiles">
            {periods.map(([key, label]) => (
              <PeriodTile
                key={key}
                id={`period-${key.replaceAll("_", "-")}`}
                label={label}
                period={s.periods[key]}
              />
            ))}
          </div>
          <section aria-labelledby="chart-title">
            <h2 id="chart-title">Settled volume per day</h2>
            <DayChart days={s.days} zone={s.time_zone} />
            <p class="hint">
              {s.days[0]?.date} to {s.days.at(-1)?.date}; the highest bar is{" "}
              <Money
                units={s.days
                  .reduce((m, d) => {
                    const v = BigInt(d.settled_volume_base_units)
                    return v > m ? v : m
                  }, 0n)
                  .toString()}
              />
              .
            </p>
          </section>
          <section aria-labelledby="needs-action-title" id="needs-action">
            <h2 id="needs-action-title">Needs action</h2>
            <p id="needs-action-counts">
              {s.needs_action.held_transfer_count} with a transfer held,{" "}
              {s.needs_action.needs_attention_count} needing attention, {s.needs_action.expiring_soon_count}{" "}
              expiring within the hour.
            </p>
            {s.needs_action.requests.length === 0 ? (
              <p>Nothing needs action.</p>
            ) : (
              <ul class="plain">
                {s.needs_action.requests.map((r) => (
                  <li key={r.deposit_request_id} data-reason={r.reason}>
                    <a href={`#/requests/${r.deposit_request_id}`}>{r.reference || r.deposit_request_id}</a>{" "}
                    <Status status={r.status} /> <strong>{reasons[r.reason] ?? r.reason}</strong>{" "}
                    <Money units={r.amount_base_units} /> (
                    {r.reason === "expiring_soon" ? "expires" : "since"} <When at={r.at} />)
                    {r.message === null ? null : <span class="hint"> {r.message}</span>}
                  </li>
                ))}
              </ul>
            )}
          </section>
          <section aria-labelledby="failing-title" id="failing-endpoints">
            <h2 id="failing-title">Failing webhook endpoints</h2>
            {s.failing_endpoints.length === 0 ? (
              <p>Every endpoint's latest delivery succeeded.</p>
            ) : (
              <ul class="plain">
                {s.failing_endpoints.map((e) => (
                  <li key={e.webhook_id}>
                    <a href={`#/webhooks/${e.webhook_id}`}>{e.url}</a>: last attempt {e.last_outcome}
                    {e.last_response_status === null ? "" : ` (HTTP ${e.last_response_status})`} at{" "}
                    <When at={e.last_attempted_at} />, {e.failures_last_hour} failed in the last hour.
                  </li>
                ))}
              </ul>
            )}
            <p>
              <a href="#/webhooks">All webhook endpoints</a>
            </p>
          </section>
          <section aria-labelledby="recent-title">
            <h2 id="recent-title">Last events</h2>
            {s.recent_events.length === 0 ? (
              <p>No events yet.</p>
            ) : (
              <Scroll label="Last events">
                <table id="recent-events">
                  <thead>
                    <tr>
                      <th scope="col">Type</th>
                      <th scope="col">Request</th>
                      <th scope="col">Occurred</th>
                    </tr>
                  </thead>
                  <tbody>
                    {s.recent_events.map((e) => (
                      <tr key={e.id}>
                        <td>{e.type}</td>
                        <td class="mono">
                          {e.deposit_request_id === null ? (
                            "—"
                          ) : (
                            <a href={`#/requests/${e.deposit_request_id}`}>{e.deposit_request_id}</a>
                          )}
                        </td>
                        <td>
                          <When at={e.occurred_at} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </Scroll>
            )}
            <p>
              <a href="#/events">All events</a>
            </p>
          </section>
        </>
      )}
    </>
  )
}
