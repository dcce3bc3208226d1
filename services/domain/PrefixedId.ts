import { Schema } from "effect"

/** A canonical (lowercase, hyphenated) UUID, as every prefixed id carries one. */
export const uuidPattern = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"

/** The id prefixes of the spec, with the resource name used in `<resource>_not_found`. */
export const idPrefixes = {
  dr: "deposit_request",
  cus: "customer",
  iss: "issuer",
  pa: "payout_address",
  att: "attachment",
  wh: "webhook",
  whd: "webhook_delivery",
  evt: "event",
  va: "verification_attempt",
  rec: "recovery",
  acct: "account",
  mem: "member",
  inv: "invite",
  ses: "session",
  pk: "passkey"
} as const
export type IdPrefix = keyof typeof idPrefixes
export type ResourceName = (typeof idPrefixes)[IdPrefix]

/** The pattern of an id of the given prefix, for JSON Schema. */
export const idPattern = (prefix: IdPrefix) => `^${prefix}_${uuidPattern}$`

const idRegex = (prefix: IdPrefix) => new RegExp(idPattern(prefix))

/** An id: the resource prefix and a canonical (lowercase, hyphenated) UUID. */
export const Id = <P extends IdPrefix>(prefix: P) => {
  const regex = idRegex(prefix)
  return Schema.String.pipe(
    Schema.filter(
      (s) =>
        regex.test(s) ||
        `must be ${/^[aeiou]/.test(prefix) ? "an" : "a"} ${prefix}_ id (the ${prefix}_ prefix and a canonical UUID)`
    ),
    Schema.brand(`${prefix}_id`),
    Schema.annotations({
      identifier: `${prefix}_id`,
      description: `A ${idPrefixes[prefix].replaceAll("_", " ")} id: \`${prefix}_\` followed by a canonical UUID.`,
      jsonSchema: { type: "string", pattern: idPattern(prefix) }
    })
  )
}
export const isId = (prefix: IdPrefix, value: string) => idRegex(prefix).test(value)

/** The UUID inside an id of the given prefix, or undefined when it is malformed, bare or of another prefix. */
export const uuidFromId = (prefix: IdPrefix, id: string): string | undefined =>
  isId(prefix, id) ? id.slice(prefix.length + 1) : undefined

/** The wire id of a stored UUID (the database keeps the bare `uuid`). */
export const toId = <P extends IdPrefix>(prefix: P, uuid: string) =>
  `${prefix}_${uuid}` as Schema.Schema.Type<ReturnType<typeof Id<P>>>
