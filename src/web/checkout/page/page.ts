import { type Msg, Said, t } from "./i18n"
import { describeRefusal } from "./refusals"
import type { PayerRead, PayerStep, StepAnswer, StepBody } from "./read"
import type { Eip1193 } from "./wallet"

/** The page's shared state and helpers: the request it shows, the live region, calls to the payer routes. */
export const id = location.pathname.split("/").pop() ?? ""
export const api = `/v1/payer/deposit-requests/${encodeURIComponent(id)}`
export const $ = <E extends HTMLElement>(selector: string) => document.querySelector(selector) as E
export const status = $<HTMLElement>("#status")
export const sandbox = document.body.dataset.sandbox === "true"

/**
 * The request's network as the service is configured (decision 0092): the name, coin and public URLs a wallet
 * that does not know the chain is asked to add it with (no RPC URL: the page cannot add it), and the coin the
 * network fee is named in.
 */
export const network = {
  name: document.body.dataset.chainName,
  coinName: document.body.dataset.coinName,
  coinSymbol: document.body.dataset.coinSymbol,
  rpcUrl: document.body.dataset.chainRpc,
  explorerUrl: document.body.dataset.chainExplorer
}

/**
 * The last read rendered, the wallet the payer connected (none until then), the account this browser attested
 * for the request (kept across reloads), a payment sent from this page that the request has not shown yet
 * (what had been received when it left, and until when to wait for it; no end while the page follows it), and
 * whether this browser has a wallet at all (unknown until the wallets have had their time to announce).
 */
export const state: {
  current: PayerRead | undefined
  wallet: { provider: Eip1193; account: string } | undefined
  attested: string | undefined
  sending: { receivedBefore: string; until: number } | undefined
  walletFound: boolean | undefined
} = { current: undefined, wallet: undefined, attested: undefined, sending: undefined, walletFound: undefined }

/** What the live region says now: a message (said again when the language changes) or a wallet's own words. */
let said: { readonly text: string | Msg; readonly tone: "info" | "error" } = { text: "", tone: "info" }

/** One line in the live region, read by screen readers as it changes. */
export const say = (text: string | Msg, tone: "info" | "error" = "info") => {
  said = { text, tone }
  status.textContent = typeof text === "string" ? text : t(text.id, text.params)
  status.dataset.tone = tone
}

/** The live region in the current language (after a switch). */
export const sayAgain = () => say(said.text, said.tone)

/** Whether the live region says this message now. */
export const saying = (id: Msg["id"]) => typeof said.text !== "string" && said.text.id === id

/**
 * An error the payer must read before anything else: said, and focus moved to it (the button that failed was
 * disabled while it ran, so focus had fallen to the page's body).
 */
export const sayAlert = (text: string | Msg) => {
  say(text, "error")
  status.focus()
}

/** An error in the live region: ours as a message, anything else (a wallet's) in its own words. */
export const sayError = (e: unknown) =>
  say(e instanceof Said ? e.msg : e instanceof Error ? e.message : String(e), "error")

/**
 * A phone (or tablet): the primary pointer is a finger. Asked of the input, not the user agent string, which
 * tablets and "desktop mode" browsers disguise; a touch laptop keeps its fine primary pointer and still counts
 * as a computer.
 */
export const onPhone = () => matchMedia("(pointer: coarse)").matches

type Answered<S extends "" | PayerStep> = S extends PayerStep ? StepAnswer<S> : PayerRead

/** The read (`""`, a GET) or one of the payer's steps (a POST of its body), typed by the contract. */
export const call = async <S extends "" | PayerStep>(
  path: S,
  ...[body]: S extends PayerStep ? [body: StepBody<S>] : []
): Promise<Answered<S>> => {
  const res = await fetch(`${api}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? null : JSON.stringify(body)
  })
  const json = (await res.json()) as { error?: { code?: string; message?: string } }
  if (!res.ok)
    throw Object.assign(new Said(describeRefusal(json.error?.code, json.error?.message)), {
      httpStatus: res.status
    })
  return json as Answered<S>
}
