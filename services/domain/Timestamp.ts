import { ParseResult, Schema } from "effect"

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
