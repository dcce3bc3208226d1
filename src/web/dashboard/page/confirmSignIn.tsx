import { render } from "preact"
import { api } from "./api"
import { signInBinding } from "./signIn"
import type { Answer, SignedIn } from "./types"

type LinkPreview = Answer<"/v1/sign-in/link/preview", "post">
type InvitePreview = Answer<"/v1/sign-in/invite/preview", "post">

const when = (iso: string) => new Date(iso).toLocaleString()

/**
 * Asks before a sign-in from a link this browser did not ask for, or before joining an account: a modal page that
 * names what it signs in to and who sent it (infra/decisions/0074-sign-in-codes-and-forwarded-links.md). Resolves
 * true when the person goes on, false when they decline.
 */
const ask = (body: (go: (yes: boolean) => void) => preact.JSX.Element) =>
  new Promise<boolean>((resolve) => {
    const dialog = document.createElement("dialog")
    dialog.id = "confirm-sign-in"
    dialog.setAttribute("aria-labelledby", "confirm-sign-in-title")
    document.body.append(dialog)
    const go = (yes: boolean) => {
      render(null, dialog)
      dialog.close()
      dialog.remove()
      resolve(yes)
    }
    dialog.addEventListener("cancel", (e) => {
      e.preventDefault()
      go(false)
    })
    render(body(go), dialog)
    dialog.showModal()
  })

const Choice = ({ go, yes }: { go: (yes: boolean) => void; yes: string }) => (
  <div class="row">
    <button type="button" onClick={() => go(true)}>
      {yes}
    </button>
    <button type="button" class="secondary" onClick={() => go(false)}>
      Cancel
    </button>
  </div>
)

const LinkQuestion = ({ preview, go }: { preview: LinkPreview; go: (yes: boolean) => void }) => (
  <main class="signin">
    <h1 id="confirm-sign-in-title">Sign in as {preview.email}?</h1>
    <p>
      This link signs you in to{" "}
      {preview.account_name === null ? (
        "a new account"
      ) : (
        <>
          the account <strong data-account>{preview.account_name}</strong>
        </>
      )}{" "}
      as <strong data-email>{preview.email}</strong>.
    </p>
    <p data-requested>
      It was asked for in another browser on {when(preview.requested_at)}
      {preview.requested_from === null ? "" : ` from ${preview.requested_from}`}
      {preview.requested_user_agent === null ? "" : ` (${preview.requested_user_agent})`}.
    </p>
    <p>
      If someone sent you this link, or you do not recognise the account, cancel: signing in would put you in
      their account, and anything you do there is theirs.
    </p>
    <Choice go={go} yes="Sign in to this account" />
  </main>
)

const InviteQuestion = ({ preview, go }: { preview: InvitePreview; go: (yes: boolean) => void }) => (
  <main class="signin">
    <h1 id="confirm-sign-in-title">Join {preview.account_name}?</h1>
    <p>
      <strong data-inviter>{preview.invited_by ?? "The account's operator"}</strong> invited{" "}
      <strong data-email>{preview.email}</strong> to join the account{" "}
      <strong data-account>{preview.account_name}</strong> on {when(preview.created_at)}.
    </p>
    <p>
      Joining makes you a member with full authority over this account, and signs you in to it. If you do not
      recognise the account or the person, cancel.
    </p>
    <Choice go={go} yes={`Join ${preview.account_name}`} />
  </main>
)

const declined = () => new Error("Nothing happened: the link was not confirmed.")

/**
 * A `#sign-in=` or `#invite=` token exchanged for a session. A link completes at once in the browser that asked
 * for it (its binding); anywhere else, and for every invitation, only after the page above.
 */
export const exchangeFragment = async (link: string | null, invite: string | null): Promise<SignedIn> => {
  if (link !== null) {
    const binding = signInBinding()
    if (binding !== null) {
      try {
        return await api<SignedIn>("POST", "/v1/sign-in/link", { token: link, binding })
      } catch {
        // Another browser's link, or a used one: the preview tells which.
      }
    }
    const preview = await api<LinkPreview>("POST", "/v1/sign-in/link/preview", { token: link })
    if (!(await ask((go) => <LinkQuestion preview={preview} go={go} />))) throw declined()
    return await api<SignedIn>("POST", "/v1/sign-in/link", { token: link, confirmed: true })
  }
  const preview = await api<InvitePreview>("POST", "/v1/sign-in/invite/preview", { token: invite })
  if (!(await ask((go) => <InviteQuestion preview={preview} go={go} />))) throw declined()
  return await api<SignedIn>("POST", "/v1/sign-in/invite", { token: invite, confirmed: true })
}
