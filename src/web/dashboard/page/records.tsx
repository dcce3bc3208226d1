import { useState } from "preact/hooks"
import { api } from "./api"
import {
  Confirm,
  Field,
  formValue,
  Loading,
  Notice,
  parseMetadata,
  Refused,
  useAction,
  useLoad,
  When
} from "./ui"

type Kind = "customers" | "issuers" | "payout-addresses"
type Row = Record<string, unknown> & { readonly id: string; readonly metadata: Record<string, unknown> }

interface FieldSpec {
  readonly name: string
  readonly label: string
  readonly required?: boolean
  readonly type?: "text" | "email" | "url"
  /** Set once, at creation (the payout address itself). */
  readonly createOnly?: boolean
}

const SPECS: Record<
  Kind,
  {
    title: string
    one: string
    listKey: string
    path: string
    fields: ReadonlyArray<FieldSpec>
    end: "delete" | "disable"
  }
> = {
  customers: {
    title: "Customers",
    one: "customer",
    listKey: "customers",
    path: "/v1/customers",
    end: "delete",
    fields: [
      { name: "name", label: "Name", required: true },
      { name: "email", label: "Email", type: "email" },
      { name: "description", label: "Description" }
    ]
  },
  issuers: {
    title: "Issuers",
    one: "issuer",
    listKey: "issuers",
    path: "/v1/issuers",
    end: "delete",
    fields: [
      { name: "display_name", label: "Display name", required: true },
      { name: "legal_name", label: "Legal name" },
      { name: "support_email", label: "Support email", type: "email" },
      { name: "support_url", label: "Support URL", type: "url" }
    ]
  },
  "payout-addresses": {
    title: "Payout addresses",
    one: "payout address",
    listKey: "payout_addresses",
    path: "/v1/payout-addresses",
    end: "disable",
    fields: [
      { name: "address", label: "Address (0x…)", required: true, createOnly: true },
      { name: "label", label: "Label" }
    ]
  }
}

/** The form's values as the API takes them: on create only what is set; on edit, a cleared field is null. */
const bodyOf = (form: HTMLFormElement, fields: ReadonlyArray<FieldSpec>, editing: boolean) => {
  const body: Record<string, unknown> = {}
  for (const f of fields) {
    if (editing && f.createOnly === true) continue
    const v = formValue(form, f.name)
    if (v !== "") body[f.name] = v
    else if (editing && f.required !== true) body[f.name] = null
  }
  const metadata = parseMetadata(formValue(form, "metadata"))
  if (metadata !== undefined) body.metadata = metadata
  else if (editing) body.metadata = null
  return body
}

const RecordForm = ({
  kind,
  row,
  submit,
  label
}: {
  kind: Kind
  row?: Row
  submit: (body: Record<string, unknown>) => Promise<void>
  label: string
}) => {
  const spec = SPECS[kind]
  const action = useAction()
  const prefix = row === undefined ? `new-${kind}` : `edit-${row.id}`
  return (
    <>
      <form
        class="grid"
        aria-label={label}
        onSubmit={(e) => {
          e.preventDefault()
          const form = e.currentTarget
          void action.run(async () => {
            await submit(bodyOf(form, spec.fields, row !== undefined))
            if (row === undefined) form.reset()
            return "Saved."
          })
        }}
      >
        {spec.fields
          .filter((f) => row === undefined || f.createOnly !== true)
          .map((f) => (
            <Field key={f.name} id={`${prefix}-${f.name}`} label={f.label}>
              <input
                id={`${prefix}-${f.name}`}
                name={f.name}
                type={(f.type ?? "text") as "text"}
                required={f.required === true}
                defaultValue={row === undefined ? undefined : ((row[f.name] as string | null) ?? "")}
              />
            </Field>
          ))}
        <div class="wide">
          <Field id={`${prefix}-metadata`} label="Metadata (JSON object)">
            <textarea
              id={`${prefix}-metadata`}
              name="metadata"
              defaultValue={
                row === undefined || Object.keys(row.metadata).length === 0
                  ? undefined
                  : JSON.stringify(row.metadata)
              }
            />
          </Field>
        </div>
        <p class="wide">
          <button type="submit" disabled={action.busy}>
            {row === undefined ? `Add ${spec.one}` : "Save"}
          </button>
        </p>
      </form>
      <Refused error={action.error} docUrl={action.docUrl} />
      <Notice text={action.notice} />
    </>
  )
}

const RecordRow = ({ kind, row, reload }: { kind: Kind; row: Row; reload: () => void }) => {
  const spec = SPECS[kind]
  const [editing, setEditing] = useState(false)
  const ended = typeof row.disabled_at === "string"
  // A new payout address in its hold (infra/decisions/0077): any member may cancel it before it takes money.
  const heldUntil =
    !ended && typeof row.held_until === "string" && Date.parse(row.held_until) > Date.now()
      ? row.held_until
      : undefined
  const title = String(row[spec.fields[0]?.name ?? "id"] ?? row.id)
  return (
    <li data-id={row.id}>
      <p>
        <strong>{title}</strong> <code>{row.id}</code>
        {spec.fields.slice(1).map((f) =>
          row[f.name] === null || row[f.name] === undefined ? null : (
            <span key={f.name}>
              {" "}
              · {f.label}: {String(row[f.name])}
            </span>
          )
        )}
        {Object.keys(row.metadata).length === 0 ? null : (
          <span class="mono"> · {JSON.stringify(row.metadata)}</span>
        )}
        {ended ? (
          <>
            {" "}
            · disabled <When at={row.disabled_at as string} />
          </>
        ) : null}
        {heldUntil === undefined ? null : (
          <>
            {" "}
            · held until <When at={heldUntil} />
          </>
        )}
      </p>
      {ended ? null : (
        <div class="row">
          <button
            type="button"
            class="secondary"
            aria-expanded={editing}
            onClick={() => setEditing(!editing)}
          >
            Edit
          </button>
          {heldUntil === undefined ? null : (
            <Confirm
              label="Cancel"
              question={`Cancel ${title}? It is disabled before it ever receives money.`}
              confirmLabel="Cancel it"
              onConfirm={async () => {
                await api("POST", `${spec.path}/${row.id}/cancel`, {})
                reload()
              }}
            />
          )}
          <Confirm
            label={spec.end === "delete" ? "Delete" : "Disable"}
            question={
              spec.end === "delete"
                ? `Delete ${title}? Requests that name it keep their copy.`
                : `Disable ${title}? New requests cannot pay out to it; requests already made still do.`
            }
            confirmLabel={spec.end === "delete" ? "Delete it" : "Disable it"}
            onConfirm={async () => {
              if (spec.end === "delete") await api("DELETE", `${spec.path}/${row.id}`)
              else await api("POST", `${spec.path}/${row.id}/disable`, {})
              reload()
            }}
          />
        </div>
      )}
      {editing ? (
        <RecordForm
          kind={kind}
          row={row}
          label={`Edit ${title}`}
          submit={async (body) => {
            await api("PATCH", `${spec.path}/${row.id}`, body)
            reload()
          }}
        />
      ) : null}
    </li>
  )
}

/** Customers, issuers and payout addresses: listed, added, edited and ended (deleted, or disabled). */
export const Records = ({ kind }: { kind: Kind }) => {
  const spec = SPECS[kind]
  const list = useLoad(
    async () =>
      (await api<Record<string, ReadonlyArray<Row>>>("GET", `${spec.path}?limit=100`))[spec.listKey] ?? [],
    [kind]
  )
  return (
    <>
      <h1 tabIndex={-1}>{spec.title}</h1>
      <section aria-labelledby={`add-${kind}`}>
        <h2 id={`add-${kind}`}>Add a {spec.one}</h2>
        <RecordForm
          key={kind}
          kind={kind}
          label={`Add a ${spec.one}`}
          submit={async (body) => {
            await api("POST", spec.path, body)
            list.reload()
          }}
        />
      </section>
      <section aria-labelledby={`list-${kind}`}>
        <h2 id={`list-${kind}`}>All {spec.title.toLowerCase()}</h2>
        <Refused error={list.error} />
        {list.data === undefined ? (
          list.error === undefined ? (
            <Loading what={spec.title.toLowerCase()} />
          ) : null
        ) : list.data.length === 0 ? (
          <p>None yet.</p>
        ) : (
          <ul class="plain" id="records">
            {list.data.map((row) => (
              <RecordRow key={row.id} kind={kind} row={row} reload={list.reload} />
            ))}
          </ul>
        )}
      </section>
    </>
  )
}
