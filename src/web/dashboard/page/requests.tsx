import { useEffect, useRef, useState } from "preact/hooks"
import { api, download, query, sentence } from "./api"
import { CreateRequest } from "./createRequest"
import type { Answer, DepositRequest } from "./types"
import { Field, Loading, Money, Refused, Scroll, Status, When } from "./ui"

export const STATUSES = [
  "awaiting_payer",
  "ready",
  "partially_deposited",
  "deposited",
  "settled",
  "expired",
  "returned",
  "needs_attention"
] as const

export interface Filters {
  readonly status: string
  /** Days as a date input gives them (YYYY-MM-DD), meant in the browser's time zone. */
  readonly from: string
  readonly to: string
  /** The one search box: the list's `q`, recognised by the API. */
  readonly search: string
}

const emptyFilters: Filters = { status: "", from: "", to: "", search: "" }

/** The browser's time zone, in which the date filters pick days and the list shows times. */
export const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone

/** The instant a local day starts (`days` later): local midnight, so a day of 23 or 25 hours is still one day. */
const localMidnight = (day: string, days = 0) => {
  const [y, m, d] = day.split("-").map(Number) as [number, number, number]
  return new Date(y, m - 1, d + days).toISOString()
}

/** The list's query for these filters: dates as whole days in the browser's zone, `to` included. */
export const listParams = (f: Filters): Record<string, string | undefined> => ({
  status: f.status || undefined,
  created_gte: f.from === "" ? undefined : localMidnight(f.from),
  created_lt: f.to === "" ? undefined : localMidnight(f.to, 1),
  q: f.search || undefined
})

/** A page of the list; its `version` changes whenever a request on it does: the live list's long poll waits on it. */
type ListAnswer = Answer<"/v1/deposit-requests", "get">

const fetchList = (f: Filters, cursor?: string, extra: Record<string, string> = {}, signal?: AbortSignal) =>
  api<ListAnswer>(
    "GET",
    `/v1/deposit-requests${query({ ...listParams(f), limit: "25", starting_after: cursor, ...extra })}`,
    undefined,
    {},
    signal
  )

/** Merges a fresh first page into what is shown: changed rows replaced, new ones on top (newest first). */
const merge = (shown: ReadonlyArray<DepositRequest>, fresh: ReadonlyArray<DepositRequest>) => {
  const byId = new Map(fresh.map((r) => [r.id, r]))
  const known = new Set(shown.map((r) => r.id))
  return [...fresh.filter((r) => !known.has(r.id)), ...shown.map((r) => byId.get(r.id) ?? r)]
}

/** Records in a CSV file (a line break inside a quoted field is not one), read as a stream. */
const records = async (file: Blob) => {
  const reader = file.stream().pipeThrough(new TextDecoderStream()).getReader()
  let quoted = false
  let count = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return count
    for (const c of value) {
      if (c === '"') quoted = !quoted
      else if (c === "\n" && !quoted) count++
    }
  }
}

/**
 * Every request the filters select, as the server streams it (`GET /v1/deposit-requests/export.csv`, the session in
 * the header), saved from a Blob. Answers the number of requests (the lines after the header).
 */
const exportCsv = async (f: Filters) => {
  const file = await download(`/v1/deposit-requests/export.csv${query(listParams(f))}`)
  const url = URL.createObjectURL(
    file.type === "" ? new Blob([file], { type: "text/csv;charset=utf-8" }) : file
  )
  const a = document.createElement("a")
  a.href = url
  a.download = `deposit-requests-${new Date().toISOString().slice(0, 10)}.csv`
  document.body.append(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 60_000)
  return Math.max(0, (await records(file)) - 1)
}

export const Requests = () => {
  const [filters, setFilters] = useState<Filters>(emptyFilters)
  const [rows, setRows] = useState<ReadonlyArray<DepositRequest>>()
  const [cursor, setCursor] = useState<string | null>(null)
  const [error, setError] = useState<string>()
  const [exporting, setExporting] = useState<string>()
  const [creating, setCreating] = useState(false)
  const live = useRef<AbortController | undefined>(undefined)
  const zone = browserZone()

  useEffect(() => {
    const controller = new AbortController()
    live.current?.abort()
    live.current = controller
    setRows(undefined)
    setError(undefined)
    const follow = async () => {
      let page: ListAnswer
      try {
        page = await fetchList(filters, undefined, {}, controller.signal)
      } catch (e) {
        if (!controller.signal.aborted) setError(sentence(e))
        return
      }
      setRows(page.deposit_requests)
      setCursor(page.next_cursor)
      // Live: a long poll on the page's version, answered when a request on it changes or a new one appears.
      let version = page.version
      while (!controller.signal.aborted) {
        try {
          const fresh = await fetchList(
            filters,
            undefined,
            { wait_for: "change", version, timeout: "25" },
            controller.signal
          )
          version = fresh.version
          setRows((shown) => merge(shown ?? [], fresh.deposit_requests))
        } catch {
          if (controller.signal.aborted) return
          await new Promise((r) => setTimeout(r, 5_000))
        }
      }
    }
    void follow()
    return () => controller.abort()
  }, [filters])

  return (
    <>
      <h1 tabIndex={-1}>Requests</h1>
      <div class="row">
        <button
          type="button"
          onClick={() => setCreating(!creating)}
          aria-expanded={creating}
          aria-controls="create-request"
        >
          New request
        </button>
        <button
          type="button"
          class="secondary"
          disabled={exporting?.endsWith("…") === true}
          onClick={async () => {
            setExporting("Exporting…")
            try {
              const n = await exportCsv(filters)
              setExporting(`Exported ${n} requests.`)
            } catch (e) {
              setExporting(undefined)
              setError(sentence(e))
            }
          }}
        >
          Export CSV
        </button>
        <span role="status" id="export-status">
          {exporting ?? ""}
        </span>
      </div>
      {creating ? <CreateRequest /> : null}
      <form
        class="filters"
        aria-label="Filter and search requests"
        onSubmit={(e) => {
          e.preventDefault()
          const data = new FormData(e.currentTarget)
          const get = (k: string) => data.get(k)?.toString().trim() ?? ""
          setFilters({
            status: get("status"),
            from: get("from"),
            to: get("to"),
            search: get("search")
          })
        }}
      >
        <div class="row">
          <Field id="filter-status" label="Status">
            <select id="filter-status" name="status">
              <option value="">Any</option>
              {STATUSES.map((s) => (
                <option key={s} value={s}>
                  {s.replaceAll("_", " ")}
                </option>
              ))}
            </select>
          </Field>
          <Field id="filter-from" label="Created from">
            <input id="filter-from" name="from" type="date" aria-describedby="date-zone" />
          </Field>
          <Field id="filter-to" label="Created until">
            <input id="filter-to" name="to" type="date" aria-describedby="date-zone" />
          </Field>
        </div>
        <p class="hint" id="date-zone">
          Days start at midnight in {zone}, this browser's time zone; the times below are shown in it too.
        </p>
        <div class="row">
          <Field
            id="search"
            label="Search"
            hint="A request, customer, issuer or payout address id (dr_, cus_, iss_, pa_ …), a reference, an email, an address or a transaction hash."
          >
            <input
              id="search"
              name="search"
              type="search"
              autocomplete="off"
              aria-describedby="search-hint"
            />
          </Field>
          <button type="submit">Show</button>
          <button type="reset" class="secondary" onClick={() => setFilters(emptyFilters)}>
            Clear
          </button>
        </div>
      </form>
      <Refused error={error} />
      {rows === undefined ? (
        error === undefined ? (
          <Loading what="requests" />
        ) : null
      ) : rows.length === 0 ? (
        <p>No requests match.</p>
      ) : (
        <Scroll label="Requests">
          <table id="requests">
            <caption class="visually-hidden">Deposit requests, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Request</th>
                <th scope="col">Status</th>
                <th scope="col" class="num">
                  Amount
                </th>
                <th scope="col" class="num">
                  Received
                </th>
                <th scope="col">Reference</th>
                <th scope="col">Created ({zone})</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.id} data-id={r.id}>
                  <td>
                    <a href={`#/requests/${r.id}`}>{r.heading || <code>{r.id}</code>}</a>
                    {r.heading === "" ? null : (
                      <>
                        <br />
                        <code>{r.id}</code>
                      </>
                    )}
                  </td>
                  <td>
                    <Status status={r.status} />
                  </td>
                  <td class="num">
                    <Money units={r.amount_base_units} />
                  </td>
                  <td class="num">
                    <Money units={r.received_base_units} />
                  </td>
                  <td>{r.reference}</td>
                  <td>
                    <When at={r.created_at} zoned />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </Scroll>
      )}
      {cursor === null ? null : (
        <p>
          <button
            type="button"
            class="secondary"
            onClick={async () => {
              try {
                const page = await fetchList(filters, cursor)
                setRows((shown) => [...(shown ?? []), ...page.deposit_requests])
                setCursor(page.next_cursor)
              } catch (e) {
                setError(sentence(e))
              }
            }}
          >
            Show older requests
          </button>
        </p>
      )}
    </>
  )
}
