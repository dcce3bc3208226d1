import QRCode from "qrcode"
import { networkName, owed } from "./amounts"
import {
  capitalized,
  clock,
  dateTime,
  duration,
  eitherOf,
  kilobytes,
  money,
  type Params,
  t,
  tNodes,
  zoneName
} from "./i18n"
import type { MessageId } from "./messages"
import { $, onPhone, sandbox, say, state, status } from "./page"
import type { PayerRead } from "./read"
import { walletAppLinks } from "./walletApps"

/** What the request waits for, in the words of its own policy: a request that needs no proof never asks for one. */
const stateText = (read: PayerRead): string => {
  switch (read.status) {
    case "awaiting_payer":
      if (read.proof_required === "mailbox") return t("state.awaitingMailbox")
      if (read.proof_required === "merchant_session") return t("state.awaitingSession")
      return t("state.awaitingWallet")
    case "ready":
      return t("state.ready")
    case "partially_deposited":
      return t("state.partial")
    case "deposited":
      return t("state.deposited")
    case "settled":
      return t("state.settled")
    case "expired":
      return t("state.expired")
    case "returned":
      return t("state.returned")
    case "needs_attention":
      return t("state.needsAttention")
    default:
      return read.status
  }
}

/** Why money went back, as one sentence per reason (a reason we do not know yet is named as the API gives it). */
const returnedText = (amount: string, reason: string): string => {
  const known: Record<string, MessageId> = {
    overpayment: "returns.overpayment",
    expired_balance: "returns.expired_balance",
    late_transfer: "returns.late_transfer"
  }
  const params: Params = { amount, reason }
  return t(known[reason] ?? "returns.other", params)
}

const networkOf = (chainId: number) => networkName(chainId, sandbox, t)

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

/** The wallet apps' links for this page, drawn when the page's link changes (never with the fragment). */
let appLinksFor: string | undefined
const drawAppLinks = (url: string) => {
  $("#app-link").textContent = url
  if (appLinksFor === url) return
  appLinksFor = url
  $("#app-links").replaceChildren(
    ...walletAppLinks(url).map((app) => {
      const item = document.createElement("li")
      item.append(link(app.href, app.name))
      return item
    })
  )
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
  const merchant = read.issuer_display_name ?? t("merchant.object")
  const ways: Array<Node> = []
  if (read.issuer_support_email !== null)
    ways.push(link(`mailto:${read.issuer_support_email}`, read.issuer_support_email))
  if (read.issuer_support_url?.startsWith("https://"))
    ways.push(link(read.issuer_support_url, read.issuer_support_url))
  if (ways.length === 0) return [t("contact.ask", { merchant })]
  const joined = document.createDocumentFragment()
  joined.append(...eitherOf(ways))
  return tNodes("contact.ways", { merchant, ways: joined })
}

const renderReceipt = (read: PayerRead) => {
  const receipt = read.receipt
  $("#receipt").hidden = receipt === null
  if (receipt === null) return
  $("#receipt-amount").textContent = money(receipt.amount_base_units)
  $("#receipt-issuer").textContent = read.issuer_display_name ?? t("merchant.subject")
  // In the payer's zone, named: a receipt time without its zone reads as a different moment elsewhere.
  const time = $("#receipt-time")
  time.setAttribute("datetime", receipt.paid_at)
  time.setAttribute("title", zoneName())
  time.textContent = dateTime(receipt.paid_at)
  $("#receipt-network").textContent = capitalized(networkOf(read.chain_id))
  $("#receipt-tx-title").textContent = t(
    receipt.transaction_hashes.length > 1 ? "receipt.transactions" : "receipt.transaction"
  )
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
  anchor.textContent = t(finished ? "wayBack.return" : "wayBack.back", {
    merchant: read.issuer_display_name ?? t("merchant.object")
  })
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
  const { current, sending, wallet, attested } = state
  const leaving = document.querySelector(`:is(${PAY_BUTTONS})[data-busy]`) !== null
  const onItsWay = sending !== undefined || leaving
  const amount =
    current === undefined
      ? t("reason.theAmount")
      : money(owed(current.amount_base_units, current.received_base_units))
  const walletReason = leaving
    ? t("reason.sending")
    : onItsWay
      ? t("reason.onItsWay")
      : wallet === undefined
        ? attested === undefined
          ? t("reason.noWallet", { amount })
          : t("wallet.notConnected", { account: attested, amount })
        : ""
  for (const button of document.querySelectorAll<HTMLButtonElement>(PAY_BUTTONS))
    button.disabled =
      !isOpen(current) || onItsWay || (button.id === "pay-from-wallet" && wallet === undefined)
  $("#pay-reason").textContent = walletReason
  $("#sandbox-reason").textContent = onItsWay ? t("reason.sandboxOnItsWay") : ""
  // The attested wallet, named; a way to reconnect it when this browser's wallet is not (or not yet) on it.
  $("#wallet-line").hidden = attested === undefined
  $("#wallet-line").textContent = attested === undefined ? "" : t("wallet.attested", { account: attested })
  $("#reconnect-wallet").hidden = attested === undefined || wallet !== undefined || !isOpen(current)
  if (wallet === undefined) $("#wallet-funds").textContent = ""
  showPhase()
}

/**
 * The heading of the step the payer is at: connect (or the proof asked first), pay, waiting for a payment on its
 * way (from this page, or received in full and being settled), the receipt, or the page's own heading once the
 * request is closed without one.
 */
const phaseHeading = (): string | undefined => {
  const read = state.current
  if (read === undefined) return undefined
  if (read.receipt !== null) return "#receipt-title"
  if (read.status === "deposited" || (isOpen(read) && state.sending !== undefined)) return "#waiting-title"
  if (!isOpen(read)) return "#heading"
  if (read.address !== null) return "#pay-title"
  if (read.proof_required === "mailbox") return "#mailbox-title"
  if (read.proof_required === "merchant_session") return "#session-title"
  if (!read.wallet_required) return undefined
  // A phone without a wallet connects through a wallet app: the same step, its links in place of the button.
  return $("#apps").hidden ? "#connect-title" : "#apps-title"
}

let shownPhase: string | undefined
/**
 * Focus follows the payer to each new step's heading, so keyboard and screen-reader users land on what replaced
 * the part they were in (it was hidden, and focus would fall to the page's body). The first step shown is not
 * focused: a page just opened starts at its top.
 */
const showPhase = () => {
  const heading = phaseHeading()
  $("#waiting").hidden = heading !== "#waiting-title"
  // The connect step stays one step when its links replace its button (the wallets answer after the first render).
  const phase = heading === "#apps-title" ? "#connect-title" : heading
  if (phase === shownPhase) return
  const first = shownPhase === undefined
  shownPhase = phase
  if (!first && heading !== undefined) $(heading).focus()
}

/**
 * A payment just left this page: pay buttons wait for the request to show it, or for `waitMs` (two minutes);
 * `null` waits with no end, for a transfer the page follows itself until it says how it ended (`release`).
 */
export const paymentSent = (waitMs: number | null = 120_000) => {
  const { current } = state
  if (current === undefined) return
  const sending = { receivedBefore: current.received_base_units, until: Number.POSITIVE_INFINITY }
  state.sending = sending
  if (waitMs !== null) release(sending, waitMs)
  refreshPayButtons()
}

/** The pay buttons come back after `ms` for this payment (none if another has left since, or it has arrived). */
export const release = (sending: NonNullable<typeof state.sending>, ms: number) => {
  const until = Date.now() + ms
  sending.until = until
  const free = () => {
    if (state.sending === sending && sending.until === until) {
      state.sending = undefined
      refreshPayButtons()
    }
  }
  if (ms <= 0) free()
  else setTimeout(free, ms)
}

export const render = (read: PayerRead) => {
  state.current = read
  document.body.dataset.status = read.status
  $("#issuer").textContent = read.issuer_display_name ?? t("merchant.someone")
  $("#heading").textContent = read.heading === "" ? t("summary.heading") : read.heading
  const left = owed(read.amount_base_units, read.received_base_units)
  $("#amount").textContent = money(read.amount_base_units)
  $("#received").textContent = money(read.received_base_units)
  $("#owed").textContent = money(left)
  $("#state").textContent = stateText(read)
  const attachments = $("#attachments")
  attachments.replaceChildren(
    ...read.attachments.map((a) => {
      const item = document.createElement("li")
      const anchor = link(a.download_url, `${a.file_name} (${kilobytes(a.size_bytes)})`)
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
      item.append(`${returnedText(money(r.amount_base_units), r.reason)} ${t("returns.transaction")} `)
      const hash = document.createElement("span")
      hash.className = "address"
      hash.textContent = r.transaction_hash
      item.append(hash)
      return item
    })
  )
  $("#returned").hidden = read.returns.length === 0
  const open = isOpen(read)
  // Paid: any error said before is over (a declined prompt, a failed try). Otherwise, once closed, the last step's
  // message is stale and the deadline no longer matters; an error then stays, it may explain the close.
  const paid = read.status === "deposited" || read.status === "settled" || read.receipt !== null
  if (paid || (!open && status.dataset.tone !== "error")) say("")
  document.body.dataset.open = String(open)
  if (state.sending !== undefined && (!open || read.received_base_units !== state.sending.receivedBefore))
    state.sending = undefined
  $("#mailbox").hidden = !(open && read.proof_required === "mailbox")
  $("#session").hidden = !(open && read.proof_required === "merchant_session")
  const connect = open && read.proof_required === null && read.wallet_required
  $("#pay").hidden = !(open && read.address !== null)
  // A payer who reached this page on a computer and keeps the wallet on a phone carries on there: every proof is
  // kept by the service, so the link alone is enough (and holds no secret). A phone is not sent to another phone.
  const handOff = read.status === "awaiting_payer" && read.proof_required !== "merchant_session"
  const phone = handOff && !onPhone()
  $("#phone").hidden = !phone
  if (phone) {
    $("#checkout-link").textContent = checkoutLink()
    drawQr("#phone-qr", checkoutLink())
  }
  // A phone with no wallet in its browser: the same hand-off, into a wallet app's own browser (decision 0098).
  const apps = handOff && onPhone() && state.walletFound === false
  $("#apps").hidden = !apps
  if (apps) drawAppLinks(checkoutLink())
  // There it replaces the connect button, which could only say that no wallet is here.
  $("#connect").hidden = !connect || apps
  if (read.address !== null && read.payment_link !== null) {
    // The sentence in the language's own word order, with the amount and the network in their places.
    $("#pay-sentence").replaceChildren(
      ...tNodes("pay.send", { amount: $("#pay-amount"), network: $("#network") })
    )
    $("#address").textContent = read.address
    $("#pay-amount").textContent = money(left)
    $("#network").textContent = networkOf(read.chain_id)
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
  $("#heading").textContent = t("notFound.heading")
  $("#summary").hidden = true
  $("#way-back").hidden = true
  for (const row of document.querySelectorAll("#summary dd")) row.textContent = "—"
  $("#state").textContent = t("notFound.text")
}

export const countdown = () => {
  const { current } = state
  if (current === undefined) return
  if (document.body.dataset.open === "false") {
    $("#deadline").textContent = "—"
    return
  }
  const left = Math.max(0, Math.floor((Date.parse(current.expires_at) - Date.now()) / 1000))
  $("#deadline").textContent =
    left === 0
      ? t("deadline.expired")
      : t("deadline.left", { left: duration(left), time: clock(current.expires_at) })
}
