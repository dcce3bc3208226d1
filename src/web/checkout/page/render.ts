import QRCode from "qrcode"
import { networkName, owed, usdc } from "./amounts"
import { $, sandbox, say, state, status } from "./page"
import type { PayerRead } from "./read"

/** What the request waits for, in the words of its own policy: a request that needs no proof never asks for one. */
const stateText = (read: PayerRead): string => {
  switch (read.status) {
    case "awaiting_payer":
      if (read.proof_required === "mailbox")
        return "Confirm your email address, then choose the wallet you will pay from."
      if (read.proof_required === "merchant_session")
        return "Open this page from the merchant's site to continue."
      return "Choose the wallet you will pay from to get the payment address."
    case "ready":
      return "Ready: send the payment to the address below."
    case "partially_deposited":
      return "Part of the payment has arrived. Send the rest to the same address."
    case "deposited":
      return "Payment received in full; it is being settled."
    case "settled":
      return "Paid. Thank you. Your receipt is below."
    case "expired":
      return "This payment request has expired."
    case "returned":
      return "This payment request is closed; what you sent has been returned."
    case "needs_attention":
      return "The merchant is looking into this payment; nothing more is needed from you now."
    default:
      return read.status
  }
}

const reasonText: Record<string, string> = {
  overpayment: "you sent more than was asked",
  expired_balance: "the request expired before it was paid in full",
  late_transfer: "the payment arrived after the request was closed"
}

/** The link to this page, without the fragment (a merchant-session secret never leaves the address bar it came in). */
export const checkoutLink = () => `${location.origin}${location.pathname}`

/** QR codes are drawn only when what they encode changes, not on every poll. */
const drawn = new Map<string, string>()
const drawQr = (selector: string, text: string) => {
  if (drawn.get(selector) === text) return
  drawn.set(selector, text)
  void QRCode.toString(text, { type: "svg", margin: 1, errorCorrectionLevel: "M" }).then((svg) => {
    if (drawn.get(selector) === text) $(selector).innerHTML = svg
  })
}

const link = (href: string, text: string) => {
  const a = document.createElement("a")
  a.href = href
  a.rel = "noopener noreferrer"
  a.textContent = text
  return a
}

/** The issuer's support contact as the receipt shows it: whatever the issuer gave, or a plain sentence. */
const contactOf = (read: PayerRead): Array<Node | string> => {
  const who = read.issuer_display_name ?? "the merchant"
  const ways: Array<Node> = []
  if (read.issuer_support_email !== null)
    ways.push(link(`mailto:${read.issuer_support_email}`, read.issuer_support_email))
  if (read.issuer_support_url?.startsWith("https://"))
    ways.push(link(read.issuer_support_url, read.issuer_support_url))
  if (ways.length === 0) return [`Questions about this payment? Ask ${who} and quote this page's link.`]
  const parts: Array<Node | string> = [`Questions about this payment? Contact ${who}: `]
  for (const [i, w] of ways.entries()) parts.push(...(i > 0 ? [" or ", w] : [w]))
  parts.push(".")
  return parts
}

const renderReceipt = (read: PayerRead) => {
  const receipt = read.receipt
  $("#receipt").hidden = receipt === null
  if (receipt === null) return
  $("#receipt-amount").textContent = usdc(receipt.amount_base_units)
  $("#receipt-issuer").textContent = read.issuer_display_name ?? "The merchant"
  const time = $("#receipt-time")
  time.setAttribute("datetime", receipt.paid_at)
  time.textContent = new Date(receipt.paid_at).toLocaleString(undefined, {
    dateStyle: "medium",
    timeStyle: "short"
  })
  const network = networkName(read.chain_id, sandbox)
  $("#receipt-network").textContent = network.charAt(0).toUpperCase() + network.slice(1)
  $("#receipt-tx-title").textContent = receipt.transaction_hashes.length > 1 ? "Transactions" : "Transaction"
  $("#receipt-tx").replaceChildren(
    ...receipt.transaction_hashes.map((hash) => {
      const item = document.createElement("li")
      item.textContent = hash
      return item
    })
  )
  $("#receipt-contact").replaceChildren(...contactOf(read))
}

/** Statuses after which nothing more happens on this page: the payer is done here. */
const FINISHED = new Set(["settled", "expired", "returned"])

/**
 * The merchant's link back, when it gave one: "Return to" once the request is finished (receipt, expired,
 * returned), a quieter "Back to" while it waits. A plain link in the same tab: the service never fetches it.
 */
const renderWayBack = (read: PayerRead) => {
  const url = read.return_url
  // The service takes only http(s) links; checked again so no other scheme ever becomes a link here.
  const usable = url !== null && /^https?:\/\//i.test(url)
  const wayBack = $("#way-back")
  wayBack.hidden = !usable
  if (!usable) return
  const finished = FINISHED.has(read.status)
  wayBack.dataset.tone = finished ? "" : "quiet"
  const anchor = $<HTMLAnchorElement>("#way-back-link")
  anchor.href = url
  anchor.textContent = `${finished ? "Return to" : "Back to"} ${read.issuer_display_name ?? "the merchant"}`
}

const PAY_BUTTONS = "#pay-from-wallet, #sandbox-pay button"

/** A request still taking payments: the only state in which any pay button may be pressed. */
const isOpen = (read: PayerRead | undefined) =>
  read !== undefined &&
  (read.status === "awaiting_payer" || read.status === "ready" || read.status === "partially_deposited")

/**
 * Every pay button's state with its reason beside it: none while a payment from this page is on its way (a
 * second click would pay twice), and "Pay from this wallet" only with a wallet connected in this browser.
 */
export const refreshPayButtons = () => {
  const { current, sending, wallet } = state
  const leaving = document.querySelector(`:is(${PAY_BUTTONS})[data-busy]`) !== null
  const onItsWay = sending !== undefined || leaving
  const walletReason = leaving
    ? "A payment is being sent from this page: wait for it."
    : onItsWay
      ? "A payment is on its way. The buttons come back if the network has not shown it within two minutes."
      : wallet === undefined
        ? `No wallet is connected in this browser. Send ${current === undefined ? "the amount" : usdc(owed(current.amount_base_units, current.received_base_units))} to the address above from the wallet you chose.`
        : ""
  for (const button of document.querySelectorAll<HTMLButtonElement>(PAY_BUTTONS))
    button.disabled =
      !isOpen(current) || onItsWay || (button.id === "pay-from-wallet" && wallet === undefined)
  $("#pay-reason").textContent = walletReason
  $("#sandbox-reason").textContent = onItsWay
    ? "A payment is on its way: these buttons come back once it has arrived."
    : ""
}

/** A payment just left this page: pay buttons wait for the request to show it (or two minutes). */
export const paymentSent = () => {
  const { current } = state
  if (current === undefined) return
  const until = Date.now() + 120_000
  state.sending = { receivedBefore: current.received_base_units, until }
  setTimeout(() => {
    if (state.sending?.until === until) {
      state.sending = undefined
      refreshPayButtons()
    }
  }, 120_000)
  refreshPayButtons()
}

export const render = (read: PayerRead) => {
  state.current = read
  document.body.dataset.status = read.status
  $("#issuer").textContent = read.issuer_display_name ?? "A merchant"
  $("#heading").textContent = read.heading === "" ? "Payment request" : read.heading
  const left = owed(read.amount_base_units, read.received_base_units)
  $("#amount").textContent = usdc(read.amount_base_units)
  $("#received").textContent = usdc(read.received_base_units)
  $("#owed").textContent = usdc(left)
  $("#state").textContent = stateText(read)
  const attachments = $("#attachments")
  attachments.replaceChildren(
    ...read.attachments.map((a) => {
      const item = document.createElement("li")
      const anchor = link(a.download_url, `${a.file_name} (${Math.ceil(a.size_bytes / 1024)} KB)`)
      anchor.setAttribute("download", a.file_name)
      item.append(anchor)
      return item
    })
  )
  $("#documents").hidden = read.attachments.length === 0
  const returns = $("#returns")
  returns.replaceChildren(
    ...read.returns.map((r) => {
      const item = document.createElement("li")
      item.append(
        `${usdc(r.amount_base_units)} returned because ${reasonText[r.reason] ?? r.reason}. Transaction: `
      )
      const hash = document.createElement("span")
      hash.className = "address"
      hash.textContent = r.transaction_hash
      item.append(hash)
      return item
    })
  )
  $("#returned").hidden = read.returns.length === 0
  const open = isOpen(read)
  // Once closed, the last step's message is stale and the deadline no longer matters.
  if (!open && status.dataset.tone !== "error") say("")
  document.body.dataset.open = String(open)
  if (state.sending !== undefined && (!open || read.received_base_units !== state.sending.receivedBefore))
    state.sending = undefined
  $("#mailbox").hidden = !(open && read.proof_required === "mailbox")
  $("#session").hidden = !(open && read.proof_required === "merchant_session")
  $("#connect").hidden = !(open && read.proof_required === null && read.wallet_required)
  $("#pay").hidden = !(open && read.address !== null)
  // A payer who reached this page on a computer and keeps the wallet on a phone carries on there: every proof is
  // kept by the service, so the link alone is enough (and holds no secret).
  const phone = read.status === "awaiting_payer" && read.proof_required !== "merchant_session"
  $("#phone").hidden = !phone
  if (phone) {
    $("#checkout-link").textContent = checkoutLink()
    drawQr("#phone-qr", checkoutLink())
  }
  if (read.address !== null && read.payment_link !== null) {
    $("#address").textContent = read.address
    $("#pay-amount").textContent = usdc(left)
    $("#network").textContent = networkName(read.chain_id, sandbox)
    drawQr("#qr", read.payment_link)
  }
  renderReceipt(read)
  renderWayBack(read)
  refreshPayButtons()
  if (sandbox) {
    $("#sandbox").hidden = !open
    $("#test-wallet").hidden = !(open && read.proof_required === null && read.wallet_required)
    $("#fund").hidden = sessionStorage.getItem("checkout-test-key") === null
    $("#sandbox-pay").hidden = !(open && read.address !== null)
  }
}

/** An unknown request, shown as such: no amounts to wait for, nothing to do but check the link. */
export const renderNotFound = () => {
  document.body.dataset.status = "not_found"
  document.body.dataset.open = "false"
  $("#issuer").textContent = ""
  $("#heading").textContent = "Payment request not found"
  $("#summary").hidden = true
  $("#way-back").hidden = true
  for (const row of document.querySelectorAll("#summary dd")) row.textContent = "—"
  $("#state").textContent =
    "There is no payment request at this link. Check the link the merchant gave you, or ask them for a new one."
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
