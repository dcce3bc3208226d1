/**
 * Links that open a page inside a wallet app's own browser, where the app injects its wallet (decision 0098): each in
 * the format the app documents for opening a web page in its browser, checked against its docs (November 2026).
 * A payer on a phone without a browser wallet follows one and carries on there: the service keeps every proof, so
 * the page's link alone is enough. Apps that document no such link (Rainbow's links only pair WalletConnect) are
 * left to "open its browser and go to this link".
 */
export interface WalletApp {
  readonly name: string
  readonly href: string
}

/** The page's link, without scheme, the way MetaMask's path parameter takes a dapp ("link.metamask.io/dapp/{url}"). */
const withoutHttps = (url: string) => url.replace(/^https:\/\//i, "")

export const walletAppLinks = (pageUrl: string): ReadonlyArray<WalletApp> => {
  const encoded = encodeURIComponent(pageUrl)
  return [
    // docs.metamask.io, "Use deeplinks": https://link.metamask.io/dapp/{dappUrl}
    { name: "MetaMask", href: `https://link.metamask.io/dapp/${withoutHttps(pageUrl)}` },
    // docs.cdp.coinbase.com, "Mobile dapp integration": https://go.cb-w.com/dapp?cb_url={percent-encoded url}
    { name: "Coinbase Wallet", href: `https://go.cb-w.com/dapp?cb_url=${encoded}` },
    // developer.trustwallet.com, "Deep Linking": open_url with the network's SLIP-44 index (60: the EVM family)
    { name: "Trust Wallet", href: `https://link.trustwallet.com/open_url?coin_id=60&url=${encoded}` },
    // web3.okx.com, "App Universal Link": okx://wallet/dapp/url?dappUrl={encoded}, itself encoded into download?deeplink=
    {
      name: "OKX Wallet",
      href: `https://web3.okx.com/download?deeplink=${encodeURIComponent(`okx://wallet/dapp/url?dappUrl=${encoded}`)}`
    },
    // docs.phantom.com, "Browse": https://phantom.app/ul/browse/{encoded url}?ref={encoded origin of the app}
    {
      name: "Phantom",
      href: `https://phantom.app/ul/browse/${encoded}?ref=${encodeURIComponent(new URL(pageUrl).origin)}`
    }
  ]
}
