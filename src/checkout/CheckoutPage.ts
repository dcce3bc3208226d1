/** The checkout's HTML: fixed regions the script fills; every control labelled, status in a polite live region. */
export const checkoutHtml = (sandbox: boolean) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Pay with USDC</title>
<link rel="stylesheet" href="/checkout/assets/app.css">
<script src="/checkout/assets/app.js" defer></script>
</head>
<body data-status="loading"${sandbox ? ' data-sandbox="true"' : ""}>
<main>
  <p class="issuer" id="issuer"></p>
  <h1 id="heading">Payment request</h1>
  <dl>
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
    <p>Send USDC on this network to:</p>
    <p class="address" id="address"></p>
    <div id="qr" role="img" aria-label="QR code of the payment link"></div>
    <div class="row">
      <button id="copy" type="button" class="secondary">Copy address</button>
      <button id="pay-from-wallet" type="button">Pay from this wallet</button>
    </div>
  </section>
  <section id="sandbox" hidden aria-labelledby="sandbox-title">
    <h2 id="sandbox-title">Sandbox</h2>
    <p>Test money on the local chain: no wallet extension needed.</p>
    <div class="row" id="sandbox-wallet">
      <button id="test-wallet" type="button" class="secondary">Use a test wallet</button>
      <button id="fund" type="button" class="secondary">Fund the test wallet</button>
    </div>
    <div class="row" id="sandbox-pay">
      <button type="button" class="secondary" data-mode="exact">Pay exactly</button>
      <button type="button" class="secondary" data-mode="partial">Pay part</button>
      <button type="button" class="secondary" data-mode="over">Pay too much</button>
      <button type="button" class="secondary" data-mode="stranger">Pay from a stranger</button>
    </div>
  </section>
  <section id="returned" hidden aria-labelledby="returned-title">
    <h2 id="returned-title">Returned to you</h2>
    <ul id="returns"></ul>
  </section>
</main>
</body>
</html>
`
