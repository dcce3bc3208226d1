import { checkFunds, reconnectSilently, wirePayerActions } from "./actions"
import { follow } from "./follow"
import { onLanguageChange, wireLanguagePicker } from "./i18n"
import { call, id, say, sayAgain, sayError, state } from "./page"
import { countdown, render, renderNotFound } from "./render"
import { wireSandboxActions } from "./sandboxActions"
import { rememberedWallet, wireWalletChoice } from "./wallet"

/**
 * The hosted checkout: what a payer sees and does, from the payer routes alone. Plain DOM, no framework: one
 * render of the current payer read into fixed regions, and a long poll (`wait_for=change`) that re-renders on
 * every change, reconnecting with backoff. Amounts are shown from base-unit strings with BigInt, never floats.
 */
wireLanguagePicker()
wirePayerActions()
wireSandboxActions()
void wireWalletChoice((any) => {
  state.walletFound = any
  if (state.current !== undefined) render(state.current)
})
// A switch of language redraws what the request says and what the live region says, in place: no reload.
onLanguageChange(() => {
  if (document.body.dataset.status === "not_found") renderNotFound()
  else if (state.current !== undefined) render(state.current)
  countdown()
  sayAgain()
  void checkFunds()
})

/** The merchant's page hands the session secret over in the fragment, which never reaches a server log. */
const handOver = async () => {
  const secret = new URLSearchParams(location.hash.slice(1)).get("secret")
  if (secret === null) return
  history.replaceState(null, "", location.pathname)
  render(await call("/merchant-session", { secret }))
  say({ id: "status.merchantVerified" })
}

const start = async () => {
  state.attested = rememberedWallet(id)
  try {
    render(await call(""))
  } catch (e) {
    if ((e as { httpStatus?: number }).httpStatus === 404) renderNotFound()
    else sayError(e)
    return
  }
  setInterval(countdown, 1000)
  countdown()
  await handOver().catch(sayError)
  void follow()
  // The wallet this browser attested, back without a prompt after a reload (or the reconnect button).
  if (state.current?.address !== null) await reconnectSilently().catch(() => undefined)
}
void start()
