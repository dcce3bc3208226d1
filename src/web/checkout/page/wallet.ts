/** An EIP-1193 provider: the one method the checkout needs. */
export interface Eip1193 {
  request(args: { method: string; params?: unknown }): Promise<unknown>
}

/** A wallet as it announces itself through EIP-6963: its name, its icon (a data: URI) and its reverse-DNS id. */
export interface Announced {
  readonly info: {
    readonly uuid: string
    readonly name: string
    readonly icon: string
    readonly rdns: string
  }
  readonly provider: Eip1193
}

/** Every wallet announced so far, by uuid, in the order they answered; kept as late ones announce themselves. */
const announced = new Map<string, Announced>()
let onAnnounced: () => void = () => undefined

const isAnnounced = (detail: unknown): detail is Announced => {
  const d = detail as Partial<Announced> | null | undefined
  return (
    typeof d?.provider?.request === "function" &&
    typeof d.info?.uuid === "string" &&
    typeof d.info.name === "string" &&
    typeof d.info.rdns === "string"
  )
}

window.addEventListener("eip6963:announceProvider", (event) => {
  const detail = (event as CustomEvent<unknown>).detail
  if (!isAnnounced(detail)) return
  announced.set(detail.info.uuid, detail)
  onAnnounced()
})

/** Told whenever a wallet announces itself (again, or late: an extension that loads after the page). */
export const whenAnnounced = (listener: () => void) => {
  onAnnounced = listener
}

/** Every EIP-6963 wallet in this browser: asked once, answered within 150 ms (later ones are added as they come). */
export const discoverWallets = (): Promise<ReadonlyArray<Announced>> =>
  new Promise((resolve) => {
    window.dispatchEvent(new Event("eip6963:requestProvider"))
    setTimeout(() => resolve([...announced.values()]), 150)
  })

const CHOICE_KEY = "checkout-wallet-choice"
/** The choice made on this page (it holds even where storage refuses). */
let picked: string | undefined

/** The wallet the payer chose (its `rdns`), kept in localStorage so the next visit preselects it. */
export const rememberChoice = (rdns: string) => {
  picked = rdns
  try {
    localStorage.setItem(CHOICE_KEY, rdns)
  } catch {
    // Not kept: the first wallet is preselected next time.
  }
}
export const rememberedChoice = (): string | undefined => {
  if (picked !== undefined) return picked
  try {
    return localStorage.getItem(CHOICE_KEY) ?? undefined
  } catch {
    return undefined
  }
}

/** The wallet to use among those announced: the remembered choice when it is still there, else the first. */
export const chosen = (wallets: ReadonlyArray<Announced>): Announced | undefined => {
  const choice = rememberedChoice()
  return wallets.find((w) => w.info.rdns === choice) ?? wallets[0]
}

/**
 * The browser's wallet: the one the payer chose among those announced through EIP-6963 (several extensions can
 * live side by side), else the first, else the legacy `window.ethereum`, else none.
 */
export const discoverWallet = async (): Promise<Eip1193 | undefined> =>
  chosen(await discoverWallets())?.provider ?? (window as unknown as { ethereum?: Eip1193 }).ethereum

/** An icon a wallet announced, shown only as an image: a `data:image/…` URI set as a source, never as HTML. */
const iconOf = (icon: string): HTMLImageElement | undefined => {
  if (!/^data:image\/[a-z0-9.+-]+[;,]/i.test(icon)) return undefined
  const img = document.createElement("img")
  img.src = icon
  img.alt = ""
  img.width = 28
  img.height = 28
  return img
}

/**
 * The wallets announced (EIP-6963), each with its name and icon, as one radio group: the remembered one (by
 * `rdns`) or the first is checked, so the connect button needs no extra click. One wallet: no choice shown.
 */
const draw = (wallets: ReadonlyArray<Announced>) => {
  const selected = chosen(wallets)?.info.uuid
  const box = document.querySelector("#wallets") as HTMLElement
  const list = document.querySelector("#wallet-list") as HTMLElement
  box.hidden = wallets.length < 2
  list.replaceChildren(
    ...wallets.map((wallet) => {
      const label = document.createElement("label")
      label.className = "wallet"
      const input = document.createElement("input")
      input.type = "radio"
      input.name = "wallet"
      input.value = wallet.info.rdns
      input.checked = wallet.info.uuid === selected
      input.addEventListener("change", () => {
        if (input.checked) rememberChoice(wallet.info.rdns)
      })
      const icon = iconOf(wallet.info.icon)
      label.append(input, ...(icon === undefined ? [] : [icon]), document.createTextNode(wallet.info.name))
      return label
    })
  )
}

/** The legacy injected wallet (`window.ethereum`), which wallets without EIP-6963 still provide. */
const legacyWallet = () => (window as unknown as { ethereum?: Eip1193 }).ethereum !== undefined

/**
 * The payer's choice of wallet, drawn once the wallets have answered and again when a late one announces itself;
 * `found` is told whether this browser has any wallet, then again when a late one shows up.
 */
export const wireWalletChoice = async (found: (any: boolean) => void) => {
  const wallets = await discoverWallets()
  // Redrawn from what has been announced, not asked again: asking makes every wallet announce itself once more.
  whenAnnounced(() => {
    draw([...announced.values()])
    found(true)
  })
  draw(wallets)
  found(wallets.length > 0 || legacyWallet())
}

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
