import { encodeFunctionData, erc20Abi } from "viem"
import { owed } from "./amounts"
import { $, call, say, state } from "./page"
import { checkoutLink, paymentSent, refreshPayButtons, render } from "./render"
import { discoverWallet } from "./wallet"

/** A wallet's refusal (EIP-1193 codes) or ours, as a sentence. */
const sentenceOf = (e: unknown): string => {
  const code = (e as { code?: unknown } | null)?.code
  if (code === 4001) return "You declined in your wallet. Try again when you are ready."
  if (code === 4902)
    return `Your wallet does not know this network (chain ${state.current?.chain_id}). Add it in your wallet, then try again.`
  if (code === 4100 || code === 4200)
    return "Your wallet refused this request. Unlock it, or try another wallet."
  return e instanceof Error ? e.message : "Your wallet could not do that. Try again."
}

export const act = (button: HTMLButtonElement, run: () => Promise<void>) =>
  button.addEventListener("click", () => {
    button.disabled = true
    button.dataset.busy = "true"
    refreshPayButtons()
    run()
      .catch((e: unknown) => say(sentenceOf(e), "error"))
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
    const { current } = state
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
    const signature = (await provider.request({
      method: "eth_signTypedData_v4",
      params: [account, JSON.stringify(withDomain)]
    })) as string
    state.wallet = { provider, account }
    render(
      await call("/wallet", { wallet: account, chain_id: current.chain_id, expires_at: expiresAt, signature })
    )
    say("Your payment address is ready.")
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
    paymentSent()
    say("Payment sent. Waiting for the network to confirm it…")
  })

  act($("#copy"), async () => {
    const { current } = state
    if (current?.address) {
      await navigator.clipboard.writeText(current.address)
      say("Address copied.")
    }
  })

  act($("#copy-link"), async () => {
    await navigator.clipboard.writeText(checkoutLink())
    say("Link copied.")
  })
}
