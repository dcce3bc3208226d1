import { act, statementFor } from "./actions"
import { usdc } from "./amounts"
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
    say("Your payment address is ready (test wallet).")
  })
  act($("#fund"), async () => {
    const sandboxCall = await fetch("/checkout/sandbox/fund", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ address: testWallet().address })
    })
    say(
      sandboxCall.ok ? "The test wallet got 100.00 test USDC." : "The faucet refused.",
      sandboxCall.ok ? "info" : "error"
    )
  })
  for (const button of document.querySelectorAll<HTMLButtonElement>("#sandbox-pay button")) {
    act(button, async () => {
      const res = await fetch("/checkout/sandbox/pay", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ deposit_request: id, mode: button.dataset.mode })
      })
      const json = (await res.json()) as { amount_base_units?: string; error?: { message?: string } }
      if (!res.ok) throw new Error(json.error?.message ?? "The sandbox payment failed.")
      paymentSent()
      say(`Sent ${usdc(json.amount_base_units ?? "0")}. Waiting for the network to confirm it…`)
    })
  }
}
