import { useEffect, useState } from "preact/hooks"
import { api, query, sentence } from "./api"
import type { Answer } from "./types"
import { Field, Loading, Money, Refused, Scroll, useLoad } from "./ui"

type Report = Answer<"/v1/reconciliation", "get">
type Row = Report["requests"][number]

/** Request rows per page: totals and differences come whole with the first, the rows follow on demand. */
const PAGE = "100"

/** Each rule the reconciliation checks, named the way a merchant reads it. */
export const RULES: Record<string, string> = {
  settlement: "Settled differs from credited less returned, recovered and held",
  recoveries: "Recovered funds differ from the recovery ledger",
  chain_balance: "The deposit address's balance on chain differs from what is held"
}

export const Reconciliation = () => {
  const [range, setRange] = useState({ from: "", to: "" })
  const params = {
    created_from: range.from === "" ? undefined : `${range.from}T00:00:00Z`,
    created_to:
      range.to === ""
        ? undefined
        : new Date(Date.parse(`${range.to}T00:00:00Z`) + 86_400_000).toISOString().replace(/\.\d+Z$/, "Z"),
    limit: PAGE
  }
  const report = useLoad(() => api<Report>("GET", `/v1/reconciliation${query(params)}`), [range])
  const [more, setMore] = useState<{ rows: ReadonlyArray<Row>; cursor: string | null; error?: string }>()
  useEffect(() => setMore(undefined), [report.data])
  const t = report.data?.totals
  const differing = report.data?.differences ?? []
  const rows = [...(report.data?.requests ?? []), ...(more?.rows ?? [])]
  const cursor = more === undefined ? (report.data?.next_cursor ?? null) : more.cursor
  return (
    <>
      <h1 tabIndex={-1}>Reconciliation</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault()
          const d = new FormData(e.currentTarget)
          setRange({ from: d.get("from")?.toString() ?? "", to: d.get("to")?.toString() ?? "" })
        }}
      >
        <div class="row">
          <Field id="rec-from" label="Requests created from">
            <input id="rec-from" name="from" type="date" />
          </Field>
          <Field id="rec-to" label="until">
            <input id="rec-to" name="to" type="date" />
          </Field>
          <button type="submit">Reconcile</button>
        </div>
      </form>
      <Refused error={report.error} />
      {t === undefined ? (
        report.error === undefined ? (
          <Loading what="the reconciliation" />
        ) : null
      ) : (
        <>
          <dl class="amounts" id="totals">
            <div>
              <dt>Credited</dt>
              <dd>
                <Money units={t.credited_base_units} />
              </dd>
            </div>
            <div>
              <dt>Settled</dt>
              <dd>
                <Money units={t.settled_base_units} />
              </dd>
            </div>
            <div>
              <dt>Returned</dt>
              <dd>
                <Money units={t.returned_base_units} />
              </dd>
            </div>
            <div>
              <dt>Held</dt>
              <dd>
                <Money units={t.held_base_units} />
              </dd>
            </div>
          </dl>
          <p id="differences-summary" role="status">
            {t.requests_with_differences === 0
              ? "Every request reconciles."
              : `${t.requests_with_differences} ${t.requests_with_differences === 1 ? "request does" : "requests do"} not reconcile.`}
            {report.data?.differences_complete === false
              ? " More requests hold money than one look compares with the chain: the rows below check each one."
              : ""}
          </p>
          {differing.length === 0 ? null : (
            <ul class="plain" id="differences">
              {differing.map((r) => (
                <li key={r.deposit_request_id}>
                  <a href={`#/requests/${r.deposit_request_id}`}>{r.deposit_request_id}</a> ({r.status}):
                  <ul>
                    {r.differences.map((d) => (
                      <li key={d.rule}>
                        {RULES[d.rule] ?? d.rule} by <Money units={d.difference_base_units} /> (
                        <code>{d.rule}</code>)
                      </li>
                    ))}
                  </ul>
                </li>
              ))}
            </ul>
          )}
          <Scroll label="Every request">
            <table id="reconciliation">
              <thead>
                <tr>
                  <th scope="col">Request</th>
                  <th scope="col" class="num">
                    Requested
                  </th>
                  <th scope="col" class="num">
                    Credited
                  </th>
                  <th scope="col" class="num">
                    Settled
                  </th>
                  <th scope="col" class="num">
                    Returned
                  </th>
                  <th scope="col" class="num">
                    Recovered
                  </th>
                  <th scope="col" class="num">
                    Pending
                  </th>
                  <th scope="col" class="num">
                    Held
                  </th>
                  <th scope="col" class="num">
                    On chain
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr key={r.deposit_request_id}>
                    <td>
                      <a href={`#/requests/${r.deposit_request_id}`}>{r.deposit_request_id}</a> {r.status}
                      {r.held_back.map((h) => (
                        <span key={h.code + h.kind} class="held-back">
                          {" "}
                          ({h.kind} held back: {h.code})
                        </span>
                      ))}
                    </td>
                    {[
                      r.amount_base_units,
                      r.credited_base_units,
                      r.settled_base_units,
                      r.returned_base_units,
                      r.recovered_base_units,
                      r.pending_base_units,
                      r.held_base_units,
                      r.chain_balance_base_units
                    ].map((u, i) => (
                      <td class="num" key={i}>
                        <Money units={u} />
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </Scroll>
          <Refused error={more?.error} />
          {cursor === null ? null : (
            <p>
              <button
                type="button"
                class="secondary"
                onClick={async () => {
                  try {
                    const page = await api<Report>(
                      "GET",
                      `/v1/reconciliation${query({ ...params, starting_after: cursor })}`
                    )
                    setMore({ rows: [...(more?.rows ?? []), ...page.requests], cursor: page.next_cursor })
                  } catch (e) {
                    setMore({ rows: more?.rows ?? [], cursor, error: sentence(e) })
                  }
                }}
              >
                Show more requests
              </button>
            </p>
          )}
        </>
      )}
    </>
  )
}
