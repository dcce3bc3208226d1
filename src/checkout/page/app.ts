import QRCode from "qrcode"
import { encodeFunctionData, erc20Abi } from "viem"
import { describeRefusal } from "./refusals"
import { formatUnits, owed } from "./amounts"
import { discoverWallet, type Eip1193 } from "./wallet"
import { testWallet } from "./testWallet"

/**
 * The hosted checkout: what a payer sees and does, from the payer routes alone. Plain DOM, no framework: one
 * render of the current payer read into fixed regions, and a long poll (`wait_for=change`) that re-renders on
 * every change, reconnecting with backoff. Amounts are shown from base-unit strings with BigInt, never floats.
 */
interface PayerRead {
  readonly id: string
  readonly status: string
  readonly amount: string
  readonly amount_base_units: string
  readonly received: string
  readonly received_base_units: string
  readonly heading: string
  readonly issuer_display_name: string | null
  readonly payer_policy_mode: "none" | "mailbox" | "merchant_session"
  readonly proof_required: "mailbox" | "merchant_session" | null
  readonly wallet_required: boolean
  readonly chain_id: number
  readonly token_address: string | null
  readonly address: string | null
  readonly payment_link: string | null
  readonly attestation: {
    readonly domain: { name: string; version: string; chainId: number }
    readonly types: Record<string, Array<{ name: string; type: string }>>
    readonly primary_type: string
    readonly message: { depositRequest: string; chainId: number }
  } | null
  readonly expires_at: string
  readonly version: string
  readonly attachments: ReadonlyArray<{
    id: string
    file_name: string
    size_bytes: number
    download_url: string
  }>
  readonly returns: ReadonlyArray<{ amount: string; reason: string; transaction_hash: string }>
}

const id = location.pathname.split("/").pop() ?? ""
const api = `/v1/payer/deposit-requests/${encodeURIComponent(id)}`
const $ = <E extends HTMLElement>(selector: string) => document.querySelector(selector) as E
const status = $<HTMLElement>("#status")
let current: PayerRead | undefined
let wallet: { provider: Eip1193; account: string } | undefined
const sandbox = document.body.dataset.sandbox === "true"

/** One line in the live region, read by screen readers as it changes. */
const say = (text: string, tone: "info" | "error" = "info") => {
  status.textContent = text
  status.dataset.tone = tone
}

const call = async <A = PayerRead>(path: string, body?: unknown): Promise<A> => {
  const res = await fetch(`${api}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? null : JSON.stringify(body)
  })
  const json = (await res.json()) as { error?: { code?: string; message?: string } }
  if (!res.ok) throw new Error(describeRefusal(json.error?.code, json.error?.message))
  return json as A
}

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

const render = (read: PayerRead) => {
  current = read
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
  ;($("#pay-from-wallet") as HTMLButtonElement).disabled = wallet === undefined
  if (sandbox) {
    $("#sandbox").hidden = !open
    $("#test-wallet").hidden = !(open && read.proof_required === null && read.wallet_required)
    $("#fund").hidden = sessionStorage.getItem("checkout-test-key") === null
    $("#sandbox-pay").hidden = !(open && read.address !== null)
  }
}

const countdown = () => {
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

/** Follows the request: a long poll per change, backing off after errors (a restarted server included). */
const follow = async () => {
  let delay = 500
  const pause = async () => {
    await new Promise((r) => setTimeout(r, delay))
    delay = Math.min(delay * 2, 10_000)
  }
  for (;;) {
    const version = current?.version
    const asked = Date.now()
    try {
      const res = await fetch(
        version === undefined
          ? api
          : `${api}?wait_for=change&version=${encodeURIComponent(version)}&timeout=25`
      )
      if (!res.ok) throw new Error(`HTTP ${res.status}`)
      const read = (await res.json()) as PayerRead
      render(read)
      // A poll answered at once with nothing new (the server is closing, or holds too many polls from here) is
      // asked again only after a pause: polling again at once would be a busy loop against a struggling server.
      if (read.version === version && Date.now() - asked < 1_000) await pause()
      else delay = 500
    } catch {
      say("Reconnecting…")
      await pause()
      continue
    }
    if (status.dataset.tone !== "error" && status.textContent === "Reconnecting…") say("")
  }
}

/** A wallet's refusal (EIP-1193 codes) or ours, as a sentence. */
const sentenceOf = (e: unknown): string => {
  const code = (e as { code?: unknown } | null)?.code
  if (code === 4001) return "You declined in your wallet. Try again when you are ready."
  if (code === 4902)
    return `Your wallet does not know this network (chain ${current?.chain_id}). Add it in your wallet, then try again.`
  if (code === 4100 || code === 4200)
    return "Your wallet refused this request. Unlock it, or try another wallet."
  return e instanceof Error ? e.message : "Your wallet could not do that. Try again."
}

const act = (button: HTMLButtonElement, run: () => Promise<void>) =>
  button.addEventListener("click", () => {
    button.disabled = true
    run()
      .catch((e: unknown) => say(sentenceOf(e), "error"))
      .finally(() => {
        button.disabled = false
      })
  })

act($("#send-code"), async () => {
  const sent = await call<{ sent_to: string }>("/mailbox/start", {})
  say(`We sent a code to ${sent.sent_to}. Enter it below.`)
})
$("#code-form").addEventListener("submit", (event) => {
  event.preventDefault()
  const input = $<HTMLInputElement>("#code")
  call("/mailbox/verify", { code: input.value.trim() })
    .then((read) => {
      render(read)
      say("Email confirmed.")
    })
    .catch((e: unknown) => say(e instanceof Error ? e.message : String(e), "error"))
})

act($("#connect-wallet"), async () => {
  if (current?.attestation === null || current === undefined) return
  const provider = await discoverWallet()
  if (provider === undefined)
    throw new Error(
      "No wallet was found in this browser. Open this page in your wallet's browser, or pay to the address by hand once it is shown."
    )
  const [account] = (await provider.request({ method: "eth_requestAccounts" })) as Array<string>
  if (account === undefined) throw new Error("The wallet shared no account.")
  const chainHex = `0x${current.chain_id.toString(16)}`
  if ((await provider.request({ method: "eth_chainId" })) !== chainHex) {
    say("Switching your wallet to the right network…")
    await provider.request({ method: "wallet_switchEthereumChain", params: [{ chainId: chainHex }] })
  }
  const { expiresAt, typed } = statementFor(account)
  // A wallet's eth_signTypedData_v4 takes the domain's own type too (viem derives it; wallets do not).
  const withDomain = {
    ...typed,
    types: {
      EIP712Domain: [
        { name: "name", type: "string" },
        { name: "version", type: "string" },
        { name: "chainId", type: "uint256" }
      ],
      ...typed.types
    }
  }
  say("Sign the statement in your wallet: it proves the wallet is yours and moves no money.")
  const signature = await provider.request({
    method: "eth_signTypedData_v4",
    params: [account, JSON.stringify(withDomain)]
  })
  wallet = { provider, account }
  render(
    await call("/wallet", { wallet: account, chain_id: current.chain_id, expires_at: expiresAt, signature })
  )
  say("Your payment address is ready.")
})

act($("#pay-from-wallet"), async () => {
  if (
    current === undefined ||
    wallet === undefined ||
    current.address === null ||
    current.token_address === null
  )
    return
  const value = owed(current.amount_base_units, current.received_base_units)
  if (value <= 0n) return
  say("Confirm the transfer in your wallet…")
  await wallet.provider.request({
    method: "eth_sendTransaction",
    params: [
      {
        from: wallet.account,
        to: current.token_address,
        data: encodeFunctionData({
          abi: erc20Abi,
          functionName: "transfer",
          args: [current.address as `0x${string}`, value]
        })
      }
    ]
  })
  say("Payment sent. Waiting for the network to confirm it…")
})

act($("#copy"), async () => {
  if (current?.address) {
    await navigator.clipboard.writeText(current.address)
    say("Address copied.")
  }
})

/** The attestation a wallet signs: the request's typed data, with the wallet and an expiry ten minutes ahead. */
const statementFor = (account: string) => {
  const a = current!.attestation!
  const expiresAt = Math.floor(Date.now() / 1000) + 600
  return {
    expiresAt,
    typed: {
      domain: a.domain,
      types: a.types,
      primaryType: a.primary_type,
      message: { ...a.message, wallet: account, expiresAt }
    }
  }
}

// Sandbox only: a test wallet whose key lives in this browser session, and the local chain's faucet and payers.
act($("#test-wallet"), async () => {
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
    sandboxCall.ok ? "The test wallet got 100.000000 test USDC." : "The faucet refused.",
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
    say(
      `Sent ${formatUnits(BigInt(json.amount_base_units ?? "0"))} USDC. Waiting for the network to confirm it…`
    )
  })
}

/** The merchant's page hands the session secret over in the fragment, which never reaches a server log. */
const handOver = async () => {
  const secret = new URLSearchParams(location.hash.slice(1)).get("secret")
  if (secret === null) return
  history.replaceState(null, "", location.pathname)
  render(await call("/merchant-session", { secret }))
  say("Verified by the merchant.")
}

const start = async () => {
  try {
    render(await call(""))
  } catch (e) {
    say(e instanceof Error ? e.message : String(e), "error")
    return
  }
  setInterval(countdown, 1000)
  countdown()
  await handOver().catch((e: unknown) => say(e instanceof Error ? e.message : String(e), "error"))
  void follow()
}
void start()
