import { ParseResult, Schema } from "effect"

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

/** The largest amount a deposit request may ask for: a million million USDC. */
export const MAX_AMOUNT_BASE_UNITS = 10n ** 18n

/**
 * What a requested amount may be, as a JSON Schema pattern: the wire format, above zero, at most
 * `MAX_AMOUNT_BASE_UNITS` (a power of ten, so "below it" is a count of whole digits). No look-ahead, so every
 * JSON Schema tool reads it.
 */
export const REQUESTED_AMOUNT_PATTERN = (() => {
  const maxWhole = (MAX_AMOUNT_BASE_UNITS / BASE).toString()
  if (!/^10*$/.test(maxWhole)) throw new Error("MAX_AMOUNT_BASE_UNITS must be a power of ten")
  const belowOne = "0\\.(0{5}[1-9]|0{4}[1-9]\\d|0{3}[1-9]\\d{2}|00[1-9]\\d{3}|0[1-9]\\d{4}|[1-9]\\d{5})"
  return `^(${belowOne}|[1-9]\\d{0,${maxWhole.length - 2}}\\.\\d{6}|${maxWhole}\\.0{6})$`
})()

/**
 * A requested USDC amount on the wire: a decimal string; inside, bigint base units. The decode takes the format;
 * the create refuses zero and amounts above the maximum (CreateFields.ts), as the pattern says.
 */
export const Amount = Schema.transformOrFail(
  Schema.String.annotations({
    description:
      "A USDC amount as a decimal string with exactly six fractional digits, as answers carry it (`12.500000`): above zero, at most 1000000000000.000000.",
    examples: ["25.000000"],
    jsonSchema: { pattern: REQUESTED_AMOUNT_PATTERN }
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
