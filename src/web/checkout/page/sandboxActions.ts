import { act, statementFor } from "./actions"
import { money, Said, units } from "./i18n"
import { $, call, id, say, state } from "./page"
import { paymentSent, render } from "./render"
import { testWallet } from "./testWallet"

/** Sandbox only: a test wallet whose key lives in this browser session, and the local chain's faucet and payers. */
export const wireSandboxActions = () => {
  act($("#test-wallet"), async () => {
    const { current } = state
    if (current?.attestation === null || current === undefined) return
    const test = testWallet()
    const { expiresAt, typed } = statementFor(test.address)
    const signature = await test.signTypedData(typed)
    render(
      await call("/wallet", {
        wallet: test.address,
        chain_id: current.chain_id,
        expires_at: expiresAt,
        signature
      })
    )
    say({ id: "sandbox.ready" })
  })
  act($("#fund"), async () => {
    const sandboxCall = await fetch("/checkout/sandbox/fund", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ address: testWallet().address })
    })
    if (sandboxCall.ok) say({ id: "sandbox.funded", params: { amount: units(100_000_000n) } })
    else say({ id: "sandbox.faucetRefused" }, "error")
  })
  for (const button of document.querySelectorAll<HTMLButtonElement>("#sandbox-pay button")) {
    act(button, async () => {
      const res = await fetch("/checkout/sandbox/pay", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ deposit_request: id, mode: button.dataset.mode })
      })
      const json = (await res.json()) as { amount_base_units?: string; error?: { message?: string } }
      // The sandbox's own message (a developer's tool) when it gives one.
      if (!res.ok)
        throw json.error?.message !== undefined
          ? new Error(json.error.message)
          : new Said({ id: "sandbox.payFailed" })
      paymentSent()
      say({ id: "sandbox.sent", params: { amount: money(json.amount_base_units ?? "0") } })
    })
  }
}
