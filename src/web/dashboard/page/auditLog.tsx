import { api } from "./api"
import type { Answer, AuditEntry } from "./types"
import { Loading, Refused, useLoad, When } from "./ui"

type AuditPage = Answer<"/v1/account/audit-log", "get">

/** The audit log's newest changes (who, what, when, from where) as a short table; the API pages the rest. */
export const AuditLogTable = ({ limit = 20 }: { limit?: number }) => {
  const log = useLoad(() => api<AuditPage>("GET", `/v1/account/audit-log?limit=${limit}`), [limit])
  return (
    <section aria-labelledby="audit-title">
      <h2 id="audit-title">Audit log</h2>
      <p>
        Every change made to the account's members, keys, payout addresses, issuers, passkeys and webhook
        endpoints, newest first. Every member is emailed about the ones that could hand the account to someone
        else.
      </p>
      <Refused error={log.error} />
      {log.data === undefined ? (
        log.error === undefined ? (
          <Loading what="the audit log" />
        ) : null
      ) : log.data.entries.length === 0 ? (
        <p>Nothing recorded yet.</p>
      ) : (
        <table id="audit-log">
          <caption class="visually-hidden">Audit log, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col">What</th>
              <th scope="col">Target</th>
              <th scope="col">From</th>
            </tr>
          </thead>
          <tbody>
            {log.data.entries.map((e: AuditEntry) => (
              <tr key={e.id}>
                <td>
                  <When at={e.created_at} />
                </td>
                <td>{e.actor.label}</td>
                <td>
                  <code>{e.action}</code>
                </td>
                <td>{e.target_id ?? "—"}</td>
                <td title={e.client.user_agent ?? undefined}>{e.client.address}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}
