import { ParseResult, Schema } from "effect"
import { getAddress } from "viem"

/** Request bodies are strict: an unknown field is an error, never silently dropped. */
export const StrictStruct = <Fields extends Schema.Struct.Fields>(fields: Fields) =>
  Schema.Struct(fields).annotations({ parseOptions: { onExcessProperty: "error" } })

// C0 controls (U+0000–U+001F) other than tab, LF and CR.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const forbiddenControl = /[\u0000-\u0008\u000B\u000C\u000E-\u001F]/

/**
 * A JavaScript string that UTF-8 can carry: no lone UTF-16 surrogate (JSON's `"\ud800"` escape makes one).
 * PostgreSQL refuses such strings, and they are not text in the spec's sense.
 */
export const isWellFormedText = (s: string): boolean =>
  (s as unknown as { isWellFormed(): boolean }).isWellFormed()

/** Why a caller's string is not text, or undefined when it is: the one rule for every text field and query value. */
export const textProblem = (s: string): string | undefined =>
  forbiddenControl.test(s)
    ? "must not contain control characters"
    : isWellFormedText(s)
      ? undefined
      : "must be UTF-8 text (it holds a lone UTF-16 surrogate)"

/** UTF-8 text from a caller: no C0 control characters except tab, CR and LF (which are preserved). */
export const Text = Schema.String.pipe(
  Schema.filter((s) => textProblem(s) ?? true),
  Schema.annotations({
    identifier: "Text",
    description: "UTF-8 text without C0 control characters (tab, CR and LF are allowed)"
  })
)
export const hasForbiddenControl = (s: string) => forbiddenControl.test(s)

const uuidPattern = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"

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
  acct: "account"
} as const
export type IdPrefix = keyof typeof idPrefixes
export type ResourceName = (typeof idPrefixes)[IdPrefix]

const idRegex = (prefix: IdPrefix) => new RegExp(`^${prefix}_${uuidPattern}$`)

/** An id: the resource prefix and a canonical (lowercase, hyphenated) UUID. */
export const Id = <P extends IdPrefix>(prefix: P) => {
  const regex = idRegex(prefix)
  return Schema.String.pipe(
    Schema.filter(
      (s) => regex.test(s) || `must be a ${prefix}_ id (the ${prefix}_ prefix and a canonical UUID)`
    ),
    Schema.brand(`${prefix}_id`),
    Schema.annotations({
      identifier: `${prefix}_id`,
      description: `A ${idPrefixes[prefix].replaceAll("_", " ")} id: \`${prefix}_\` followed by a canonical UUID.`,
      jsonSchema: { type: "string", pattern: `^${prefix}_${uuidPattern}$` }
    })
  )
}
export const isId = (prefix: IdPrefix, value: string) => idRegex(prefix).test(value)

/** The UUID inside an id of the given prefix, or undefined when it is malformed, bare or of another prefix. */
export const uuidFromId = (prefix: IdPrefix, id: string): string | undefined =>
  isId(prefix, id) ? id.slice(prefix.length + 1) : undefined

/** A path parameter is decoded by the handler, so a malformed id answers 404 rather than 400. */
export const IdParam = (prefix: IdPrefix) =>
  Schema.String.annotations({
    description: `A \`${prefix}_\` id. A malformed id, a bare UUID or another prefix answers 404.`,
    jsonSchema: { type: "string", pattern: `^${prefix}_${uuidPattern}$` }
  })

const BASE = 1_000_000n

/** Base units to the wire's decimal string with exactly six fractional digits. */
export const formatAmount = (baseUnits: bigint): string => {
  const negative = baseUnits < 0n
  const abs = negative ? -baseUnits : baseUnits
  const whole = abs / BASE
  const fraction = (abs % BASE).toString().padStart(6, "0")
  return `${negative ? "-" : ""}${whole}.${fraction}`
}

const amountPattern = /^(0|[1-9]\d{0,17})\.\d{6}$/

/**
 * Parses a decimal USDC amount in the spec's exact format (six fractional digits; no sign, exponent or padding)
 * into base units. Looser forms such as `12.5` are refused, not guessed at: the API, the CLI and answers share one
 * format.
 */
export const parseAmount = (input: string): bigint | undefined => {
  if (!amountPattern.test(input)) return undefined
  const [whole = "0", fraction = ""] = input.split(".")
  return BigInt(whole) * BASE + BigInt(fraction)
}

/** A USDC amount on the wire: a decimal string; inside, bigint base units. */
export const Amount = Schema.transformOrFail(
  Schema.String.annotations({
    description:
      "A USDC amount as a decimal string with exactly six fractional digits, as answers carry it (`12.500000`).",
    examples: ["25.000000"]
  }),
  Schema.BigIntFromSelf,
  {
    strict: true,
    decode: (s, _, ast) => {
      const value = parseAmount(s)
      return value === undefined
        ? ParseResult.fail(
            new ParseResult.Type(
              ast,
              s,
              "must be a decimal string with exactly six fractional digits, such as 12.500000"
            )
          )
        : ParseResult.succeed(value)
    },
    encode: (n) => ParseResult.succeed(formatAmount(n))
  }
).annotations({ identifier: "Amount" })

/** The integer twin of an amount: base units as a string of digits. */
export const BaseUnits = Schema.transformOrFail(
  Schema.String.annotations({
    description: "Integer base units (10^-6 USDC) as a string of digits.",
    pattern: "^\\d+$"
  }),
  Schema.BigIntFromSelf,
  {
    strict: true,
    decode: (s, _, ast) =>
      /^\d{1,30}$/.test(s)
        ? ParseResult.succeed(BigInt(s))
        : ParseResult.fail(new ParseResult.Type(ast, s, "must be a string of digits")),
    encode: (n) => ParseResult.succeed(n.toString())
  }
).annotations({ identifier: "BaseUnits" })

/** RFC 3339 UTC with second precision and a `Z`, the only form answers use. */
export const formatTimestamp = (date: Date): string => `${date.toISOString().slice(0, 19)}Z`

export const Timestamp = Schema.transformOrFail(
  Schema.String.annotations({
    description: "RFC 3339 timestamp. Answers are UTC with second precision and a Z suffix.",
    examples: ["2026-11-22T12:00:00Z"]
  }),
  Schema.DateFromSelf,
  {
    strict: true,
    decode: (s, _, ast) => {
      const ok = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(s)
      const date = new Date(s)
      return ok && !Number.isNaN(date.getTime())
        ? ParseResult.succeed(new Date(Math.floor(date.getTime() / 1000) * 1000))
        : ParseResult.fail(new ParseResult.Type(ast, s, "must be an RFC 3339 timestamp"))
    },
    encode: (d) => ParseResult.succeed(formatTimestamp(d))
  }
).annotations({ identifier: "Timestamp" })

/** An EVM address: any letter case in, EIP-55 out. */
export const Address = Schema.transformOrFail(
  Schema.String.annotations({
    description:
      "A 20-byte EVM address, 0x-prefixed. Any letter case is accepted; answers are EIP-55 checksummed.",
    pattern: "^0x[0-9a-fA-F]{40}$"
  }),
  Schema.String,
  {
    strict: true,
    decode: (s, _, ast) =>
      /^0x[0-9a-fA-F]{40}$/.test(s)
        ? ParseResult.succeed(getAddress(s.toLowerCase()))
        : ParseResult.fail(new ParseResult.Type(ast, s, "must be a 0x-prefixed 20-byte hex address")),
    encode: (s) => ParseResult.succeed(getAddress(s.toLowerCase()))
  }
).annotations({ identifier: "Address" })

/** Block numbers and log indexes travel as decimal strings. */
export const BlockNumber = Schema.String.pipe(Schema.pattern(/^\d+$/)).annotations({
  identifier: "BlockNumber"
})

/** Hashes and signatures: 0x-prefixed lowercase hex on the way out. */
export const Hex = Schema.String.pipe(Schema.pattern(/^0x[0-9a-f]*$/)).annotations({ identifier: "Hex" })

/**
 * An integer query value written as plain decimal digits: `1e2`, `+5`, `0x10`, `5.0` or ` 5` are refused rather
 * than read as numbers (`Number()` would take them all).
 */
export const DecimalInteger = (min: number, max: number) =>
  Schema.String.pipe(
    Schema.pattern(/^(0|[1-9]\d{0,8})$/, { message: () => "must be an integer written in decimal digits" }),
    Schema.compose(Schema.NumberFromString),
    Schema.between(min, max)
  )

/** `limit` of a list: 1 to 100, default 20. */
export const Limit = Schema.optionalWith(
  DecimalInteger(1, 100).annotations({
    description: "Page size, 1 to 100 (default 20)."
  }),
  { default: () => 20 }
)

/** A list page: the items under the plural name, and the id to pass as `starting_after` for the next page. */
export const ListOf = <K extends string, S extends Schema.Schema.Any>(name: K, item: S) =>
  Schema.Struct({
    [name]: Schema.Array(item),
    next_cursor: Schema.NullOr(Schema.String).annotations({
      description: "Pass as `starting_after` to read the next page; null on the last page."
    })
  } as { [P in K]: Schema.Array$<S> } & { next_cursor: Schema.NullOr<typeof Schema.String> })

/** The wire id of a stored UUID (the database keeps the bare `uuid`). */
export const toId = <P extends IdPrefix>(prefix: P, uuid: string) =>
  `${prefix}_${uuid}` as Schema.Schema.Type<ReturnType<typeof Id<P>>>

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
