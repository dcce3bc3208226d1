import type { ComponentChildren } from "preact"
import { useCallback, useEffect, useRef, useState } from "preact/hooks"
import { usdc } from "../../checkout/page/amounts"
import { docUrlOf, sentence } from "./api"

/** Loads with `load` whenever `deps` change; `reload` asks again. The error is the API's sentence. */
export const useLoad = <T,>(load: () => Promise<T>, deps: ReadonlyArray<unknown>) => {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true })
  const generation = useRef(0)
  const reload = useCallback(() => {
    const mine = ++generation.current
    setState((s) => ({ ...s, loading: true }))
    load().then(
      (data) => mine === generation.current && setState({ data, loading: false }),
      (e: unknown) => mine === generation.current && setState({ error: sentence(e), loading: false })
    )
  }, deps)
  useEffect(reload, [reload])
  return { ...state, reload, set: (data: T) => setState({ data, loading: false }) }
}

/** An API refusal as the sentence the API wrote, announced at once. */
export const Refused = ({ error, docUrl }: { error: string | undefined; docUrl?: string | undefined }) =>
  error === undefined ? null : (
    <p class="refusal" role="alert">
      {error}
      {docUrl === undefined ? null : (
        <>
          {" "}
          <a href={docUrl} target="_blank" rel="noopener noreferrer">
            Learn more about this error
          </a>
        </>
      )}
    </p>
  )

/** Good news, announced politely. */
export const Notice = ({ text }: { text: string | undefined }) => (
  <p class="notice" role="status">
    {text ?? ""}
  </p>
)

export const Loading = ({ what }: { what: string }) => <p role="status">Loading {what}…</p>

export const Money = ({ units }: { units: string | null | undefined }) => (
  <span class="num">{units === null || units === undefined ? "—" : usdc(units)}</span>
)

/** A time as the reader's locale shows it (`zoned`: with its zone's name), machine-readable in `datetime`. */
export const When = ({ at, zoned = false }: { at: string | null | undefined; zoned?: boolean }) =>
  at === null || at === undefined ? (
    <span>—</span>
  ) : (
    <time dateTime={at}>
      {zoned
        ? new Date(at).toLocaleString(undefined, { dateStyle: "short", timeStyle: "long" })
        : new Date(at).toLocaleString()}
    </time>
  )

export const Status = ({ status }: { status: string }) => (
  <span class="status" data-status={status}>
    {status.replaceAll("_", " ")}
  </span>
)

/** Copies `text`, saying so in a live region (a copy is otherwise silent to a screen reader). */
export const CopyButton = ({
  text,
  label,
  id,
  ariaLabel
}: {
  text: string
  label: string
  id?: string
  /** What a screen reader says when several buttons show the same label. */
  ariaLabel?: string
}) => {
  const [said, setSaid] = useState("")
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text)
      setSaid("Copied.")
    } catch {
      setSaid("Copying was refused by the browser: select the text and copy it.")
    }
  }
  return (
    <span>
      <button
        type="button"
        class="secondary"
        onClick={copy}
        {...(id === undefined ? {} : { id })}
        {...(ariaLabel === undefined ? {} : { "aria-label": ariaLabel })}
      >
        {label}
      </button>{" "}
      <span role="status">{said}</span>
    </span>
  )
}

/** A secret shown once: the value, a copy button and what to do with it. */
export const OnceSecret = ({
  title,
  value,
  children
}: {
  title: string
  value: string
  children?: ComponentChildren
}) => (
  <section class="secret" aria-label={title}>
    <p>
      <strong>{title}</strong> — shown only now; copy it and keep it safe.
    </p>
    <p>
      <code class="secret-value">{value}</code>
    </p>
    <CopyButton text={value} label="Copy" />
    {children}
  </section>
)

/** A labelled input whose hint is read with it. */
export const Field = ({
  id,
  label,
  hint,
  children
}: {
  id: string
  label: string
  hint?: string
  children: ComponentChildren
}) => (
  <div class="field">
    <label for={id}>{label}</label>
    {children}
    {hint === undefined ? null : (
      <p class="hint" id={`${id}-hint`}>
        {hint}
      </p>
    )}
  </div>
)

/** A wide table in a region that scrolls sideways on a phone, reachable by keyboard. */
export const Scroll = ({ label, children }: { label: string; children: ComponentChildren }) => (
  // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be focusable to scroll by keyboard
  <section class="scroll" aria-label={label} tabIndex={0}>
    {children}
  </section>
)

/** An action with a second, explicit step before it runs (no `window.confirm`: it cannot be styled or tested). */
export const Confirm = ({
  label,
  question,
  confirmLabel,
  onConfirm
}: {
  label: string
  question: string
  confirmLabel: string
  onConfirm: () => Promise<void>
}) => {
  const [open, setOpen] = useState(false)
  const [error, setError] = useState<string>()
  const [busy, setBusy] = useState(false)
  if (!open)
    return (
      <button type="button" class="danger" onClick={() => setOpen(true)}>
        {label}
      </button>
    )
  return (
    <fieldset class="confirm">
      <legend>{label}</legend>
      <p>{question}</p>
      <div class="row">
        <button
          type="button"
          class="danger"
          disabled={busy}
          onClick={async () => {
            setBusy(true)
            setError(undefined)
            try {
              await onConfirm()
              setOpen(false)
            } catch (e) {
              setError(sentence(e))
            } finally {
              setBusy(false)
            }
          }}
        >
          {confirmLabel}
        </button>
        <button type="button" class="secondary" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
      <Refused error={error} />
    </fieldset>
  )
}

/** Runs an action, tracking busy, error (the API's sentence, and its docs link) and a success notice. */
export const useAction = () => {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string>()
  const [docUrl, setDocUrl] = useState<string>()
  const [notice, setNotice] = useState<string>()
  const run = async (f: () => Promise<unknown>) => {
    setBusy(true)
    setError(undefined)
    setDocUrl(undefined)
    setNotice(undefined)
    try {
      const said = await f()
      if (typeof said === "string") setNotice(said)
    } catch (e) {
      setError(sentence(e))
      setDocUrl(docUrlOf(e))
    } finally {
      setBusy(false)
    }
  }
  return { busy, error, docUrl, notice, run, setError }
}

/** The value of a named form control. */
export const formValue = (form: HTMLFormElement, name: string): string => {
  const control = form.elements.namedItem(name) as
    | HTMLInputElement
    | HTMLSelectElement
    | HTMLTextAreaElement
    | null
  return control?.value.trim() ?? ""
}

/** Metadata typed as JSON: an object, or a sentence saying what is wrong. */
export const parseMetadata = (text: string): Record<string, unknown> | undefined => {
  if (text === "") return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new Error('Metadata must be JSON, such as {"order": "1042"}.')
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new Error('Metadata must be a JSON object, such as {"order": "1042"}.')
  return parsed as Record<string, unknown>
}

/**
 * Where this page was opened by an address rather than a name: WebAuthn refuses an IP address as a relying party,
 * so passkeys cannot be made or used here. The way in for a loopback address is `localhost`, which browsers treat
 * as secure over plain HTTP (and which `npm start` prints).
 */
export const passkeyPlace = (
  where: Pick<Location, "hostname" | "protocol" | "port" | "pathname">
): { readonly usable: true } | { readonly usable: false; readonly localhost: string | undefined } => {
  const address = /^\d{1,3}(\.\d{1,3}){3}$/.test(where.hostname) || where.hostname.startsWith("[")
  if (!address) return { usable: true }
  const loopback = where.hostname.startsWith("127.") || where.hostname === "[::1]"
  const port = where.port === "" ? "" : `:${where.port}`
  return {
    usable: false,
    localhost: loopback ? `${where.protocol}//localhost${port}${where.pathname}` : undefined
  }
}

/** Says why passkeys are off on an address, and where they work. Nothing on a name. */
export const PasskeysNeedAName = () => {
  const place = passkeyPlace(location)
  if (place.usable) return null
  return (
    <p class="notice" id="passkeys-need-a-name">
      Passkeys need a domain name: browsers refuse them on an address such as {location.hostname}.{" "}
      {place.localhost === undefined ? (
        "Open the dashboard at the service's domain name to add or use a passkey."
      ) : (
        <>
          On this machine, open <a href={place.localhost}>{place.localhost}</a> (sign in there again: each
          address keeps its own session).
        </>
      )}
    </p>
  )
}
