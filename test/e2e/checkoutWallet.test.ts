import { randomBytes, randomUUID } from "node:crypto"
import { Option } from "effect"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { createWalletClient, type Hex, http, type PrivateKeyAccount } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { anvilChain } from "../../infra/chain/Anvil"
import { launchChromium, seriousViolationsInBothSchemes, waitForText } from "../support/Browser"
import { type ChainService, startChainService } from "../support/ChainService"
import { type LocalChain, startLocalChain } from "../support/LocalChain"
import { startSmtpInbox } from "../support/SmtpInbox"

/**
 * Issue 52 items 1, 3 and 4: the payer's wallet path in headless Chromium against the whole service and the local
 * chain. The injected EIP-6963 wallet signs with keys held here and forwards reads to the local node, as a real
 * wallet forwards them to its own; a test can move it to another account or chain, and every method it is asked
 * is recorded in order, so what happened before the transfer left is checked, not assumed.
 */
const RIGHT_CHAIN = "0x279f"
/** The methods a wallet asks its user about: each one is a prompt. */
const PROMPTS = new Set([
  "eth_requestAccounts",
  "wallet_switchEthereumChain",
  "eth_signTypedData_v4",
  "eth_sendTransaction"
])

let local: LocalChain
let running: ChainService
let browser: Browser
let mining: ReturnType<typeof setInterval> | undefined
let smtp: Awaited<ReturnType<typeof startSmtpInbox>>

beforeAll(async () => {
  local = await startLocalChain()
  smtp = await startSmtpInbox()
  running = await startChainService(local, {
    mineWhileWaiting: true,
    config: { smtpUrl: Option.some(smtp.url) }
  })
  mining = setInterval(() => void local.chain.mine({ blocks: 1 }).catch(() => undefined), 200)
  browser = await launchChromium()
}, 60_000)
afterAll(async () => {
  if (mining !== undefined) clearInterval(mining)
  await browser?.close()
  await running?.stop()
  await smtp?.close()
  await local?.node.stop()
})

/** A fresh payer: its own key, `native` wei for fees and `usdc` base units. */
const payer = async (usdc: bigint, native = 10n ** 18n) => {
  const account = privateKeyToAccount(generatePrivateKey())
  await local.chain.setBalance({ address: account.address, value: native })
  if (usdc > 0n) await local.mint(account.address, usdc)
  return account
}

/** One JSON-RPC call to the local node, its error passed on with its code (as a wallet passes its node's). */
const rpc = async (method: string, params: unknown): Promise<unknown> => {
  const res = await fetch(local.node.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: params ?? [] })
  })
  const body = (await res.json()) as { result?: unknown; error?: { code: number; message: string } }
  if (body.error !== undefined) throw Object.assign(new Error(body.error.message), { code: body.error.code })
  return body.result
}

/** A page with a wallet on `first` (and on `chainId`): answers the page's EIP-1193 requests, records them all. */
const openWallet = async (first: PrivateKeyAccount, chainId = RIGHT_CHAIN) => {
  /** `replace`/`drop`: the next transfer is never broadcast; its hash is known (with a nonce) or not at all. */
  const wallet: {
    account: PrivateKeyAccount
    chainId: string
    fake: "replace" | "drop" | undefined
    /** The wallet's refusal of the next transfer, as its node gave it. */
    refuse: { code: number; message: string } | undefined
  } = { account: first, chainId, fake: undefined, refuse: undefined }
  const pending = new Map<string, bigint>()
  const asked: Array<string> = []
  const sends: Array<{ hash: Hex; chainId: string; from: string }> = []
  const context: BrowserContext = await browser.newContext({ viewport: { width: 360, height: 780 } })
  const page: Page = await context.newPage()
  const foreign: Array<string> = []
  page.on("request", (r) => {
    if (!r.url().startsWith(running.service.baseUrl)) foreign.push(r.url())
  })
  const errors: Array<string> = []
  page.on("pageerror", (e) => errors.push(e.message))
  let clicks = 0
  const click = async (selector: string) => {
    clicks++
    await page.click(selector)
  }
  const answer = async (args: { method: string; params?: Array<unknown> }): Promise<unknown> => {
    asked.push(args.method)
    const { account } = wallet
    switch (args.method) {
      case "eth_requestAccounts":
      case "eth_accounts":
        return [account.address]
      case "eth_chainId":
        return wallet.chainId
      case "wallet_switchEthereumChain":
        wallet.chainId = (args.params as Array<{ chainId: string }>)[0]?.chainId ?? wallet.chainId
        return null
      case "eth_signTypedData_v4": {
        const typed = JSON.parse(args.params?.[1] as string)
        const { EIP712Domain: _, ...types } = typed.types
        return account.signTypedData({
          domain: typed.domain,
          types,
          primaryType: typed.primaryType,
          message: typed.message
        })
      }
      case "eth_sendTransaction": {
        const tx = args.params?.[0] as { to: Hex; data: Hex; from: string }
        if (wallet.refuse !== undefined) {
          const { code, message } = wallet.refuse
          wallet.refuse = undefined
          throw Object.assign(new Error(message), { code })
        }
        if (wallet.fake !== undefined) {
          const hash = `0x${randomBytes(32).toString("hex")}` as Hex
          if (wallet.fake === "replace")
            pending.set(
              hash,
              await local.chain
                .getTransactionCount({ address: account.address, blockTag: "pending" })
                .then(BigInt)
            )
          wallet.fake = undefined
          sends.push({ hash, chainId: wallet.chainId, from: tx.from })
          return hash
        }
        const client = createWalletClient({
          account,
          chain: anvilChain({ chainId: 10143, rpcUrl: local.node.rpcUrl }),
          transport: http(local.node.rpcUrl)
        })
        // The gas is given, as a wallet does once it has estimated: a transfer that reverts is still mined.
        const hash = await client.sendTransaction({ to: tx.to, data: tx.data, gas: 100_000n })
        sends.push({ hash, chainId: wallet.chainId, from: tx.from })
        return hash
      }
      case "eth_getTransactionByHash": {
        // A transfer waiting in the wallet's own pool: known, with its nonce, until that nonce is used.
        const nonce = pending.get(String(args.params?.[0]))
        if (nonce !== undefined) return { hash: args.params?.[0], nonce: `0x${nonce.toString(16)}` }
        return rpc(args.method, args.params)
      }
      default:
        return rpc(args.method, args.params)
    }
  }
  await page.exposeBinding("__wallet", (_source, args: { method: string; params?: Array<unknown> }) =>
    answer(args).then(
      (result) => ({ result }),
      (e: { code?: number; message?: string }) => ({
        error: { code: e.code ?? -32603, message: e.message ?? "" }
      })
    )
  )
  await page.addInitScript(`
    const provider = {
      request: async (a) => {
        const r = await window.__wallet(a)
        if (r.error) throw Object.assign(new Error(r.error.message), { code: r.error.code })
        return r.result
      }
    }
    window.addEventListener("eip6963:requestProvider", () =>
      window.dispatchEvent(new CustomEvent("eip6963:announceProvider", {
        detail: { info: { uuid: "test", name: "Test wallet", icon: "data:,", rdns: "test.wallet" }, provider }
      }))
    )`)
  const prompts = () => asked.filter((m) => PROMPTS.has(m)).length
  return {
    page,
    context,
    wallet,
    pending,
    asked,
    sends,
    foreign,
    errors,
    click,
    clicks: () => clicks,
    prompts
  }
}

const createRequest = async (amount: string) => {
  const refs = await running.api.setup()
  const made = await running.api.call<{ id: string; checkout_url: string }>(
    "POST",
    "/v1/deposit-requests",
    { amount, issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId, heading: "Order 77" },
    { "idempotency-key": randomUUID() }
  )
  expect(made.status).toBe(201)
  return made.body
}

/** No serious or critical accessibility violations, in the light and in the dark colour scheme. */
const axe = async (page: Page, step: string) =>
  expect(await seriousViolationsInBothSchemes(page, step)).toEqual([])

/** The wallet step done: the wallet connected and attested, the address on the page. */
const connect = async (w: Awaited<ReturnType<typeof openWallet>>, url: string) => {
  await w.page.goto(url)
  await w.page.waitForSelector("#connect:not([hidden])")
  await w.click("#connect-wallet")
  await w.page.waitForSelector("#pay:not([hidden])")
  await waitForText(w.page, "#status", "equals", "Your payment address is ready.")
}

describe("the payer's wallet path", () => {
  it("pays in 2 clicks and 3 wallet prompts, following the transfer to its receipt before saying it is confirmed", async () => {
    const request = await createRequest("2.500000")
    const account = await payer(2_500_000n)
    const w = await openWallet(account)
    await connect(w, request.checkout_url)
    expect(await w.page.textContent("#wallet-line")).toBe(`Paying from your wallet ${account.address}`)
    expect(await w.page.textContent("#wallet-funds")).toBe("")
    await w.click("#pay-from-wallet")
    await waitForText(w.page, "#status", "startsWith", "The network confirmed your transfer")
    // Read before it left, and followed after: balances, then the receipt of the hash the wallet returned.
    const sent = w.asked.indexOf("eth_sendTransaction")
    expect(w.asked.slice(0, sent)).toEqual(
      expect.arrayContaining(["eth_call", "eth_getBalance", "eth_chainId"])
    )
    expect(w.asked.slice(sent)).toContain("eth_getTransactionReceipt")
    await w.page.waitForSelector('body[data-status="settled"]', { timeout: 30_000 })
    expect(await w.page.textContent("#receipt-tx")).toBe(w.sends[0]?.hash)
    expect(w.clicks()).toBe(2)
    expect(w.prompts()).toBe(3)
    expect(w.foreign).toEqual([])
    expect(w.errors).toEqual([])
    await w.context.close()
  }, 90_000)

  it("shows a reverted transfer as failed, never as sent, and pays on retry", async () => {
    const request = await createRequest("2.000000")
    const account = await payer(2_000_000n)
    const w = await openWallet(account)
    await connect(w, request.checkout_url)
    // The real FiatToken refuses a blacklisted sender: the transfer is mined and reverts.
    await local.controls.blacklist(account.address)
    await w.click("#pay-from-wallet")
    await waitForText(w.page, "#status", "startsWith", "The transfer failed on the network")
    expect(await w.page.getAttribute("#status", "data-tone")).toBe("error")
    expect(await w.page.textContent("#status")).toContain("Press Pay from this wallet to try again.")
    expect(w.sends).toHaveLength(1)
    const receipt = await local.chain.getTransactionReceipt({ hash: w.sends[0]!.hash })
    expect(receipt.status).toBe("reverted")
    expect(await w.page.textContent("main")).not.toMatch(/Payment sent|confirmed your transfer/)
    // The way to try again is the same button, back at once.
    await w.page.waitForSelector("#pay-from-wallet:enabled")
    expect(await w.page.textContent("#pay-reason")).toBe("")
    expect(await w.page.textContent("#owed")).toBe("2.00 USDC")
    await axe(w.page, "reverted")
    await local.controls.unBlacklist(account.address)
    await w.click("#pay-from-wallet")
    await w.page.waitForSelector('body[data-status="settled"]', { timeout: 30_000 })
    expect(w.sends).toHaveLength(2)
    expect(await w.page.textContent("#receipt-tx")).toBe(w.sends[1]?.hash)
    expect(w.errors).toEqual([])
    await w.context.close()
  }, 90_000)

  it("switches a wallet moved to another chain before it sends, never after", async () => {
    const request = await createRequest("1.000000")
    const account = await payer(1_000_000n)
    const w = await openWallet(account)
    await connect(w, request.checkout_url)
    // The payer moves the wallet to Ethereum mainnet between the two clicks.
    w.wallet.chainId = "0x1"
    const before = w.asked.length
    await w.click("#pay-from-wallet")
    await w.page.waitForSelector('body[data-status="settled"]', { timeout: 30_000 })
    const after = w.asked.slice(before)
    expect(after.indexOf("wallet_switchEthereumChain")).toBeGreaterThanOrEqual(0)
    expect(after.indexOf("wallet_switchEthereumChain")).toBeLessThan(after.indexOf("eth_sendTransaction"))
    expect(w.sends.map((s) => s.chainId)).toEqual([RIGHT_CHAIN])
    expect(w.errors).toEqual([])
    await w.context.close()
  }, 90_000)

  it("refuses to send from another account and names the attested one", async () => {
    const request = await createRequest("1.000000")
    const attested = await payer(1_000_000n)
    const other = await payer(1_000_000n)
    const w = await openWallet(attested)
    await connect(w, request.checkout_url)
    w.wallet.account = other
    await w.click("#pay-from-wallet")
    await waitForText(w.page, "#status", "error")
    expect(await w.page.textContent("#status")).toBe(
      `Your wallet is on account ${other.address}, but this payment was set up for ${attested.address}. Switch to ${attested.address} in your wallet, then try again.`
    )
    expect(w.asked).not.toContain("eth_sendTransaction")
    await axe(w.page, "other account")
    // Back on the attested account, the same button pays.
    w.wallet.account = attested
    await w.click("#pay-from-wallet")
    await w.page.waitForSelector('body[data-status="settled"]', { timeout: 30_000 })
    expect(w.sends.map((s) => s.from.toLowerCase())).toEqual([attested.address.toLowerCase()])
    await w.context.close()
  }, 90_000)

  it("reconnects the attested wallet after a reload without a prompt, and offers a button when it cannot", async () => {
    const request = await createRequest("1.000000")
    const attested = await payer(1_000_000n)
    const other = await payer(0n)
    const w = await openWallet(attested)
    await connect(w, request.checkout_url)
    let before = w.asked.length
    await w.page.reload()
    await w.page.waitForSelector("#pay-from-wallet:enabled")
    expect(w.asked.slice(before)).toContain("eth_accounts")
    expect(w.asked.slice(before).filter((m) => PROMPTS.has(m))).toEqual([])
    expect(await w.page.textContent("#wallet-line")).toBe(`Paying from your wallet ${attested.address}`)
    expect(await w.page.isVisible("#reconnect-wallet")).toBe(false)
    // The wallet on another account after a reload: nothing is connected silently, the expected account is named.
    w.wallet.account = other
    before = w.asked.length
    await w.page.reload()
    await waitForText(w.page, "#status", "error")
    expect(await w.page.textContent("#status")).toContain(`set up for ${attested.address}`)
    expect(await w.page.isDisabled("#pay-from-wallet")).toBe(true)
    expect(await w.page.textContent("#pay-reason")).toBe(
      `Your wallet ${attested.address} is not connected in this browser. Reconnect it, or send 1.00 USDC to the address above from it.`
    )
    expect(await w.page.isVisible("#reconnect-wallet")).toBe(true)
    expect(w.asked.slice(before).filter((m) => PROMPTS.has(m))).toEqual([])
    await axe(w.page, "reconnect")
    w.wallet.account = attested
    await w.click("#reconnect-wallet")
    await w.page.waitForSelector("#pay-from-wallet:enabled")
    expect(await w.page.isVisible("#reconnect-wallet")).toBe(false)
    await w.context.close()
  }, 90_000)

  it("says in money what is missing before the payer confirms: USDC to pay, then the coin for the fee", async () => {
    const request = await createRequest("4.000000")
    const short = await payer(1_000_000n)
    const w = await openWallet(short)
    await connect(w, request.checkout_url)
    const usdc =
      "This wallet holds 1.00 USDC: 3.00 USDC more is needed to pay 4.00 USDC. Add USDC to it, or pay to the address above from another wallet."
    await waitForText(w.page, "#wallet-funds", "equals", usdc)
    await w.click("#pay-from-wallet")
    await waitForText(w.page, "#status", "equals", usdc)
    expect(await w.page.getAttribute("#status", "data-tone")).toBe("error")
    expect(w.asked).not.toContain("eth_sendTransaction")
    await axe(w.page, "short of USDC")
    await w.context.close()

    // Enough USDC, no coin for the fee: the fee is said in MON, rounded up, never in wei.
    const noGas = await payer(4_000_000n, 0n)
    const g = await openWallet(noGas)
    await connect(g, request.checkout_url.replace(request.id, (await createRequest("4.000000")).id))
    await waitForText(g.page, "#wallet-funds", "startsWith", "This wallet needs about")
    const fee = (await g.page.textContent("#wallet-funds")) ?? ""
    expect(fee).toMatch(
      /^This wallet needs about \d+\.\d+ MON more for the network fee\. Add a little to it, then try again\.$/
    )
    expect(fee).not.toMatch(/wei|0\.00 MON/)
    await g.click("#pay-from-wallet")
    await waitForText(g.page, "#status", "equals", fee)
    expect(g.asked).not.toContain("eth_sendTransaction")
    await axe(g.page, "short of gas")
    expect(g.errors).toEqual([])
    await g.context.close()
  }, 90_000)

  it("says a replaced transfer and a dropped one in plain words, and gives pay back each time", async () => {
    const request = await createRequest("1.000000")
    const account = await payer(1_000_000n)
    const w = await openWallet(account)
    await connect(w, request.checkout_url)
    // Replaced: the wallet's pool holds the transfer, then another transaction of the account takes its nonce.
    w.wallet.fake = "replace"
    await w.click("#pay-from-wallet")
    await waitForText(w.page, "#status", "startsWith", "Your wallet sent the transfer")
    expect(await w.page.isDisabled("#pay-from-wallet")).toBe(true)
    const hash = w.sends[0]!.hash
    while (w.asked.filter((m) => m === "eth_getTransactionByHash").length === 0)
      await new Promise((r) => setTimeout(r, 100))
    const nonce = w.pending.get(hash)!
    w.pending.delete(hash)
    const client = createWalletClient({
      account,
      chain: anvilChain({ chainId: 10143, rpcUrl: local.node.rpcUrl }),
      transport: http(local.node.rpcUrl)
    })
    await client.sendTransaction({ to: account.address, value: 0n, nonce: Number(nonce) })
    await waitForText(w.page, "#status", "startsWith", "Your wallet replaced this transfer with another one.")
    expect(await w.page.getAttribute("#status", "data-tone")).toBe("error")
    await w.page.waitForSelector("#pay-from-wallet:enabled")
    // Dropped: a hash the network never learns of, given up after the page's bound (60 s).
    w.wallet.fake = "drop"
    await w.click("#pay-from-wallet")
    await waitForText(w.page, "#status", "startsWith", "Your wallet sent the transfer")
    await waitForText(w.page, "#status", "startsWith", "The network dropped this transfer", 75_000)
    await w.page.waitForSelector("#pay-from-wallet:enabled")
    expect(await w.page.textContent("#owed")).toBe("1.00 USDC")
    await axe(w.page, "dropped")
    expect(w.errors).toEqual([])
    await w.context.close()
  }, 150_000)

  it("says a wallet's refusals in sentences, never in its RPC words", async () => {
    const request = await createRequest("1.000000")
    const account = await payer(1_000_000n)
    const w = await openWallet(account)
    await connect(w, request.checkout_url)
    const refusals = [
      {
        code: -32000,
        message: "insufficient funds for gas * price + value: balance 0, tx cost 210000000000000",
        said: "Your wallet says it does not hold enough to pay this and the network fee. Add funds, then try again."
      },
      {
        code: 4001,
        message: "User rejected the request.",
        said: "You declined in your wallet. Try again when you are ready."
      },
      {
        code: -32002,
        message: "Request of type 'eth_sendTransaction' already pending",
        said: "Your wallet already has a request waiting: open your wallet to answer it."
      },
      {
        code: -32603,
        message: "execution reverted: 0x08c379a0",
        said: "Your wallet could not do that. Try again."
      }
    ]
    for (const refusal of refusals) {
      w.wallet.refuse = { code: refusal.code, message: refusal.message }
      await w.click("#pay-from-wallet")
      await waitForText(w.page, "#status", "equals", refusal.said)
      expect(await w.page.getAttribute("#status", "data-tone")).toBe("error")
      await w.page.waitForSelector("#pay-from-wallet:enabled")
    }
    expect(w.sends).toEqual([])
    expect(await w.page.textContent("main")).not.toMatch(/insufficient funds for|0x08c379a0|already pending/)
    await w.context.close()
  }, 90_000)
})
