import QRCode from "qrcode"
import { formatUnits, owed } from "./amounts"
import { $, sandbox, say, state, status } from "./page"
import type { PayerRead } from "./read"

const statusText: Record<string, string> = {
  awaiting_payer: "Waiting for you to prove who you are and choose a wallet.",
  ready: "Ready: send the payment to the address below.",
  partially_deposited: "Part of the payment has arrived. Send the rest to the same address.",
  deposited: "Payment received in full; it is being settled.",
  settled: "Paid. Thank you.",
  expired: "This payment request has expired.",
  returned: "This payment request is closed; what you sent has been returned.",
  needs_attention: "The merchant is looking into this payment; nothing more is needed from you now."
}

const reasonText: Record<string, string> = {
  overpayment: "you sent more than was asked",
  expired_balance: "the request expired before it was paid in full",
  late_transfer: "the payment arrived after the request was closed"
}

export const render = (read: PayerRead) => {
  state.current = read
  document.body.dataset.status = read.status
  $("#issuer").textContent = read.issuer_display_name ?? "A merchant"
  $("#heading").textContent = read.heading === "" ? "Payment request" : read.heading
  $("#amount").textContent = `${read.amount} USDC`
  $("#received").textContent = `${read.received} USDC`
  $("#owed").textContent = `${formatUnits(owed(read.amount_base_units, read.received_base_units))} USDC`
  $("#state").textContent = statusText[read.status] ?? read.status
  const attachments = $("#attachments")
  attachments.replaceChildren(
    ...read.attachments.map((a) => {
      const item = document.createElement("li")
      const link = document.createElement("a")
      link.href = a.download_url
      link.textContent = `${a.file_name} (${Math.ceil(a.size_bytes / 1024)} KB)`
      link.setAttribute("download", a.file_name)
      item.append(link)
      return item
    })
  )
  $("#documents").hidden = read.attachments.length === 0
  const returns = $("#returns")
  returns.replaceChildren(
    ...read.returns.map((r) => {
      const item = document.createElement("li")
      item.textContent = `${r.amount} USDC returned because ${reasonText[r.reason] ?? r.reason} (transaction ${r.transaction_hash.slice(0, 10)}…).`
      return item
    })
  )
  $("#returned").hidden = read.returns.length === 0
  const open =
    read.status === "awaiting_payer" || read.status === "ready" || read.status === "partially_deposited"
  // Once closed, the last step's message is stale and the deadline no longer matters.
  if (!open && status.dataset.tone !== "error") say("")
  document.body.dataset.open = String(open)
  $("#mailbox").hidden = !(open && read.proof_required === "mailbox")
  $("#session").hidden = !(open && read.proof_required === "merchant_session")
  $("#connect").hidden = !(open && read.proof_required === null && read.wallet_required)
  $("#pay").hidden = !(open && read.address !== null)
  if (read.address !== null && read.payment_link !== null) {
    $("#address").textContent = read.address
    void QRCode.toString(read.payment_link, { type: "svg", margin: 1, errorCorrectionLevel: "M" }).then(
      (svg) => {
        $("#qr").innerHTML = svg
      }
    )
  }
  ;($("#pay-from-wallet") as HTMLButtonElement).disabled = state.wallet === undefined
  if (sandbox) {
    $("#sandbox").hidden = !open
    $("#test-wallet").hidden = !(open && read.proof_required === null && read.wallet_required)
    $("#fund").hidden = sessionStorage.getItem("checkout-test-key") === null
    $("#sandbox-pay").hidden = !(open && read.address !== null)
  }
}

export const countdown = () => {
  const { current } = state
  if (current === undefined) return
  if (document.body.dataset.open === "false") {
    $("#deadline").textContent = "—"
    return
  }
  const left = Math.max(0, Math.floor((Date.parse(current.expires_at) - Date.now()) / 1000))
  const h = Math.floor(left / 3600)
  const m = Math.floor((left % 3600) / 60)
  const s = left % 60
  $("#deadline").textContent =
    left === 0 ? "expired" : `${h > 0 ? `${h} h ` : ""}${m} min ${String(s).padStart(2, "0")} s`
}
