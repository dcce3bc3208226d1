/** The checkout's HTML: fixed regions the script fills; every control labelled, status in a polite live region. */
export const checkoutHtml = (sandbox: boolean) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Pay with USDC</title>
<link rel="icon" href="/favicon.ico" sizes="32x32">
<link rel="stylesheet" href="/checkout/assets/app.css">
<script src="/checkout/assets/app.js" defer></script>
</head>
<body data-status="loading"${sandbox ? ' data-sandbox="true"' : ""}>
<main>
  <p class="issuer" id="issuer"></p>
  <h1 id="heading">Payment request</h1>
  <dl id="summary">
    <dt>Amount</dt><dd id="amount">…</dd>
    <dt>Received</dt><dd id="received">…</dd>
    <dt>Still owed</dt><dd id="owed">…</dd>
    <dt>Time left</dt><dd id="deadline">…</dd>
  </dl>
  <p id="state"></p>
  <p id="status" role="status" aria-live="polite"></p>
  <section id="documents" hidden aria-labelledby="documents-title">
    <h2 id="documents-title">Documents</h2>
    <ul id="attachments"></ul>
  </section>
  <section id="mailbox" hidden aria-labelledby="mailbox-title">
    <h2 id="mailbox-title">Confirm your email</h2>
    <p>The merchant asks you to confirm the email address they have for you.</p>
    <div class="row"><button id="send-code" type="button">Email me a code</button></div>
    <form id="code-form" class="row">
      <label for="code">Code from the email</label>
      <input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required>
      <button type="submit">Confirm</button>
    </form>
  </section>
  <section id="session" hidden aria-labelledby="session-title">
    <h2 id="session-title">Open this page from the merchant's site</h2>
    <p>This payment must be started from the merchant's own page. Go back to it and follow its link again.</p>
  </section>
  <section id="connect" hidden aria-labelledby="connect-title">
    <h2 id="connect-title">Choose the wallet you will pay from</h2>
    <p>Your wallet signs a short statement (it moves no money); then you get the address to pay.</p>
    <button id="connect-wallet" type="button">Connect wallet</button>
  </section>
  <section id="pay" hidden aria-labelledby="pay-title">
    <h2 id="pay-title">Pay</h2>
    <p>Send <strong id="pay-amount"></strong> on <strong id="network"></strong> to this address:</p>
    <p class="address" id="address"></p>
    <div id="qr" role="img" aria-label="QR code for a wallet app: the amount and the address"></div>
    <div class="row">
      <button id="copy" type="button" class="secondary">Copy address</button>
      <button id="pay-from-wallet" type="button" aria-describedby="pay-reason">Pay from this wallet</button>
    </div>
    <p class="reason" id="pay-reason"></p>
  </section>
  <section id="phone" hidden aria-labelledby="phone-title">
    <h2 id="phone-title">Continue on your phone</h2>
    <p>Wallet on your phone? Scan this with its camera and open the link in your wallet app's browser: you carry on there from where you are.</p>
    <div id="phone-qr" role="img" aria-label="QR code of this page's link"></div>
    <p class="address" id="checkout-link"></p>
    <button id="copy-link" type="button" class="secondary">Copy link</button>
  </section>
  <section id="receipt" hidden aria-labelledby="receipt-title">
    <h2 id="receipt-title">Receipt</h2>
    <dl>
      <dt>Paid</dt><dd id="receipt-amount"></dd>
      <dt>To</dt><dd id="receipt-issuer"></dd>
      <dt>When</dt><dd><time id="receipt-time"></time></dd>
      <dt>Network</dt><dd id="receipt-network"></dd>
    </dl>
    <p id="receipt-tx-title">Transaction</p>
    <ul class="address" id="receipt-tx" aria-labelledby="receipt-tx-title"></ul>
    <p id="receipt-contact"></p>
  </section>
  <section id="sandbox" hidden aria-labelledby="sandbox-title">
    <h2 id="sandbox-title">Sandbox</h2>
    <p>Test money on the local chain: no wallet extension needed.</p>
    <div class="row" id="sandbox-wallet">
      <button id="test-wallet" type="button" class="secondary">Use a test wallet</button>
      <button id="fund" type="button" class="secondary">Fund the test wallet</button>
    </div>
    <div class="row" id="sandbox-pay">
      <button type="button" class="secondary" data-mode="exact" aria-describedby="sandbox-reason">Pay exactly</button>
      <button type="button" class="secondary" data-mode="partial" aria-describedby="sandbox-reason">Pay part</button>
      <button type="button" class="secondary" data-mode="over" aria-describedby="sandbox-reason">Pay too much</button>
      <button type="button" class="secondary" data-mode="stranger" aria-describedby="sandbox-reason">Pay from a stranger</button>
    </div>
    <p class="reason" id="sandbox-reason"></p>
  </section>
  <section id="returned" hidden aria-labelledby="returned-title">
    <h2 id="returned-title">Returned to you</h2>
    <ul id="returns"></ul>
  </section>
  <p id="way-back" hidden><a id="way-back-link" rel="noopener noreferrer"></a></p>
</main>
</body>
</html>
`
