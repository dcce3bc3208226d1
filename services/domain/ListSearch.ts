import { addressRefusal } from "./Address"
import { type IdPrefix, idPrefixes, uuidPattern } from "./PrefixedId"

/**
 * What a list search (`q`) was recognised as (infra/decisions/0080-one-search-and-local-dates.md). Each kind is
 * answered through an index; text that is none of the others is a reference (or, with an `@`, also an email).
 */
export type ListSearch =
  | { readonly kind: "id"; readonly prefix: SearchableIdPrefix; readonly uuid: string }
  | { readonly kind: "address"; readonly lower: string }
  | { readonly kind: "transaction_hash"; readonly lower: string }
  | { readonly kind: "email"; readonly text: string }
  | { readonly kind: "reference"; readonly text: string }

/** The id prefixes a deposit request can be found by: its own, and those of what it names or what it holds. */
export const SEARCHABLE_ID_PREFIXES = ["dr", "cus", "iss", "pa", "att", "va", "evt", "whd"] as const
export type SearchableIdPrefix = (typeof SEARCHABLE_ID_PREFIXES)[number]

const anyCase = (s: string) => s.replace(/[a-z]/g, (c) => `[${c}${c.toUpperCase()}]`)

/**
 * The ids a search refuses (prefixes that lead to no request, in any case), as a JSON Schema pattern for the
 * published document to refuse them too.
 */
export const UNSEARCHABLE_ID_PATTERN = `^(${Object.keys(idPrefixes)
  .filter((p) => !(SEARCHABLE_ID_PREFIXES as ReadonlyArray<string>).includes(p))
  .map(anyCase)
  .join("|")})_${uuidPattern.replaceAll("a-f", "a-fA-F")}$`

const ID = new RegExp(`^(${Object.keys(idPrefixes).join("|")})_(${uuidPattern})$`, "i")
const HASH = /^0x[0-9a-fA-F]{64}$/
const ADDRESS = /^0x[0-9a-fA-F]{40}$/
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/

/** The recognised search, or why the text is refused (an id that names no request, a mistyped address). */
export const recogniseSearch = (q: string): ListSearch | string => {
  const id = ID.exec(q)
  if (id !== null) {
    const prefix = id[1]!.toLowerCase() as IdPrefix
    if (!(SEARCHABLE_ID_PREFIXES as ReadonlyArray<string>).includes(prefix)) {
      return `a ${prefix}_ id does not lead to deposit requests; search by an id of ${SEARCHABLE_ID_PREFIXES.map((p) => `${p}_`).join(", ")}, a reference, an email, an address or a transaction hash`
    }
    return { kind: "id", prefix: prefix as SearchableIdPrefix, uuid: id[2]!.toLowerCase() }
  }
  if (HASH.test(q)) return { kind: "transaction_hash", lower: q.toLowerCase() }
  if (ADDRESS.test(q)) {
    const refused = addressRefusal(q)
    return refused === undefined ? { kind: "address", lower: q.toLowerCase() } : refused
  }
  if (EMAIL.test(q)) return { kind: "email", text: q }
  return { kind: "reference", text: q }
}

/** Whether a request created now (no deposit address, wallet, transfer or event yet) can match the search. */
export const searchMayMatchNew = (s: ListSearch) =>
  s.kind === "reference" ||
  s.kind === "email" ||
  // Its payout address.
  s.kind === "address" ||
  (s.kind === "id" && (s.prefix === "cus" || s.prefix === "iss" || s.prefix === "pa" || s.prefix === "att"))
