import { ParseResult, Schema } from "effect"
import { getAddress } from "viem"

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
