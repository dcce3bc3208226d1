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
