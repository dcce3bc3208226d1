import { randomUUID } from "node:crypto"
import type { Browser, BrowserContext, BrowserContextOptions, Page } from "playwright-core"
import { createWalletClient, type Hex, http, type PrivateKeyAccount } from "viem"
import { anvilChain } from "../../infra/chain/Anvil"

/**
 * Wallets injected into a Chromium page the EIP-6963 way, for the checkout's tests: keys held in the test process,
 * reads forwarded to the local node (as a real wallet forwards them to its own), every method asked recorded in
 * order. Errors cross into the page as data, so the page sees EIP-1193 error codes as a real wallet gives them.
 */
export const RIGHT_CHAIN = "0x279f"

/** The methods a wallet asks its user about: each one is a prompt. */
export const PROMPTS = new Set([
  "eth_requestAccounts",
  "wallet_switchEthereumChain",
  "wallet_addEthereumChain",
  "eth_signTypedData_v4",
  "eth_sendTransaction"
])

/** A small square icon as a data: URI, the way EIP-6963 wallets announce theirs. */
export const walletIcon = (fill: string) =>
  `data:image/svg+xml;base64,${Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32"><rect width="32" height="32" fill="${fill}"/></svg>`
  ).toString("base64")}`

/** One injected wallet: its announcement, its account, the chains it knows and where it is now. */
export interface TestWallet {
  readonly rdns: string
  readonly name: string
  readonly icon: string
  readonly account: PrivateKeyAccount
  chainId: string
  readonly known: Set<string>
  readonly asked: Array<string>
  readonly added: Array<unknown>
  readonly sends: Array<Hex>
  /** The wallet's refusal of the next transfer (an EIP-1193 error code and message), used once. */
  refuse: { code: number; message: string } | undefined
}

export const testWallet = (
  rdns: string,
  name: string,
  account: PrivateKeyAccount,
  chains: { on: string; known: Array<string> } = { on: RIGHT_CHAIN, known: [RIGHT_CHAIN] }
): TestWallet => ({
  rdns,
  name,
  icon: walletIcon(rdns.endsWith("alpha") ? "#d33" : "#36c"),
  account,
  chainId: chains.on,
  known: new Set(chains.known),
  asked: [],
  added: [],
  sends: [],
  refuse: undefined
})

/** The wallets' methods asked that prompt their user, in order. */
export const prompts = (wallet: TestWallet) => wallet.asked.filter((m) => PROMPTS.has(m))

/** One JSON-RPC call to the node, its error passed on with its code (as a wallet passes its node's). */
const rpc = async (rpcUrl: string, method: string, params: unknown): Promise<unknown> => {
  const res = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: params ?? [] })
  })
  const body = (await res.json()) as { result?: unknown; error?: { code: number; message: string } }
  if (body.error !== undefined) throw Object.assign(new Error(body.error.message), { code: body.error.code })
  return body.result
}

/** The wallet's answer to one EIP-1193 request: keys held here, reads forwarded to the local node. */
const answer = async (
  rpcUrl: string,
  wallet: TestWallet,
  args: { method: string; params?: Array<unknown> }
): Promise<unknown> => {
  wallet.asked.push(args.method)
  const { account } = wallet
  switch (args.method) {
    case "eth_requestAccounts":
    case "eth_accounts":
      return [account.address]
    case "eth_chainId":
      return wallet.chainId
    case "wallet_switchEthereumChain": {
      const chainId = (args.params as Array<{ chainId: string }>)[0]?.chainId ?? ""
      if (!wallet.known.has(chainId))
        throw Object.assign(new Error(`Unrecognized chain ID "${chainId}".`), { code: 4902 })
      wallet.chainId = chainId
      return null
    }
    case "wallet_addEthereumChain": {
      const added = (args.params as Array<{ chainId: string }>)[0]
      wallet.added.push(added)
      // As MetaMask does: the added chain becomes the current one.
      if (added !== undefined) {
        wallet.known.add(added.chainId)
        wallet.chainId = added.chainId
      }
      return null
    }
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
      if (wallet.refuse !== undefined) {
        const { code, message } = wallet.refuse
        wallet.refuse = undefined
        throw Object.assign(new Error(message), { code })
      }
      const tx = args.params?.[0] as { to: Hex; data: Hex }
      const client = createWalletClient({
        account,
        chain: anvilChain({ chainId: 10143, rpcUrl }),
        transport: http(rpcUrl)
      })
      const hash = await client.sendTransaction({ to: tx.to, data: tx.data, gas: 100_000n })
      wallet.sends.push(hash)
      return hash
    }
    default:
      return rpc(rpcUrl, args.method, args.params)
  }
}

/**
 * A page whose browser has these wallets (none: a browser without any), each announced through EIP-6963 with its
 * name, icon and rdns; requests to any origin but `origin` (and data: URIs) are recorded, and so are page errors
 * and page clicks. The context is a 360 × 780 phone-sized window with a mouse unless `context` says otherwise.
 */
export const openWalletPage = async (
  browser: Browser,
  node: { readonly rpcUrl: string },
  origin: string,
  wallets: Array<TestWallet>,
  context: BrowserContextOptions = {}
) => {
  const ctx: BrowserContext = await browser.newContext({ viewport: { width: 360, height: 780 }, ...context })
  const page: Page = await ctx.newPage()
  const errors: Array<string> = []
  page.on("pageerror", (e) => errors.push(e.message))
  const foreign: Array<string> = []
  page.on("request", (r) => {
    if (!r.url().startsWith(origin) && !r.url().startsWith("data:")) foreign.push(r.url())
  })
  if (wallets.length > 0) {
    await page.exposeBinding(
      "__wallet",
      (_source, rdns: string, args: { method: string; params?: Array<unknown> }) => {
        const wallet = wallets.find((w) => w.rdns === rdns)!
        return answer(node.rpcUrl, wallet, args).then(
          (result) => ({ result }),
          (e: { code?: number; message?: string }) => ({
            error: { code: e.code ?? -32603, message: e.message ?? "" }
          })
        )
      }
    )
    const infos = wallets.map((w) => ({ uuid: randomUUID(), name: w.name, icon: w.icon, rdns: w.rdns }))
    await page.addInitScript(`
    const infos = ${JSON.stringify(infos)}
    const providers = infos.map((info) => ({
      request: async (a) => {
        const r = await window.__wallet(info.rdns, a)
        if (r.error) throw Object.assign(new Error(r.error.message), { code: r.error.code })
        return r.result
      }
    }))
    window.addEventListener("eip6963:requestProvider", () =>
      infos.forEach((info, i) =>
        window.dispatchEvent(new CustomEvent("eip6963:announceProvider", {
          detail: Object.freeze({ info, provider: providers[i] })
        }))
      )
    )`)
  }
  let clicks = 0
  const click = async (selector: string) => {
    clicks++
    await page.click(selector)
  }
  return { page, context: ctx, errors, foreign, click, clicks: () => clicks }
}
