import { randomUUID } from "node:crypto"
import { ConfigProvider, Effect, Exit, Option } from "effect"
import type { Browser, Page } from "playwright-core"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { loadConfig } from "../../src/app/Config"
import { checkoutNetworkOf } from "../../src/http/middleware/ApiSettings"
import { launchChromium, seriousViolationsInBothSchemes, waitForText } from "../support/Browser"
import { type ChainService, startChainService } from "../support/ChainService"
import { openWalletPage, prompts, RIGHT_CHAIN, type TestWallet, testWallet } from "../support/InjectedWallet"
import { type LocalChain, startLocalChain } from "../support/LocalChain"

/**
 * Issue 52 items 2 and 5 (decision 0092): a wallet that does not know the request's chain is asked to add it with
 * the network the service is configured with, and a browser with several EIP-6963 wallets lets the payer choose
 * one, remembers it and uses only that one. Headless Chromium against the whole service and the local chain; each
 * injected wallet records every method it is asked, in order.
 */
const PUBLIC_RPC = "https://rpc.sandbox-network.example/"
const EXPLORER = "https://explorer.sandbox-network.example"

let local: LocalChain
let running: ChainService
let browser: Browser
let mining: ReturnType<typeof setInterval> | undefined

beforeAll(async () => {
  local = await startLocalChain()
  running = await startChainService(local, {
    mineWhileWaiting: true,
    config: { chainPublicRpcUrl: Option.some(PUBLIC_RPC), chainExplorerUrl: Option.some(EXPLORER) }
  })
  mining = setInterval(() => void local.chain.mine({ blocks: 1 }).catch(() => undefined), 200)
  browser = await launchChromium()
}, 60_000)
afterAll(async () => {
  if (mining !== undefined) clearInterval(mining)
  await browser?.close()
  await running?.stop()
  await local?.node.stop()
})

const payer = async (usdc: bigint) => {
  const account = privateKeyToAccount(generatePrivateKey())
  await local.chain.setBalance({ address: account.address, value: 10n ** 18n })
  if (usdc > 0n) await local.mint(account.address, usdc)
  return account
}

/** A page whose browser has these wallets, each announced through EIP-6963 with its name, icon and rdns. */
const openPage = (wallets: Array<TestWallet>) =>
  openWalletPage(browser, local.node, running.service.baseUrl, wallets)

const createRequest = async (amount: string) => {
  const refs = await running.api.setup()
  const made = await running.api.call<{ id: string; checkout_url: string }>(
    "POST",
    "/v1/deposit-requests",
    { amount, issuer_id: refs.issuerId, payout_address_id: refs.payoutAddressId, heading: "Order 92" },
    { "idempotency-key": randomUUID() }
  )
  expect(made.status).toBe(201)
  return made.body
}

/** No serious or critical accessibility violations, in the light and in the dark colour scheme. */
const axe = async (page: Page, step: string) =>
  expect(await seriousViolationsInBothSchemes(page, step)).toEqual([])

describe("the payer's networks and wallets", () => {
  it("asks a wallet that does not know the chain to add it with the configured network, then pays", async () => {
    const request = await createRequest("1.500000")
    const account = await payer(1_500_000n)
    // On Ethereum mainnet, knowing nothing else: the switch to 10143 answers 4902.
    const wallet = testWallet("com.example.alpha", "Alpha wallet", account, { on: "0x1", known: ["0x1"] })
    const p = await openPage([wallet])
    await p.page.goto(request.checkout_url)
    await p.page.waitForSelector("#connect:not([hidden])")
    // One wallet: no choice to make, nothing more to click.
    expect(await p.page.isVisible("#wallets")).toBe(false)
    await p.click("#connect-wallet")
    await waitForText(p.page, "#status", "equals", "Your payment address is ready.")
    expect(wallet.added).toEqual([
      {
        chainId: RIGHT_CHAIN,
        chainName: "Monad Testnet",
        nativeCurrency: { name: "Monad", symbol: "MON", decimals: 18 },
        rpcUrls: [PUBLIC_RPC],
        blockExplorerUrls: [EXPLORER]
      }
    ])
    // Refused once, added, and only then signed: the statement names the request's chain.
    expect(prompts(wallet)).toEqual([
      "eth_requestAccounts",
      "wallet_switchEthereumChain",
      "wallet_addEthereumChain",
      "eth_signTypedData_v4"
    ])
    await axe(p.page, "added network")
    await p.click("#pay-from-wallet")
    await p.page.waitForSelector('body[data-status="settled"]', { timeout: 30_000 })
    expect(await p.page.textContent("#receipt-tx")).toBe(wallet.sends[0])
    expect(wallet.chainId).toBe(RIGHT_CHAIN)
    expect(p.clicks()).toBe(2)
    // The page itself never called the RPC or the explorer: the wallet does (CSP connect-src 'self').
    expect(p.foreign).toEqual([])
    expect(p.errors).toEqual([])
    await p.context.close()
  }, 90_000)

  it("shows every wallet with its name and icon, pays with the one chosen, and preselects it after a reload", async () => {
    const request = await createRequest("1.000000")
    const alpha = testWallet("com.example.alpha", "Alpha wallet", await payer(0n))
    const beta = testWallet("com.example.beta", "Beta wallet", await payer(1_000_000n))
    const p = await openPage([alpha, beta])
    await p.page.goto(request.checkout_url)
    await p.page.waitForSelector("#wallets:not([hidden])")
    const shown = await p.page.$$eval("#wallet-list label", (labels) =>
      labels.map((l) => ({
        name: l.textContent?.trim(),
        icon: l.querySelector("img")?.getAttribute("src"),
        checked: (l.querySelector("input") as unknown as { checked: boolean }).checked
      }))
    )
    expect(shown).toEqual([
      { name: "Alpha wallet", icon: alpha.icon, checked: true },
      { name: "Beta wallet", icon: beta.icon, checked: false }
    ])
    // The icons are images the browser drew (CSP img-src allows data:), not markup.
    expect(
      await p.page.$$eval("#wallet-list img", (imgs) =>
        imgs.map((i) => (i as unknown as { naturalWidth: number }).naturalWidth)
      )
    ).toEqual([32, 32])
    expect(await p.page.textContent("#wallets legend")).toBe("Wallet to pay from")
    await axe(p.page, "two wallets")
    await p.click("#wallet-list label:nth-child(2) input")
    await p.click("#connect-wallet")
    await waitForText(p.page, "#status", "equals", "Your payment address is ready.")
    expect(await p.page.textContent("#wallet-line")).toBe(`Paying from your wallet ${beta.account.address}`)
    await p.click("#pay-from-wallet")
    await p.page.waitForSelector('body[data-status="settled"]', { timeout: 30_000 })
    expect(await p.page.textContent("#receipt-tx")).toBe(beta.sends[0])
    expect(prompts(beta)).toEqual(["eth_requestAccounts", "eth_signTypedData_v4", "eth_sendTransaction"])
    expect(alpha.asked).toEqual([])

    // Another request in the same browser: the chosen wallet is preselected, and it is the one asked.
    const next = await createRequest("1.000000")
    await p.page.goto(next.checkout_url)
    await p.page.waitForSelector("#wallets:not([hidden])")
    expect(
      await p.page.$$eval("#wallet-list input", (inputs) =>
        inputs.map((i) => (i as unknown as { checked: boolean }).checked)
      )
    ).toEqual([false, true])
    await p.page.reload()
    await p.page.waitForSelector("#connect:not([hidden])")
    await p.page.waitForSelector("#wallet-list label:nth-child(2) input:checked")
    await p.click("#connect-wallet")
    await waitForText(p.page, "#status", "equals", "Your payment address is ready.")
    expect(await p.page.textContent("#wallet-line")).toBe(`Paying from your wallet ${beta.account.address}`)
    expect(alpha.asked).toEqual([])
    await axe(p.page, "preselected")
    expect(p.errors).toEqual([])
    await p.context.close()
  }, 120_000)

  it("hands the page a public RPC only: as set, the embedded node's own, or the network's public one, never a keyed one", async () => {
    const none = Option.none<string>()
    const base = { chainPublicRpcUrl: none, chainExplorerUrl: none, chainRpcUrl: none, chainRpcUrls: none }
    const production = checkoutNetworkOf({ ...base, serviceEnv: "production" })
    expect(production).toMatchObject({ chainId: 143, name: "Monad", coin: { symbol: "MON", decimals: 18 } })
    expect(production.rpcUrl).toEqual(Option.some("https://rpc.monad.xyz"))
    expect(production.explorerUrl).toEqual(Option.some("https://monadvision.com"))
    // The embedded chain (a bare loopback node): its own URL, no explorer.
    const embedded = checkoutNetworkOf({
      ...base,
      serviceEnv: "sandbox",
      chainRpcUrl: Option.some(local.node.rpcUrl)
    })
    expect(embedded).toMatchObject({ chainId: 10143, name: "Monad Testnet", coin: { symbol: "MON" } })
    expect(embedded.rpcUrl).toEqual(Option.some(local.node.rpcUrl))
    expect(embedded.explorerUrl).toEqual(Option.none())
    // A provider's endpoint (a key in its path) is the service's, never the page's.
    const keyed = checkoutNetworkOf({
      ...base,
      serviceEnv: "sandbox",
      chainRpcUrl: Option.some("https://monad-testnet.provider.example/v2/s3cr3tKey")
    })
    expect(keyed.rpcUrl).toEqual(Option.some("https://testnet-rpc.monad.xyz"))
    const productionOnLoopback = checkoutNetworkOf({
      ...base,
      serviceEnv: "production",
      chainRpcUrl: Option.some("http://127.0.0.1:8545")
    })
    expect(productionOnLoopback.rpcUrl).toEqual(Option.some("https://rpc.monad.xyz"))
    // Set: as set.
    expect(
      checkoutNetworkOf({ ...base, serviceEnv: "production", chainPublicRpcUrl: Option.some(PUBLIC_RPC) })
        .rpcUrl
    ).toEqual(Option.some(PUBLIC_RPC))
    // A URL with credentials stops the start-up, naming the setting.
    const refused = await Effect.runPromiseExit(
      loadConfig(ConfigProvider.fromMap(new Map([["CHAIN_PUBLIC_RPC_URL", "https://user:pass@rpc.example"]])))
    )
    expect(Exit.isFailure(refused)).toBe(true)
    expect(String(Exit.isFailure(refused) ? refused.cause : "")).toContain("CHAIN_PUBLIC_RPC_URL")
    // The service this file runs: the configured URLs are what its page carries.
    const page = await (await fetch((await createRequest("1.000000")).checkout_url)).text()
    expect(page).toContain(`data-chain-rpc="${PUBLIC_RPC}"`)
    expect(page).toContain(`data-chain-explorer="${EXPLORER}"`)
  })
})
