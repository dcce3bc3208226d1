import { Option, Schema, SchemaAST } from "effect"
import { type IdPrefix, idPattern } from "../../services/domain/PrefixedId"
import { Text } from "../../services/domain/Text"

/** Request bodies are strict: an unknown field is an error, never silently dropped. */
export const StrictStruct = <Fields extends Schema.Struct.Fields>(fields: Fields) =>
  Schema.Struct(fields).annotations({ parseOptions: { onExcessProperty: "error" } })

/** A path parameter is decoded by the handler, so a malformed id answers 404 rather than 400. */
export const IdParam = (prefix: IdPrefix) =>
  Schema.String.annotations({
    description: `A \`${prefix}_\` id. A malformed id, a bare UUID or another prefix answers 404.`,
    jsonSchema: { type: "string", pattern: idPattern(prefix) }
  })

/**
 * The example OpenAPI (and so /docs) shows for a schema, written as a client sends it. It is decoded here, so an
 * example the schema refuses stops the service from loading rather than reaching a reader.
 */
export const withExample = <S extends Schema.Schema.AnyNoContext>(
  schema: S,
  encoded: Schema.Schema.Encoded<S>
): S =>
  schema.annotations({
    examples: [Schema.decodeUnknownSync(schema)(encoded)],
    // Annotating again drops the identifier, and with it the named component in OpenAPI: carry it over.
    ...Option.match(SchemaAST.getIdentifierAnnotation(schema.ast), {
      onNone: () => ({}),
      onSome: (identifier) => ({ identifier })
    })
  }) as S

/** Ids in examples: one fixed, recognisable UUID after the prefix; replace them with your own resources' ids. */
export const exampleId = (prefix: IdPrefix) => `${prefix}_0190f5c2-7d4e-7a31-9b6c-1d0a4e5f6a7b`

/** Block numbers and log indexes travel as decimal strings. */
export const BlockNumber = Schema.String.pipe(Schema.pattern(/^\d+$/)).annotations({
  identifier: "BlockNumber"
})

/** Hashes and signatures: 0x-prefixed lowercase hex on the way out. */
/**
 * The chain a service settles on: 143 in production, 10143 in the sandbox. Which one depends on where the service
 * runs, which one static document cannot say; GET /v1/health names it.
 */
export const ChainId = Schema.Literal(143, 10143).annotations({
  identifier: "ChainId",
  description: "143 in production, 10143 in the sandbox: the service's `chain_id` of GET /v1/health."
})

export const Hex = Schema.String.pipe(Schema.pattern(/^0x[0-9a-f]*$/)).annotations({ identifier: "Hex" })

/** Decimal numerals of one length from `lo` to `hi` (same length), as regular expression alternatives. */
const sameLengthRange = (lo: string, hi: string): string => {
  if (lo === hi) return lo
  const rest = lo.length - 1
  if (rest === 0) return `[${lo}-${hi}]`
  const [a, b] = [Number(lo[0]), Number(hi[0])]
  if (a === b) return `${a}(?:${sameLengthRange(lo.slice(1), hi.slice(1))})`
  if (/^0*$/.test(lo.slice(1)) && /^9*$/.test(hi.slice(1))) return `[${a}-${b}]\\d{${rest}}`
  const parts = [`${a}(?:${sameLengthRange(lo.slice(1), "9".repeat(rest))})`]
  if (b - a > 1) parts.push(`[${a + 1}-${b - 1}]\\d{${rest}}`)
  parts.push(`${b}(?:${sameLengthRange("0".repeat(rest), hi.slice(1))})`)
  return parts.join("|")
}

/**
 * The integers from `min` to `max` written in plain decimal digits, as a JSON Schema pattern: a query value is a
 * string, so its bounds are in the pattern, exactly.
 */
export const integerRangePattern = (min: number, max: number): string => {
  const parts: Array<string> = []
  for (let length = String(min).length; length <= String(max).length; length++) {
    const lo = Math.max(min, length === 1 ? 0 : 10 ** (length - 1))
    const hi = Math.min(max, 10 ** length - 1)
    if (lo <= hi) parts.push(sameLengthRange(String(lo), String(hi)))
  }
  return `^(?:${parts.join("|")})$`
}

/**
 * An integer query value written as plain decimal digits: `1e2`, `+5`, `0x10`, `5.0` or ` 5` are refused rather
 * than read as numbers (`Number()` would take them all).
 */
export const DecimalInteger = (min: number, max: number, description?: string) =>
  Schema.String.pipe(
    Schema.pattern(/^(0|[1-9]\d{0,8})$/, { message: () => "must be an integer written in decimal digits" }),
    Schema.compose(Schema.NumberFromString),
    Schema.between(min, max)
  ).annotations({
    // The whole JSON Schema (a refinement of a transformation shows only what this annotation says): the
    // description goes in it, or the document loses it.
    jsonSchema: {
      type: "string",
      pattern: integerRangePattern(min, max),
      description: description ?? `An integer from ${min} to ${max}, in decimal digits.`
    }
  })

/** `limit` of a list: 1 to 100, default 20. */
export const Limit = Schema.optionalWith(DecimalInteger(1, 100, "Page size, 1 to 100 (default 20)."), {
  default: () => 20
})

/** A list page: the items under the plural name, and the id to pass as `starting_after` for the next page. */
export const ListOf = <K extends string, S extends Schema.Schema.Any>(name: K, item: S) =>
  Schema.Struct({
    [name]: Schema.Array(item),
    next_cursor: Schema.NullOr(Schema.String).annotations({
      description: "Pass as `starting_after` to read the next page; null on the last page."
    })
  } as { [P in K]: Schema.Array$<S> } & { next_cursor: Schema.NullOr<typeof Schema.String> })

/**
 * Merchant key/value data, like Stripe's: at most 50 keys, keys up to 40 characters, values up to 500, text
 * without control characters.
 */
export const Metadata = Schema.Record({
  key: Text.pipe(Schema.minLength(1), Schema.maxLength(40)),
  value: Text.pipe(Schema.maxLength(500))
}).pipe(
  // The JSON Schema annotation is what carries the limit and the description into OpenAPI: a filter without one
  // is rendered as its source schema alone.
  Schema.filter((m) => Object.keys(m).length <= 50 || "must have at most 50 keys", {
    jsonSchema: { maxProperties: 50 }
  }),
  Schema.annotations({
    identifier: "Metadata",
    description:
      "Merchant key/value data: an object of at most 50 pairs, string keys of 1–40 characters to string values of up to 500 characters. Keys and values are text: C0 control characters other than tab, CR and LF are refused. On update the object replaces the stored one whole; null clears it to {}."
  })
)

/**
 * Nothing to send: an empty object (or no body) is accepted so clients may always send JSON, and any field is an
 * unknown field. (An empty `Struct` would accept any object, so this is a record whose values can never decode.)
 */
export const EmptyBody = Schema.Record({
  key: Schema.String,
  value: Schema.Never.annotations({ message: () => "unknown field" })
}).annotations({ identifier: "EmptyBody", description: "An empty object.", examples: [{}] })

/** The description every route for the account's people (not its integrations) starts with. */
export const SESSIONS_ONLY =
  "Dashboard sessions only: an API key here answers 401 `identity_unauthorized`. Body limit 16 KiB."
