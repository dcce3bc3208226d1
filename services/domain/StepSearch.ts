import { uuidPattern } from "./PrefixedId"

/**
 * The inspector's one search box (`GET /v1/lifecycle/steps/find?q=`): what it recognises, as a function for the
 * handler and as one JSON Schema pattern for the contract, kept together so the two cannot drift. Pure, so the
 * contract (and the client kit that bundles it) imports no service.
 */
const ID_SEARCH = new RegExp(`^(dr|evt|whd)_(${uuidPattern})$`, "i")
const HASH_SEARCH = /^0x[0-9a-f]{64}$/i
/** A credit's id as the chain watcher names it: chain, transaction hash, log index. */
const CREDIT_SEARCH = /^(\d{1,12}):(0x[0-9a-f]{64}):(\d{1,9})$/i

const HEX = "[0-9a-fA-F]"
/**
 * What `recogniseStepSearch` takes, as one JSON Schema pattern (which has no `i` flag): the three searches above in
 * any case, with the blanks `trim` drops around them.
 */
export const STEP_SEARCH_PATTERN = `^\\s*(([dD][rR]|[eE][vV][tT]|[wW][hH][dD])_${HEX}{8}-${HEX}{4}-${HEX}{4}-${HEX}{4}-${HEX}{12}|0[xX]${HEX}{64}|\\d{1,12}:0[xX]${HEX}{64}:\\d{1,9})\\s*$`

/** What the inspector's search box recognises; undefined for anything else. */
export const recogniseStepSearch = (
  q: string
):
  | { readonly kind: "dr" | "evt" | "whd"; readonly uuid: string }
  | { readonly kind: "transaction_hash"; readonly hash: string }
  | { readonly kind: "credit"; readonly creditId: string }
  | undefined => {
  const text = q.trim()
  const id = ID_SEARCH.exec(text)
  if (id !== null) return { kind: id[1]!.toLowerCase() as "dr" | "evt" | "whd", uuid: id[2]!.toLowerCase() }
  if (HASH_SEARCH.test(text)) return { kind: "transaction_hash", hash: text.toLowerCase() }
  const credit = CREDIT_SEARCH.exec(text)
  if (credit !== null)
    return { kind: "credit", creditId: `${credit[1]}:${credit[2]!.toLowerCase()}:${credit[3]}` }
  return undefined
}
