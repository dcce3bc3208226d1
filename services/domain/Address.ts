import { ParseResult, Schema } from "effect"
import { getAddress, isAddress } from "viem"

const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/

/** What a string that is no address at all is told. */
export const NOT_AN_ADDRESS = "must be a 0x-prefixed 20-byte hex address"

/** What a mixed-case address whose letter case is not its EIP-55 checksum is told. */
export const WRONG_CHECKSUM =
  "must be a valid EIP-55 checksummed address: the letter case does not match the checksum (check for a typo)"

/**
 * The one rule for every address taken from outside (bodies, query parameters, the CLI): `0x` and 40 hex digits, all
 * lower case or all upper case (no checksum to check), or mixed case spelling exactly its EIP-55 checksum, since a
 * mixed-case address with a wrong checksum is a typo that re-checksumming would silently turn into another address.
 * Undefined when the address is taken, else why not.
 */
export const addressRefusal = (s: string): string | undefined => {
  if (!HEX_ADDRESS.test(s)) return NOT_AN_ADDRESS
  const digits = s.slice(2)
  if (digits === digits.toLowerCase() || digits === digits.toUpperCase()) return undefined
  return isAddress(s, { strict: true }) ? undefined : WRONG_CHECKSUM
}

/** An address the rule took, EIP-55 checksummed. */
export const checksummed = (s: string) => getAddress(s.toLowerCase())

/** An EVM address: all lower, all upper or correctly checksummed mixed case in, EIP-55 out. */
export const Address = Schema.transformOrFail(
  Schema.String.annotations({
    description:
      "A 20-byte EVM address, 0x-prefixed. All lower case and all upper case (hex digits A–F) are accepted as they are; mixed case must match its EIP-55 checksum, or the request is refused with 400 `invalid_request` (a mixed-case typo is never silently re-checksummed into another address). Answers are EIP-55 checksummed.",
    jsonSchema: { pattern: "^0x[0-9a-fA-F]{40}$" }
  }),
  Schema.String,
  {
    strict: true,
    decode: (s, _, ast) => {
      const refusal = addressRefusal(s)
      return refusal === undefined
        ? ParseResult.succeed(checksummed(s))
        : ParseResult.fail(new ParseResult.Type(ast, s, refusal))
    },
    encode: (s) => ParseResult.succeed(checksummed(s))
  }
).annotations({ identifier: "Address" })
