import { type PublicKeyCredentialCreationOptionsJSON, startRegistration } from "@simplewebauthn/browser"
import { api, Refusal, sentence } from "./api"
import { AuditLogTable } from "./auditLog"
import type { Answer, Invite, Member, NoticePreferences, Passkey, SessionInfo } from "./types"
import {
  Confirm,
  Field,
  Loading,
  Notice,
  PasskeysNeedAName,
  passkeyPlace,
  Refused,
  useAction,
  useLoad,
  When
} from "./ui"

/** A section's list, its load refusal shown as the API's sentence. */
const Listed = <T,>({
  load,
  what,
  empty,
  children
}: {
  load: { data?: ReadonlyArray<T>; error?: string }
  what: string
  empty: string
  children: (item: T) => preact.JSX.Element
}) => (
  <>
    <Refused error={load.error} />
    {load.data === undefined ? (
      load.error === undefined ? (
        <Loading what={what} />
      ) : null
    ) : load.data.length === 0 ? (
      <p>{empty}</p>
    ) : (
      <ul class="plain">{load.data.map(children)}</ul>
    )}
  </>
)

/** The account's people (members, invitations) and the signed-in member's own sessions and passkeys. */
export const Team = () => {
  const members = useLoad(
    async () => (await api<Answer<"/v1/account/members", "get">>("GET", "/v1/account/members")).members,
    []
  )
  const invites = useLoad(
    async () => (await api<Answer<"/v1/account/invites", "get">>("GET", "/v1/account/invites")).invites,
    []
  )
  // The signed-in member, or null for a session of the operator's CLI, which belongs to no member.
  const me = useLoad(
    () =>
      api<Answer<"/v1/account/member", "get">>("GET", "/v1/account/member").catch((e: unknown) => {
        if (e instanceof Refusal && e.code === "member_not_found") return null
        throw e
      }),
    []
  )
  const invite = useAction()
  return (
    <>
      <h1 tabIndex={-1}>Team</h1>
      <section aria-labelledby="members-title">
        <h2 id="members-title">Members</h2>
        <Listed load={members} what="members" empty="No members.">
          {(m: Member) => (
            <li key={m.id}>
              {m.email} — since <When at={m.created_at} />, {m.passkeys}{" "}
              {m.passkeys === 1 ? "passkey" : "passkeys"}
              {me.data?.id === m.id ? " (you)" : ""}
              <Confirm
                label={`Remove ${m.email}`}
                question={`Remove ${m.email}? Their sessions end at once and their passkeys are removed.`}
                confirmLabel="Remove"
                onConfirm={async () => {
                  await api("DELETE", `/v1/account/members/${m.id}`)
                  members.reload()
                }}
              />
            </li>
          )}
        </Listed>
      </section>
      <section aria-labelledby="invites-title">
        <h2 id="invites-title">Invitations</h2>
        <form
          onSubmit={(e) => {
            e.preventDefault()
            const form = e.currentTarget
            const email = (form.elements.namedItem("email") as HTMLInputElement).value.trim()
            void invite.run(async () => {
              await api("POST", "/v1/account/invites", { email })
              form.reset()
              invites.reload()
              return `Invitation sent to ${email}; it works for 7 days.`
            })
          }}
        >
          <div class="row">
            <Field id="invite-email" label="Invite by email">
              <input id="invite-email" name="email" type="email" required />
            </Field>
            <button type="submit" disabled={invite.busy}>
              Invite
            </button>
          </div>
        </form>
        <Refused error={invite.error} docUrl={invite.docUrl} />
        <Notice text={invite.notice} />
        <Listed load={invites} what="invitations" empty="No invitations.">
          {(i: Invite) => (
            <li key={i.id}>
              {i.email} —{" "}
              {i.accepted_at === null ? (
                <>
                  until <When at={i.expires_at} />
                </>
              ) : (
                <>
                  accepted <When at={i.accepted_at} />
                </>
              )}
              {i.accepted_at !== null ? null : (
                <Confirm
                  label={`Withdraw the invitation to ${i.email}`}
                  question={`Withdraw the invitation to ${i.email}? Its link stops working.`}
                  confirmLabel="Withdraw"
                  onConfirm={async () => {
                    await api("DELETE", `/v1/account/invites/${i.id}`)
                    invites.reload()
                  }}
                />
              )}
            </li>
          )}
        </Listed>
      </section>
      <Refused error={me.error} />
      {me.data === undefined ? null : me.data === null ? (
        <section aria-labelledby="own-title">
          <h2 id="own-title">My sessions and passkeys</h2>
          <p>
            This session came from the operator's command line and belongs to no member. Sign in with a
            member's email address to see that member's sessions and to add passkeys.
          </p>
        </section>
      ) : (
        <Own />
      )}
      <AuditLogTable />
    </>
  )
}

/** The signed-in member's own sessions and passkeys. */
const Own = () => {
  const sessions = useLoad(
    async () => (await api<Answer<"/v1/account/sessions", "get">>("GET", "/v1/account/sessions")).sessions,
    []
  )
  const passkeys = useLoad(
    async () => (await api<Answer<"/v1/account/passkeys", "get">>("GET", "/v1/account/passkeys")).passkeys,
    []
  )
  const addPasskey = useAction()
  return (
    <>
      <section aria-labelledby="sessions-title">
        <h2 id="sessions-title">My sessions</h2>
        <Listed load={sessions} what="sessions" empty="No sessions.">
          {(s: SessionInfo) => (
            <li key={s.id}>
              {s.user_agent ?? "Unknown browser"} — since <When at={s.created_at} />, until{" "}
              <When at={s.expires_at} />
              {s.current ? (
                " (this one)"
              ) : (
                <Confirm
                  label="End this session"
                  question="End this session? That browser is signed out at once."
                  confirmLabel="End it"
                  onConfirm={async () => {
                    await api("DELETE", `/v1/account/sessions/${s.id}`)
                    sessions.reload()
                  }}
                />
              )}
            </li>
          )}
        </Listed>
      </section>
      <MyNotices />
      <section aria-labelledby="passkeys-title">
        <h2 id="passkeys-title">My passkeys</h2>
        <PasskeysNeedAName />
        <form
          onSubmit={(e) => {
            e.preventDefault()
            const form = e.currentTarget
            const name = (form.elements.namedItem("name") as HTMLInputElement).value.trim()
            void addPasskey.run(async () => {
              const { challenge_id, options } = await api<Answer<"/v1/account/passkeys/options", "post">>(
                "POST",
                "/v1/account/passkeys/options",
                {}
              )
              let response: unknown
              try {
                // The contract carries WebAuthn's options as opaque JSON; the library names their shape.
                response = await startRegistration({
                  optionsJSON: options as unknown as PublicKeyCredentialCreationOptionsJSON
                })
              } catch (err) {
                throw new Error(`No passkey was made: ${sentence(err)}`)
              }
              await api("POST", "/v1/account/passkeys", { challenge_id, name, response })
              form.reset()
              passkeys.reload()
              return `Passkey ${name} added.`
            })
          }}
        >
          <div class="row">
            <Field id="passkey-name" label="Passkey name" hint="Such as: work laptop">
              <input id="passkey-name" name="name" required aria-describedby="passkey-name-hint" />
            </Field>
            <button type="submit" disabled={addPasskey.busy || !passkeyPlace(location).usable}>
              Add a passkey
            </button>
          </div>
        </form>
        <Refused error={addPasskey.error} docUrl={addPasskey.docUrl} />
        <Notice text={addPasskey.notice} />
        <Listed load={passkeys} what="passkeys" empty="No passkeys yet.">
          {(p: Passkey) => (
            <li key={p.id}>
              {p.name} — added <When at={p.created_at} />, last used{" "}
              {p.last_used_at === null ? "never" : <When at={p.last_used_at} />}
              <Confirm
                label={`Remove passkey ${p.name}`}
                question={`Remove the passkey ${p.name}? It can no longer sign you in.`}
                confirmLabel="Remove"
                onConfirm={async () => {
                  await api("DELETE", `/v1/account/passkeys/${p.id}`)
                  passkeys.reload()
                }}
              />
            </li>
          )}
        </Listed>
      </section>
    </>
  )
}

const NOTICE_CHOICES: ReadonlyArray<{ readonly kind: keyof NoticePreferences; readonly label: string }> = [
  { kind: "request_paused", label: "A deposit request is paused (needs attention)" },
  { kind: "endpoint_failing", label: "A webhook endpoint fails for good, or for an hour" },
  { kind: "return_held", label: "A return to a payer is held" }
]

/** Which notices by email the signed-in member gets: a checkbox per kind, each change saved at once. */
const MyNotices = () => {
  const choices = useLoad(
    () => api<Answer<"/v1/account/member/notices", "get">>("GET", "/v1/account/member/notices"),
    []
  )
  const save = useAction()
  return (
    <section aria-labelledby="notices-title">
      <h2 id="notices-title">My notices by email</h2>
      <p>A burst of these is one mail, sent a minute after the first. Every member chooses their own.</p>
      <Refused error={choices.error} />
      {choices.data === undefined ? (
        choices.error === undefined ? (
          <Loading what="notice choices" />
        ) : null
      ) : (
        <fieldset>
          <legend>Mail me when</legend>
          {NOTICE_CHOICES.map(({ kind, label }) => (
            <div key={kind}>
              <label>
                <input
                  type="checkbox"
                  name={kind}
                  checked={choices.data?.[kind] ?? true}
                  disabled={save.busy}
                  onChange={(e) => {
                    const on = e.currentTarget.checked
                    void save.run(async () => {
                      choices.set(
                        await api<Answer<"/v1/account/member/notices", "patch">>(
                          "PATCH",
                          "/v1/account/member/notices",
                          { [kind]: on }
                        )
                      )
                      return `${label}: ${on ? "on" : "off"}.`
                    })
                  }}
                />{" "}
                {label}
              </label>
            </div>
          ))}
        </fieldset>
      )}
      <Refused error={save.error} />
      <Notice text={save.notice} />
    </section>
  )
}
