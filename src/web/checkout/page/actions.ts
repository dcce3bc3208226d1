import { encodeFunctionData, erc20Abi } from "viem"
import { networkName, owed } from "./amounts"
import {
  currentAccount,
  followTransfer,
  microCoin,
  onChain,
  type Outcome,
  type Shortfall,
  sameAccount,
  shortfall
} from "./chain"
import { type Msg, money, Said, t, units } from "./i18n"
import { $, call, id, network, onPhone, sandbox, say, sayAlert, sayError, state } from "./page"
import { checkoutLink, paymentSent, refreshPayButtons, release, render } from "./render"
import { discoverWallet, type Eip1193, rememberWallet } from "./wallet"

/**
 * A wallet's refusal as a sentence: the EIP-1193 codes, and the node's "insufficient funds" a wallet passes on;
 * anything else a wallet throws (it has a code) is said as a plain failure, never in its raw RPC words.
 */
const sentenceOf = (e: unknown): Msg | undefined => {
  const code = (e as { code?: unknown } | null)?.code
  const message = String((e as { message?: unknown } | null)?.message ?? "")
  if (e instanceof Said) return e.msg
  if (code === 4001) return { id: "wallet.declined" }
  if (code === 4902) return { id: "wallet.unknownChain", params: { chain: String(state.current?.chain_id) } }
  if (code === 4100 || code === 4200) return { id: "wallet.refused" }
  if (code === 4900 || code === 4901) return { id: "wallet.disconnected" }
  if (code === -32002) return { id: "wallet.pendingRequest" }
  if (/insufficient funds/i.test(message)) return { id: "wallet.insufficientFunds" }
  return typeof code === "number" || !(e instanceof Error) ? { id: "wallet.failed" } : undefined
}

export const act = (button: HTMLButtonElement, run: () => Promise<void>) =>
  button.addEventListener("click", () => {
    button.disabled = true
    button.dataset.busy = "true"
    refreshPayButtons()
    run()
      .catch((e: unknown) => {
        const sentence = sentenceOf(e)
        sayAlert(sentence ?? (e instanceof Error ? e.message : String(e)))
      })
      .finally(() => {
        button.disabled = false
        delete button.dataset.busy
        // A pay button stays disabled, with its reason, while what it sent is on its way.
        refreshPayButtons()
      })
  })

/** The attestation a wallet signs: the request's typed data, with the wallet and an expiry ten minutes ahead. */
export const statementFor = (account: string) => {
  const a = state.current!.attestation!
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

/** The payer's own steps: the mailbox code, the wallet, paying from it, copying the address. */
export const wirePayerActions = () => {
  act($("#send-code"), async () => {
    const sent = await call("/mailbox/start", {})
    say({ id: "mailbox.sent", params: { email: sent.sent_to } })
  })
  $("#code-form").addEventListener("submit", (event) => {
    event.preventDefault()
    const input = $<HTMLInputElement>("#code")
    call("/mailbox/verify", { code: input.value.trim() })
      .then((read) => {
        render(read)
        say({ id: "mailbox.confirmed" })
      })
      .catch(sayError)
  })

  act($("#connect-wallet"), async () => {
    const { current } = state
    if (current?.attestation === null || current === undefined) return
    const provider = await discoverWallet()
    // Never a promise of an address: without a wallet none appears here; the ways to one are below.
    if (provider === undefined) throw new Said({ id: onPhone() ? "wallet.nonePhone" : "wallet.none" })
    const [account] = (await provider.request({ method: "eth_requestAccounts" })) as Array<string>
    if (account === undefined) throw new Said({ id: "wallet.noAccount" })
    await onRequestChain(provider, current.chain_id)
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
    say({ id: "wallet.sign" })
    const signature = (await provider.request({
      method: "eth_signTypedData_v4",
      params: [account, JSON.stringify(withDomain)]
    })) as string
    const read = await call("/wallet", {
      wallet: account,
      chain_id: current.chain_id,
      expires_at: expiresAt,
      signature
    })
    state.wallet = { provider, account }
    state.attested = account
    rememberWallet(id, account)
    render(read)
    say({ id: "wallet.ready" })
    void checkFunds()
  })

  act($("#reconnect-wallet"), async () => {
    const expected = state.attested
    if (expected === undefined) return
    const provider = await discoverWallet()
    if (provider === undefined) throw new Said({ id: onPhone() ? "wallet.nonePhone" : "wallet.none" })
    const [account] = (await provider.request({ method: "eth_requestAccounts" })) as Array<string>
    if (!sameAccount(account, expected))
      throw new Said({ id: "wallet.otherAccount", params: { actual: account ?? "—", expected } })
    state.wallet = { provider, account: expected }
    refreshPayButtons()
    say("")
    void checkFunds()
  })

  act($("#pay-from-wallet"), async () => {
    const { current, wallet, attested } = state
    if (
      current === undefined ||
      wallet === undefined ||
      attested === undefined ||
      current.address === null ||
      current.token_address === null
    )
      return
    const value = owed(current.amount_base_units, current.received_base_units)
    if (value <= 0n) return
    const { provider } = wallet
    // The account first: only the attested wallet pays (a locked wallet shares none until asked).
    const account =
      (await currentAccount(provider)) ??
      ((await provider.request({ method: "eth_requestAccounts" })) as Array<string>)[0]
    if (!sameAccount(account, attested))
      throw new Said({ id: "wallet.otherAccount", params: { actual: account ?? "—", expected: attested } })
    // Then the network, right before sending: a transfer on another chain pays nothing here.
    await onRequestChain(provider, current.chain_id)
    const lacking = await checkFunds()
    if (lacking !== undefined) throw new Said(lacking)
    say({ id: "wallet.confirmTransfer" })
    const hash = await provider.request({
      method: "eth_sendTransaction",
      params: [
        {
          from: attested,
          to: current.token_address,
          data: encodeFunctionData({
            abi: erc20Abi,
            functionName: "transfer",
            args: [current.address as `0x${string}`, value]
          })
        }
      ]
    })
    if (typeof hash !== "string" || !/^0x[0-9a-fA-F]{64}$/.test(hash)) throw new Said({ id: "wallet.failed" })
    // On its way, not paid: the page follows it to a receipt and says how it ended.
    paymentSent(null)
    say({ id: "wallet.submitted" })
    void follow(provider, attested, hash, current.chain_id)
  })

  act($("#copy"), async () => {
    const { current } = state
    if (current?.address) {
      await navigator.clipboard.writeText(current.address)
      say({ id: "copy.address" })
    }
  })

  for (const copy of ["#copy-link", "#copy-app-link"])
    act($(copy), async () => {
      await navigator.clipboard.writeText(checkoutLink())
      say({ id: "copy.link" })
    })
}

const networkOf = (chainId: number) => networkName(chainId, sandbox, t)

/** A wallet's "unknown chain" (4902), also as some mobile wallets wrap it (`data.originalError.code`). */
const unknownChain = (e: unknown) => {
  const err = e as { code?: unknown; data?: { originalError?: { code?: unknown } } } | null
  return err?.code === 4902 || err?.data?.originalError?.code === 4902
}

/**
 * The wallet on the request's chain: switched when it is elsewhere (one prompt), and checked again after. A wallet
 * that does not know the chain (4902) is asked to add it (EIP-3085, one more prompt) with the name, coin, public
 * RPC and explorer the service is configured with; without a public RPC the payer is asked to add it by hand.
 */
const onRequestChain = async (provider: Eip1193, chainId: number) => {
  if (await onChain(provider, chainId)) return
  say({ id: "wallet.switching" })
  const chain = `0x${chainId.toString(16)}`
  try {
    await provider.request({ method: "wallet_switchEthereumChain", params: [{ chainId: chain }] })
  } catch (e) {
    if (!unknownChain(e) || network.rpcUrl === undefined) throw e
    say({ id: "wallet.adding", params: { network: networkOf(chainId) } })
    await provider
      .request({
        method: "wallet_addEthereumChain",
        params: [
          {
            chainId: chain,
            chainName: network.name ?? networkOf(chainId),
            nativeCurrency: {
              name: network.coinName ?? network.coinSymbol ?? "",
              symbol: network.coinSymbol ?? "",
              decimals: 18
            },
            rpcUrls: [network.rpcUrl],
            ...(network.explorerUrl === undefined ? {} : { blockExplorerUrls: [network.explorerUrl] })
          }
        ]
      })
      .catch((added: unknown) => {
        // A wallet that cannot add networks (4200, 4100): what the payer must know is that it lacks this one.
        const code = (added as { code?: unknown } | null)?.code
        throw code === 4200 || code === 4100 ? e : added
      })
    // Most wallets move to the chain they added; one that does not is asked to switch once more.
    if (!(await onChain(provider, chainId)))
      await provider.request({ method: "wallet_switchEthereumChain", params: [{ chainId: chain }] })
  }
  if (!(await onChain(provider, chainId)))
    throw new Said({ id: "wallet.wrongChain", params: { network: networkOf(chainId) } })
}

/** What the connected wallet lacks to pay, said beside the pay button before the payer confirms (none: cleared). */
export const checkFunds = async (): Promise<Msg | undefined> => {
  const { current, wallet } = state
  const line = $("#wallet-funds")
  if (current === undefined || wallet === undefined) {
    line.textContent = ""
    return undefined
  }
  const found = await shortfall(wallet.provider, wallet.account, current)
  const lacking = found === undefined ? undefined : said(found)
  line.textContent = lacking === undefined ? "" : t(lacking.id, lacking.params)
  return lacking
}

/**
 * A shortfall in money: USDC as the page writes it, the fee in the network's coin as the service names it
 * (Monad's MON), never in wei.
 */
const said = (lacking: Shortfall): Msg => {
  if (lacking.kind === "usdc")
    return {
      id: "funds.usdc",
      params: { have: money(lacking.have), missing: money(lacking.missing), amount: money(lacking.amount) }
    }
  const amount = units(microCoin(lacking.missingWei))
  const missing =
    network.coinSymbol === undefined || network.coinSymbol === ""
      ? t("funds.coin", { amount })
      : `${amount} ${network.coinSymbol}`
  return { id: "funds.fee", params: { missing } }
}

const ENDINGS: Record<Exclude<Outcome, "confirmed" | "unanswered">, Msg["id"]> = {
  reverted: "wallet.reverted",
  replaced: "wallet.replaced",
  dropped: "wallet.dropped",
  pending: "wallet.stillPending"
}

/** The transfer followed to its end: confirmed, the request shows it soon; anything else, said, and pay is back. */
const follow = async (provider: Eip1193, account: string, hash: string, chainId: number) => {
  const sending = state.sending
  const outcome = await followTransfer(provider, account, hash, chainId, () =>
    say({ id: "wallet.followElsewhere", params: { network: networkOf(chainId) } }, "error")
  )
  if (outcome === "confirmed") {
    // Mined and paid: the request shows it at its next change; the buttons wait for that (two minutes at most).
    if (state.sending === sending && sending !== undefined) {
      say({ id: "wallet.confirmed" })
      release(sending, 120_000)
    }
    return
  }
  if (sending !== undefined && state.sending === sending) release(sending, 0)
  // Not followed (the wallet would not say): nothing is concluded; the request shows the money if it arrives.
  if (outcome === "unanswered") return
  sayAlert({ id: ENDINGS[outcome] })
  void checkFunds()
}

/**
 * After a reload: the attested wallet reconnected without a prompt (`eth_accounts`) when the browser's wallet is
 * still on it; otherwise the reconnect button stays, and an account that is not the attested one is named.
 */
export const reconnectSilently = async () => {
  const { current } = state
  const expected = state.attested
  if (current === undefined || expected === undefined || state.wallet !== undefined) return
  const provider = await discoverWallet()
  if (provider === undefined) return
  const account = await currentAccount(provider).catch(() => undefined)
  if (account === undefined) return
  if (!sameAccount(account, expected)) {
    say({ id: "wallet.otherAccount", params: { actual: account, expected } }, "error")
    return
  }
  state.wallet = { provider, account: expected }
  refreshPayButtons()
  await checkFunds()
}
