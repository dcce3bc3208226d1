import { useState } from "preact/hooks"
import { api } from "./api"
import { idempotencyKey, toApiAmount } from "./money"
import type { Answer, CreatedDepositRequest } from "./types"
import { CopyButton, Field, formValue, OnceSecret, parseMetadata, Refused, useAction, useLoad } from "./ui"

interface Option {
  readonly id: string
  readonly label: string
}

/** The account's records a request names, for the form's choices (the first hundred of each, newest first). */
const loadChoices = async () => {
  const [issuers, payouts, customers] = await Promise.all([
    api<Answer<"/v1/issuers", "get">>("GET", "/v1/issuers?limit=100"),
    api<Answer<"/v1/payout-addresses", "get">>("GET", "/v1/payout-addresses?limit=100"),
    api<Answer<"/v1/customers", "get">>("GET", "/v1/customers?limit=100")
  ])
  return {
    issuers: issuers.issuers.map((i): Option => ({ id: i.id, label: i.display_name })),
    payouts: payouts.payout_addresses
      .filter((p) => p.disabled_at === null)
      .map((p): Option => ({ id: p.id, label: p.label === null ? p.address : `${p.label} (${p.address})` })),
    customers: customers.customers.map((c): Option => ({ id: c.id, label: c.name }))
  }
}

/** The create form, with one Idempotency-Key per intended request: a retry after a lost answer makes no second. */
export const CreateRequest = () => {
  const choices = useLoad(loadChoices, [])
  const [key, setKey] = useState(() => idempotencyKey())
  const [policy, setPolicy] = useState("none")
  const [made, setMade] = useState<CreatedDepositRequest>()
  const action = useAction()
  const options = (list: ReadonlyArray<Option> | undefined) =>
    (list ?? []).map((o) => (
      <option key={o.id} value={o.id}>
        {o.label}
      </option>
    ))
  return (
    <section id="create-request" aria-labelledby="create-title">
      <h2 id="create-title">New request</h2>
      <Refused error={choices.error} />
      <form
        class="grid"
        onSubmit={(e) => {
          e.preventDefault()
          const form = e.currentTarget
          void action.run(async () => {
            const v = (name: string) => formValue(form, name)
            const metadata = parseMetadata(v("metadata"))
            const body: Record<string, unknown> = {
              amount: toApiAmount(v("amount")),
              issuer_id: v("issuer_id"),
              payout_address_id: v("payout_address_id"),
              payer_policy_mode: policy
            }
            for (const name of ["heading", "reference", "customer_id", "return_url"])
              if (v(name) !== "") body[name] = v(name)
            if (policy === "mailbox") body.expected_email = v("expected_email")
            if (policy === "merchant_session") body.payer_reference = v("payer_reference")
            if (metadata !== undefined) body.metadata = metadata
            const request = await api<CreatedDepositRequest>("POST", "/v1/deposit-requests", body, {
              "idempotency-key": key
            })
            setMade(request)
            setKey(idempotencyKey())
            form.reset()
            setPolicy("none")
            return `Request ${request.id} created.`
          })
        }}
      >
        <Field id="new-amount" label="Amount (USDC)" hint="Up to 6 decimals, such as 25.00">
          <input
            id="new-amount"
            name="amount"
            required
            inputMode="decimal"
            pattern="[0-9][0-9,]*(\.[0-9]{0,6})?"
            aria-describedby="new-amount-hint"
          />
        </Field>
        <Field id="new-heading" label="Heading" hint="What the payer sees, such as Order 1042">
          <input id="new-heading" name="heading" aria-describedby="new-heading-hint" />
        </Field>
        <Field id="new-reference" label="Reference" hint="Your own reference, for search and reconciliation">
          <input id="new-reference" name="reference" aria-describedby="new-reference-hint" />
        </Field>
        <Field id="new-issuer" label="Issuer">
          <select id="new-issuer" name="issuer_id" required>
            {options(choices.data?.issuers)}
          </select>
        </Field>
        <Field id="new-payout" label="Payout address">
          <select id="new-payout" name="payout_address_id" required>
            {options(choices.data?.payouts)}
          </select>
        </Field>
        <Field id="new-customer" label="Customer (optional)">
          <select id="new-customer" name="customer_id">
            <option value="">None</option>
            {options(choices.data?.customers)}
          </select>
        </Field>
        <Field id="new-policy" label="Payer check" hint="How the payer proves who they are before paying">
          <select
            id="new-policy"
            name="payer_policy_mode"
            value={policy}
            aria-describedby="new-policy-hint"
            onChange={(e) => setPolicy(e.currentTarget.value)}
          >
            <option value="none">None</option>
            <option value="mailbox">A code emailed to an address you give</option>
            <option value="merchant_session">Your own site signs the payer in</option>
          </select>
        </Field>
        {policy === "mailbox" ? (
          <Field id="new-email" label="Payer's email address">
            <input id="new-email" name="expected_email" type="email" required />
          </Field>
        ) : null}
        {policy === "merchant_session" ? (
          <Field
            id="new-payer-reference"
            label="Payer reference"
            hint="Your id for the payer, shown back to you"
          >
            <input
              id="new-payer-reference"
              name="payer_reference"
              required
              aria-describedby="new-payer-reference-hint"
            />
          </Field>
        ) : null}
        <Field id="new-return" label="Return URL (optional)" hint="Where the checkout links back to, https">
          <input id="new-return" name="return_url" type="url" aria-describedby="new-return-hint" />
        </Field>
        <div class="wide">
          <Field id="new-metadata" label="Metadata (optional JSON object)">
            <textarea id="new-metadata" name="metadata" />
          </Field>
        </div>
        <p class="wide">
          <button type="submit" disabled={action.busy || choices.data === undefined}>
            Create request
          </button>
        </p>
      </form>
      <Refused error={action.error} docUrl={action.docUrl} />
      {made === undefined ? null : (
        <section class="secret" aria-label="The new request">
          <p role="status">
            Created <a href={`#/requests/${made.id}`}>{made.id}</a>. Send the payer this checkout link:
          </p>
          <p>
            <code id="new-checkout-link">{made.checkout_url}</code>
          </p>
          <CopyButton text={made.checkout_url} label="Copy checkout link" id="copy-checkout-link" />
          {made.merchant_session_secret === undefined ? null : (
            <OnceSecret title="Merchant session secret" value={made.merchant_session_secret}>
              <p class="hint">Your site hands it to the checkout in the link's fragment: #secret=…</p>
            </OnceSecret>
          )}
        </section>
      )}
    </section>
  )
}
