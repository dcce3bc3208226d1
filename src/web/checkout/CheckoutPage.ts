import { Option } from "effect"
import type { CheckoutNetwork } from "../../http/middleware/ApiSettings"
import { fill, LANGUAGES, type MessageId, messages } from "./page/messages"

const escape = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

/** A fixed word in English, marked with its id so the script can say it in the payer's language. */
const w = (id: MessageId) => `data-i18n="${id}">${escape(messages.en[id])}`
/** A fixed accessible name, the same way. */
const label = (id: MessageId) => `data-i18n-label="${id}" aria-label="${escape(messages.en[id])}"`

/**
 * The network the script asks a wallet to add (EIP-3085) and names the fee's coin by, as data on the body (no
 * inline script): settings read by the server, public by construction (decision 0092).
 */
const networkData = (network: CheckoutNetwork) =>
  [
    `data-chain-name="${escape(network.name)}"`,
    `data-coin-name="${escape(network.coin.name)}"`,
    `data-coin-symbol="${escape(network.coin.symbol)}"`,
    ...Option.match(network.rpcUrl, {
      onNone: () => [],
      onSome: (url) => [`data-chain-rpc="${escape(url)}"`]
    }),
    ...Option.match(network.explorerUrl, {
      onNone: () => [],
      onSome: (url) => [`data-chain-explorer="${escape(url)}"`]
    })
  ].join(" ")

/**
 * The checkout's HTML: fixed regions the script fills; every control labelled, status in a polite live region.
 * Each step's heading and the live region take focus from the script (`tabindex="-1"`), so focus follows the payer
 * from step to step instead of falling to the body when a step is hidden (decision 0098).
 * Written in English (the catalogue's reference) with each fixed word's message id: the script switches them to
 * the payer's language before the request is read, and again when the payer picks another. Words the request
 * replaces (the heading, "Transaction") are marked too, so the page never waits in English; the render that
 * follows every switch puts the request's own back.
 */
export const checkoutHtml = (sandbox: boolean, network?: CheckoutNetwork) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(messages.en["page.title"])}</title>
<link rel="icon" href="/favicon.ico" sizes="32x32">
<link rel="stylesheet" href="/checkout/assets/app.css">
<script src="/checkout/assets/app.js" defer></script>
</head>
<body data-status="loading"${sandbox ? ' data-sandbox="true"' : ""}${network === undefined ? "" : ` ${networkData(network)}`}>
<header class="top">
  ${sandbox ? `<p id="sandbox-badge" class="badge" ${w("sandbox.badge")}</p>` : ""}
  <div class="language">
    <label for="language" ${w("language.label")}</label>
    <select id="language" autocomplete="off">
${LANGUAGES.map((l) => `      <option value="${l.tag}" lang="${l.tag}">${escape(l.name)}</option>`).join("\n")}
    </select>
  </div>
</header>
<main>
  <p class="issuer" id="issuer"></p>
  <h1 id="heading" tabindex="-1" ${w("summary.heading")}</h1>
  <dl id="summary">
    <dt ${w("summary.amount")}</dt><dd id="amount">…</dd>
    <dt ${w("summary.received")}</dt><dd id="received">…</dd>
    <dt ${w("summary.owed")}</dt><dd id="owed">…</dd>
    <dt ${w("summary.timeLeft")}</dt><dd id="deadline">…</dd>
  </dl>
  <p id="state"></p>
  <p id="status" role="status" aria-live="polite" tabindex="-1"></p>
  <section id="documents" hidden aria-labelledby="documents-title">
    <h2 id="documents-title" ${w("documents.title")}</h2>
    <ul id="attachments"></ul>
  </section>
  <section id="mailbox" hidden aria-labelledby="mailbox-title">
    <h2 id="mailbox-title" tabindex="-1" ${w("mailbox.title")}</h2>
    <p ${w("mailbox.intro")}</p>
    <div class="row"><button id="send-code" type="button" ${w("mailbox.send")}</button></div>
    <form id="code-form" class="row">
      <label for="code" ${w("mailbox.codeLabel")}</label>
      <input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required>
      <button type="submit" ${w("mailbox.confirm")}</button>
    </form>
  </section>
  <section id="session" hidden aria-labelledby="session-title">
    <h2 id="session-title" tabindex="-1" ${w("session.title")}</h2>
    <p ${w("session.intro")}</p>
  </section>
  <section id="connect" hidden aria-labelledby="connect-title">
    <h2 id="connect-title" tabindex="-1" ${w("connect.title")}</h2>
    <p ${w("connect.intro")}</p>
    <fieldset id="wallets" hidden>
      <legend ${w("connect.choose")}</legend>
      <div id="wallet-list"></div>
    </fieldset>
    <button id="connect-wallet" type="button" ${w("connect.button")}</button>
  </section>
  <section id="apps" hidden aria-labelledby="apps-title">
    <h2 id="apps-title" tabindex="-1" ${w("apps.title")}</h2>
    <p ${w("apps.intro")}</p>
    <ul id="app-links"></ul>
    <p ${w("apps.other")}</p>
    <p class="address" id="app-link"></p>
    <button id="copy-app-link" type="button" class="secondary" ${w("phone.copy")}</button>
  </section>
  <section id="pay" hidden aria-labelledby="pay-title">
    <h2 id="pay-title" tabindex="-1" ${w("pay.title")}</h2>
    <p id="pay-sentence">${fill(escape(messages.en["pay.send"]), {
      amount: '<strong id="pay-amount"></strong>',
      network: '<strong id="network"></strong>'
    })}</p>
    <p class="address" id="address"></p>
    <p class="address" id="wallet-line" hidden></p>
    <div id="qr" role="img" ${label("pay.qrLabel")}></div>
    <div class="row">
      <button id="copy" type="button" class="secondary" ${w("pay.copy")}</button>
      <button id="pay-from-wallet" type="button" aria-describedby="pay-reason wallet-funds" ${w("pay.fromWallet")}</button>
      <button id="reconnect-wallet" type="button" class="secondary" hidden ${w("pay.reconnect")}</button>
    </div>
    <p class="reason" id="pay-reason"></p>
    <p class="reason" id="wallet-funds"></p>
  </section>
  <section id="waiting" hidden aria-labelledby="waiting-title">
    <h2 id="waiting-title" tabindex="-1" ${w("waiting.title")}</h2>
    <p ${w("waiting.intro")}</p>
  </section>
  <section id="phone" hidden aria-labelledby="phone-title">
    <h2 id="phone-title" ${w("phone.title")}</h2>
    <p ${w("phone.intro")}</p>
    <div id="phone-qr" role="img" ${label("phone.qrLabel")}></div>
    <p class="address" id="checkout-link"></p>
    <button id="copy-link" type="button" class="secondary" ${w("phone.copy")}</button>
  </section>
  <section id="receipt" hidden aria-labelledby="receipt-title">
    <h2 id="receipt-title" tabindex="-1" ${w("receipt.title")}</h2>
    <dl>
      <dt ${w("receipt.paid")}</dt><dd id="receipt-amount"></dd>
      <dt ${w("receipt.to")}</dt><dd id="receipt-issuer"></dd>
      <dt ${w("receipt.when")}</dt><dd><time id="receipt-time"></time></dd>
      <dt ${w("receipt.network")}</dt><dd id="receipt-network"></dd>
    </dl>
    <p id="receipt-tx-title" ${w("receipt.transaction")}</p>
    <ul class="address" id="receipt-tx" aria-labelledby="receipt-tx-title"></ul>
    <p id="receipt-contact"></p>
  </section>
  <section id="sandbox" hidden aria-labelledby="sandbox-title">
    <h2 id="sandbox-title" ${w("sandbox.title")}</h2>
    <p ${w("sandbox.intro")}</p>
    <div class="row" id="sandbox-wallet">
      <button id="test-wallet" type="button" class="secondary" ${w("sandbox.testWallet")}</button>
      <button id="fund" type="button" class="secondary" ${w("sandbox.fund")}</button>
    </div>
    <div class="row" id="sandbox-pay">
      <button type="button" class="secondary" data-mode="exact" aria-describedby="sandbox-reason" ${w("sandbox.payExact")}</button>
      <button type="button" class="secondary" data-mode="partial" aria-describedby="sandbox-reason" ${w("sandbox.payPartial")}</button>
      <button type="button" class="secondary" data-mode="over" aria-describedby="sandbox-reason" ${w("sandbox.payOver")}</button>
      <button type="button" class="secondary" data-mode="stranger" aria-describedby="sandbox-reason" ${w("sandbox.payStranger")}</button>
    </div>
    <p class="reason" id="sandbox-reason"></p>
  </section>
  <section id="returned" hidden aria-labelledby="returned-title">
    <h2 id="returned-title" tabindex="-1" ${w("returned.title")}</h2>
    <ul id="returns"></ul>
  </section>
  <p id="way-back" hidden><a id="way-back-link" rel="noopener noreferrer"></a></p>
</main>
</body>
</html>
`
