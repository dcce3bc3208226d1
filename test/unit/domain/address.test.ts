import fc from "fast-check"
import { assert, describe, it } from "@effect/vitest"
import { Either, ParseResult, Schema } from "effect"
import { getAddress } from "viem"
import { Address, addressRefusal, NOT_AN_ADDRESS, WRONG_CHECKSUM } from "../../../services/domain/Address"

/** The repository's example address, EIP-55 checksummed. */
const CHECKSUMMED = "0x52908400098527886E0F7030069857D2E4169EE7"
/** The same with one letter's case flipped: the last `E` lowered, a typo a re-checksum would silently repair. */
const TYPO = "0x52908400098527886E0F7030069857D2E4169Ee7"

const decode = Schema.decodeUnknownEither(Address)

/** The one message a refused decode gives, as the error envelope reads it. */
const refusalOf = (input: unknown) =>
  Either.match(decode(input), {
    onLeft: (e) => ParseResult.ArrayFormatter.formatErrorSync(e).map((i) => i.message),
    onRight: (a) => assert.fail(`took ${String(input)} as ${a}`)
  })

const hexAddress = fc
  .uint8Array({ minLength: 20, maxLength: 20 })
  .map((bytes) => getAddress(`0x${Buffer.from(bytes).toString("hex")}`))

describe("Address", () => {
  it("takes an EIP-55 checksummed address as it is", () => {
    assert.deepStrictEqual(decode(CHECKSUMMED), Either.right(CHECKSUMMED))
  })

  it("takes all lower case and all upper case (no checksum to check) and answers EIP-55", () => {
    assert.deepStrictEqual(decode(CHECKSUMMED.toLowerCase()), Either.right(CHECKSUMMED))
    assert.deepStrictEqual(decode(`0x${CHECKSUMMED.slice(2).toUpperCase()}`), Either.right(CHECKSUMMED))
  })

  it("refuses a mixed-case address whose checksum is wrong, saying so, instead of re-checksumming it", () => {
    // The old rule lowered and re-checksummed anything: the typo came out as the valid address.
    assert.strictEqual(getAddress(TYPO.toLowerCase()), CHECKSUMMED)
    assert.deepStrictEqual(refusalOf(TYPO), [WRONG_CHECKSUM])
    assert.match(WRONG_CHECKSUM, /EIP-55 checksum/)
    assert.deepStrictEqual(refusalOf("0x52908400098527886e0F7030069857D2E4169EE7"), [WRONG_CHECKSUM])
    // The example's letters are all upper case, so a digit typo in it spells another all-upper address: no
    // checksum to check there (the spec takes any one-case spelling), only mixed case carries one.
    assert.deepStrictEqual(
      decode("0x52908400098527886E0F7030069857D2E4169EE8"),
      Either.right(getAddress("0x52908400098527886e0f7030069857d2e4169ee8"))
    )
  })

  it("refuses what is no address at all with the format message", () => {
    for (const input of [
      "0x1234",
      `0X${CHECKSUMMED.slice(2)}`,
      CHECKSUMMED.slice(2),
      `${CHECKSUMMED}00`,
      `0x${"g".repeat(40)}`,
      ` ${CHECKSUMMED}`,
      ""
    ])
      assert.deepStrictEqual(refusalOf(input), [NOT_AN_ADDRESS], input)
  })

  it("names the field in a struct, as the API's param", () => {
    const issues = Either.match(
      Schema.decodeUnknownEither(Schema.Struct({ address: Address }))({ address: TYPO }),
      {
        onLeft: (e) => ParseResult.ArrayFormatter.formatErrorSync(e),
        onRight: () => assert.fail("took the typo")
      }
    )
    assert.deepStrictEqual(
      issues.map((i) => [i.path.join("."), i.message]),
      [["address", WRONG_CHECKSUM]]
    )
  })

  it("encodes EIP-55", () => {
    assert.strictEqual(Schema.encodeSync(Address)(CHECKSUMMED.toLowerCase()), CHECKSUMMED)
  })

  it("for any address: every one-case spelling and the checksum are taken, every one-letter case flip refused", () => {
    fc.assert(
      fc.property(hexAddress, fc.nat(), (address, pick) => {
        for (const spelling of [address, address.toLowerCase(), `0x${address.slice(2).toUpperCase()}`]) {
          assert.strictEqual(addressRefusal(spelling), undefined)
          assert.deepStrictEqual(decode(spelling), Either.right(address))
        }
        const letters = [...address.slice(2)].flatMap((c, i) => (/[a-fA-F]/.test(c) ? [i + 2] : []))
        // An address with one letter has no other mixed-case spelling to flip to.
        if (letters.length < 2) return
        const at = letters[pick % letters.length]!
        const c = address[at]!
        const flipped = `${address.slice(0, at)}${c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()}${address.slice(at + 1)}`
        const digits = flipped.slice(2)
        // Flipping the one letter that differs from an otherwise one-case address lands on a one-case spelling.
        if (digits === digits.toLowerCase() || digits === digits.toUpperCase()) return
        assert.strictEqual(addressRefusal(flipped), WRONG_CHECKSUM)
        assert.isTrue(Either.isLeft(decode(flipped)))
      }),
      { numRuns: 500 }
    )
  })
})
