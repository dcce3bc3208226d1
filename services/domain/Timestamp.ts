import { ParseResult, Schema } from "effect"

/** RFC 3339 UTC with second precision and a `Z`, the only form answers use. */
export const formatTimestamp = (date: Date): string => `${date.toISOString().slice(0, 19)}Z`

/**
 * An RFC 3339 date-time as a JSON Schema pattern that holds the calendar too (months, days in each month, February
 * 29 in leap years only, hours 00–23, no leap second), so the published document refuses exactly what the service
 * refuses. `lenient`: `t`/`z` in either case, up to nine fractional digits, and a space where an offset's `+` was
 * (a query string's unescaped `+`), as list filters take them.
 */
export const rfc3339Pattern = (lenient: boolean): string => {
  const t = lenient ? "[Tt]" : "T"
  const z = lenient ? "[Zz]" : "Z"
  const sign = lenient ? "[+\\- ]" : "[+\\-]"
  const fraction = lenient ? "(\\.\\d{1,9})?" : "(\\.\\d+)?"
  const year = "\\d{4}"
  const leapYear = "(\\d{2}(0[48]|[2468][048]|[13579][26])|([02468][048]|[13579][26])00)"
  const date =
    `(${year}-((0[13578]|1[02])-(0[1-9]|[12]\\d|3[01])|(0[469]|11)-(0[1-9]|[12]\\d|30)|02-(0[1-9]|1\\d|2[0-8]))` +
    `|${leapYear}-02-29)`
  const time = `([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d${fraction}`
  return `^${date}${t}${time}(${z}|${sign}([01]\\d|2[0-3]):[0-5]\\d)$`
}

const timestampPattern = new RegExp(rfc3339Pattern(false))

export const Timestamp = Schema.transformOrFail(
  Schema.String.annotations({
    description:
      "RFC 3339 timestamp with seconds and a zone (`Z` or an offset, fractional seconds allowed). Answers are UTC with second precision and a Z suffix.",
    examples: ["2026-11-22T12:00:00Z"],
    jsonSchema: { pattern: rfc3339Pattern(false) }
  }),
  Schema.DateFromSelf,
  {
    strict: true,
    decode: (s, _, ast) => {
      const ok = timestampPattern.test(s)
      const date = new Date(s)
      return ok && !Number.isNaN(date.getTime())
        ? ParseResult.succeed(new Date(Math.floor(date.getTime() / 1000) * 1000))
        : ParseResult.fail(new ParseResult.Type(ast, s, "must be an RFC 3339 timestamp"))
    },
    encode: (d) => ParseResult.succeed(formatTimestamp(d))
  }
).annotations({ identifier: "Timestamp" })
