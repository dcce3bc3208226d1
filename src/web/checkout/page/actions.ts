import { encodeFunctionData, erc20Abi } from "viem"
import { owed } from "./amounts"
import { type Msg, Said } from "./i18n"
import { $, call, say, sayError, state } from "./page"
import { checkoutLink, paymentSent, refreshPayButtons, render } from "./render"
import { discoverWallet } from "./wallet"

/** A wallet's refusal (EIP-1193 codes) or ours, as a sentence. */
const sentenceOf = (e: unknown): Msg | undefined => {
  const code = (e as { code?: unknown } | null)?.code
  if (code === 4001) return { id: "wallet.declined" }
  if (code === 4902) return { id: "wallet.unknownChain", params: { chain: String(state.current?.chain_id) } }
  if (code === 4100 || code === 4200) return { id: "wallet.refused" }
  return e instanceof Error ? undefined : { id: "wallet.failed" }
}

export const act = (button: HTMLButtonElement, run: () => Promise<void>) =>
  button.addEventListener("click", () => {
    button.disabled = true
    button.dataset.busy = "true"
    refreshPayButtons()
    run()
      .catch((e: unknown) => {
        const sentence = sentenceOf(e)
        if (sentence === undefined) sayError(e)
        else say(sentence, "error")
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
    if (provider === undefined) throw new Said({ id: "wallet.none" })
    const [account] = (await provider.request({ method: "eth_requestAccounts" })) as Array<string>
    if (account === undefined) throw new Said({ id: "wallet.noAccount" })
    const chainHex = `0x${current.chain_id.toString(16)}`
    if ((await provider.request({ method: "eth_chainId" })) !== chainHex) {
      say({ id: "wallet.switching" })
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
    say({ id: "wallet.sign" })
    const signature = (await provider.request({
      method: "eth_signTypedData_v4",
      params: [account, JSON.stringify(withDomain)]
    })) as string
    state.wallet = { provider, account }
    render(
      await call("/wallet", { wallet: account, chain_id: current.chain_id, expires_at: expiresAt, signature })
    )
    say({ id: "wallet.ready" })
  })

  act($("#pay-from-wallet"), async () => {
    const { current, wallet } = state
    if (
      current === undefined ||
      wallet === undefined ||
      current.address === null ||
      current.token_address === null
    )
      return
    const value = owed(current.amount_base_units, current.received_base_units)
    if (value <= 0n) return
    say({ id: "wallet.confirmTransfer" })
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
    paymentSent()
    say({ id: "wallet.sent" })
  })

  act($("#copy"), async () => {
    const { current } = state
    if (current?.address) {
      await navigator.clipboard.writeText(current.address)
      say({ id: "copy.address" })
    }
  })

  act($("#copy-link"), async () => {
    await navigator.clipboard.writeText(checkoutLink())
    say({ id: "copy.link" })
  })
}
