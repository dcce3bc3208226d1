import { useEffect, useRef, useState } from "preact/hooks"
import { api, query, sentence } from "./api"
import { csv, REQUEST_COLUMNS, requestRow } from "./csv"
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

/** What a merchant can look a request up by, and the list parameter each is. */
const SEARCHES = [
  ["id", "Request id (dr_…)"],
  ["reference", "Reference"],
  ["customer", "Customer (cus_…)"],
  ["deposit_address", "Deposit address"],
  ["payer_wallet", "Payer wallet"],
  ["transaction_hash", "Transaction hash"]
] as const
type SearchBy = (typeof SEARCHES)[number][0]

export interface Filters {
  readonly status: string
  readonly from: string
  readonly to: string
  readonly searchBy: SearchBy
  readonly search: string
}

const emptyFilters: Filters = { status: "", from: "", to: "", searchBy: "id", search: "" }

/** The list's query for these filters: dates as whole UTC days, `to` included. */
export const listParams = (f: Filters): Record<string, string | undefined> => {
  const nextDay = (d: string) => new Date(Date.parse(`${d}T00:00:00Z`) + 86_400_000).toISOString()
  return {
    status: f.status || undefined,
    created_gte: f.from === "" ? undefined : `${f.from}T00:00:00Z`,
    created_lt: f.to === "" ? undefined : nextDay(f.to),
    ...(f.searchBy !== "id" && f.search !== "" ? { [f.searchBy]: f.search } : {})
  }
}

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

/** Requests per page of an export. */
const EXPORT_PAGE = 50

/** Every request the filters select, walking the cursor; with each one's transaction hashes from /transfers. */
const exportCsv = async (f: Filters, progress: (n: number) => void) => {
  const rows: Array<Array<string>> = []
  let cursor: string | undefined
  for (;;) {
    const page = await api<ListAnswer>(
      "GET",
      `/v1/deposit-requests${query({ ...listParams(f), limit: String(EXPORT_PAGE), starting_after: cursor })}`
    )
    for (const r of page.deposit_requests) {
      const { transfers } = await api<Answer<"/v1/deposit-requests/{id}/transfers", "get">>(
        "GET",
        `/v1/deposit-requests/${r.id}/transfers`
      )
      rows.push(
        requestRow(
          r,
          transfers.map((t) => t.transaction_hash)
        )
      )
      progress(rows.length)
    }
    if (page.next_cursor === null) break
    cursor = page.next_cursor
  }
  const url = URL.createObjectURL(new Blob([csv(REQUEST_COLUMNS, rows)], { type: "text/csv;charset=utf-8" }))
  const a = document.createElement("a")
  a.href = url
  a.download = `deposit-requests-${new Date().toISOString().slice(0, 10)}.csv`
  document.body.append(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 60_000)
  return rows.length
}

export const Requests = () => {
  const [filters, setFilters] = useState<Filters>(emptyFilters)
  const [rows, setRows] = useState<ReadonlyArray<DepositRequest>>()
  const [cursor, setCursor] = useState<string | null>(null)
  const [error, setError] = useState<string>()
  const [exporting, setExporting] = useState<string>()
  const [creating, setCreating] = useState(false)
  const live = useRef<AbortController | undefined>(undefined)

  useEffect(() => {
    const controller = new AbortController()
    live.current?.abort()
    live.current = controller
    setRows(undefined)
    setError(undefined)
    // A request id is looked up directly; anything else is a filtered list.
    if (filters.searchBy === "id" && filters.search !== "") {
      api<Answer<"/v1/deposit-requests/{id}", "get">>(
        "GET",
        `/v1/deposit-requests/${encodeURIComponent(filters.search)}`
      ).then(
        (r) => {
          setRows([r])
          setCursor(null)
        },
        (e: unknown) => setError(sentence(e))
      )
      return () => controller.abort()
    }
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
              const n = await exportCsv(filters, (count) => setExporting(`Exporting… ${count} so far`))
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
            searchBy: (get("search_by") || "id") as SearchBy,
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
            <input id="filter-from" name="from" type="date" />
          </Field>
          <Field id="filter-to" label="Created until">
            <input id="filter-to" name="to" type="date" />
          </Field>
        </div>
        <div class="row">
          <Field id="search-by" label="Search by">
            <select id="search-by" name="search_by">
              {SEARCHES.map(([k, label]) => (
                <option key={k} value={k}>
                  {label}
                </option>
              ))}
            </select>
          </Field>
          <Field id="search" label="Search for">
            <input id="search" name="search" type="search" autocomplete="off" />
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
                <th scope="col">Created</th>
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
                    <When at={r.created_at} />
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
