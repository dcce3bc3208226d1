/** An EIP-1193 provider: the one method the checkout needs. */
export interface Eip1193 {
  request(args: { method: string; params?: unknown }): Promise<unknown>
}

/**
 * The browser's wallet: the first one announced through EIP-6963 (several extensions can live side by side), else
 * the legacy `window.ethereum`, else none.
 */
export const discoverWallet = (): Promise<Eip1193 | undefined> =>
  new Promise((resolve) => {
    let found: Eip1193 | undefined
    const onAnnounce = (event: Event) => {
      found ??= (event as CustomEvent<{ provider: Eip1193 }>).detail?.provider
    }
    window.addEventListener("eip6963:announceProvider", onAnnounce)
    window.dispatchEvent(new Event("eip6963:requestProvider"))
    setTimeout(() => {
      window.removeEventListener("eip6963:announceProvider", onAnnounce)
      resolve(found ?? (window as unknown as { ethereum?: Eip1193 }).ethereum)
    }, 150)
  })

const walletKey = (requestId: string) => `checkout-wallet:${requestId}`

/**
 * The account this browser attested for a request, kept in localStorage so a reload reconnects to it without a
 * prompt; storage that refuses only costs the silent reconnect.
 */
export const rememberWallet = (requestId: string, account: string) => {
  try {
    localStorage.setItem(walletKey(requestId), account)
  } catch {
    // Not kept: the payer reconnects with the button after a reload.
  }
}
export const rememberedWallet = (requestId: string): string | undefined => {
  try {
    return localStorage.getItem(walletKey(requestId)) ?? undefined
  } catch {
    return undefined
  }
}
