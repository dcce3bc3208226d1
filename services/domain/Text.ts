import { Schema } from "effect"

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

/**
 * The same rule as a JSON Schema pattern, for the published document: no C0 control but tab, LF and CR, and no
 * lone surrogate (JSON Schema patterns are ECMA-262 with Unicode semantics, where a surrogate pair is one code
 * point and only a lone half falls in D800–DFFF).
 */
export const TEXT_PATTERN = "^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\uD800-\\uDFFF]*$"

/**
 * UTF-8 text from a caller: no C0 control characters except tab, CR and LF (which are preserved). No identifier: a
 * length bound added to it must sit beside `type: "string"` in the document, not beside a `$ref`.
 */
export const Text = Schema.String.pipe(
  Schema.filter((s) => textProblem(s) ?? true, { jsonSchema: { pattern: TEXT_PATTERN } }),
  Schema.annotations({
    description: "UTF-8 text without C0 control characters (tab, CR and LF are allowed)"
  })
)
export const hasForbiddenControl = (s: string) => forbiddenControl.test(s)
