import fc from "fast-check"
import { describe, expect, it } from "@effect/vitest"
import { formatMoney, formatMoneyIn, networkName } from "../../../src/web/checkout/page/amounts"
import {
  chooseLanguage,
  fill,
  LANGUAGES,
  type MessageId,
  messages,
  placeholders,
  storedLanguage
} from "../../../src/web/checkout/page/messages"
import { checkoutHtml } from "../../../src/web/checkout/CheckoutPage"

/**
 * Words a translation may share with English on purpose (a loanword, a brand, the same word in both languages).
 * Anything else equal to English is an untranslated string.
 */
const SAME_AS_ENGLISH: Readonly<Record<string, ReadonlyArray<MessageId>>> = {
  es: [],
  "pt-BR": [],
  fr: [],
  de: [],
  tr: [],
  ja: [],
  "zh-CN": []
}

const english = messages.en
const ids = Object.keys(english).sort() as Array<MessageId>

/** Issue 48 item 8: the checkout's words in eight languages, all from one catalogue with English the reference. */
describe("checkout messages", () => {
  it("speaks at least the eight languages the issue names", () => {
    expect(LANGUAGES.map((l) => l.tag)).toEqual(["en", "es", "pt-BR", "fr", "de", "tr", "ja", "zh-CN"])
    expect(Object.keys(messages).sort()).toEqual(LANGUAGES.map((l) => l.tag).sort())
  })

  for (const { tag } of LANGUAGES) {
    it(`${tag}: exactly English's keys, none empty, the same placeholders, nothing left in English`, () => {
      const catalogue = messages[tag]
      expect(Object.keys(catalogue).sort()).toEqual(ids)
      for (const id of ids) {
        const text = catalogue[id]
        expect(typeof text, id).toBe("string")
        expect(text.trim(), id).not.toBe("")
        expect(placeholders(text), `${tag} ${id}`).toEqual(placeholders(english[id]))
        // Braces only as placeholders: a typo such as `{amount` would be shown to the payer as is.
        expect(text.replace(/\{\w+\}/g, ""), `${tag} ${id}`).not.toMatch(/[{}]/)
      }
      if (tag !== "en") {
        const untranslated = ids.filter(
          (id) => catalogue[id] === english[id] && !(SAME_AS_ENGLISH[tag] ?? []).includes(id)
        )
        expect(untranslated, tag).toEqual([])
      }
    })
  }

  it("chooses from the browser's preferences, by language, in their order", () => {
    expect(chooseLanguage(["de-DE", "en-US"])).toBe("de")
    expect(chooseLanguage(["es-MX"])).toBe("es")
    expect(chooseLanguage(["pt-PT"])).toBe("pt-BR")
    expect(chooseLanguage(["pt-br"])).toBe("pt-BR")
    expect(chooseLanguage(["zh"])).toBe("zh-CN")
    expect(chooseLanguage(["zh-Hans-SG"])).toBe("zh-CN")
    // Traditional script is not answered in Simplified: the next preference wins.
    expect(chooseLanguage(["zh-TW", "ja"])).toBe("ja")
    expect(chooseLanguage(["zh-Hant-HK"])).toBe("en")
    expect(chooseLanguage(["nl-NL", "fr-CA"])).toBe("fr")
    expect(chooseLanguage(["ko-KR"])).toBe("en")
    expect(chooseLanguage([])).toBe("en")
    expect(storedLanguage("tr")).toBe("tr")
    expect(storedLanguage("xx")).toBeUndefined()
    expect(storedLanguage(null)).toBeUndefined()
  })

  it("fills placeholders and leaves unknown ones visible", () => {
    expect(fill("Send {amount} on {network}", { amount: "1.00 USDC", network: "Monad" })).toBe(
      "Send 1.00 USDC on Monad"
    )
    expect(fill("{missing}!", {})).toBe("{missing}!")
  })

  it("writes money in each locale exactly: the same digits as the English reference, the locale's separators", () => {
    expect(formatMoneyIn("de-DE", 1_234_567_891_234n)).toBe("1.234.567,891234")
    expect(formatMoneyIn("pt-BR", 4_250_000n)).toBe("4,25")
    expect(formatMoneyIn("en-US", -1_500_000n)).toBe("-1.50")
    expect(formatMoneyIn("ja", 1n)).toBe("0.000001")
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 24n), max: 10n ** 24n }), (units) => {
        expect(formatMoneyIn("en-US", units)).toBe(formatMoney(units))
        for (const { tag } of LANGUAGES) {
          // Back to base units from the locale's own writing: digits only, the last separator the decimal one.
          const written = formatMoneyIn(tag, units)
          const negative = /[-−]/.test(written)
          const digits = written.replace(/[^0-9]/g, "")
          const decimals = (written.split(/[.,]/).pop() ?? "").replace(/[^0-9]/g, "")
          const back = BigInt(digits) * 10n ** BigInt(6 - decimals.length)
          expect(negative ? -back : back, `${tag} ${written}`).toBe(units)
        }
      })
    )
  })

  it("names networks in the page's words", () => {
    const german = (id: MessageId, params: Record<string, string>) => fill(messages.de[id], params)
    expect(networkName(10143, true, german)).toBe("das Testnetzwerk der Testumgebung (Chain 10143)")
    expect(networkName(143, false, german)).toBe("Monad (Chain 143)")
  })

  it("writes the page's fixed words in English, each marked with its id, and the picker with every language", () => {
    for (const sandbox of [false, true]) {
      const html = checkoutHtml(sandbox)
      for (const [, id, text] of html.matchAll(/data-i18n="([\w.]+)">([^<]*)</g))
        expect(text, id).toBe(english[id as MessageId].replace(/&/g, "&amp;"))
      for (const { tag, name } of LANGUAGES)
        expect(html).toContain(`<option value="${tag}" lang="${tag}">${name}`)
      expect(html.includes('id="sandbox-badge"')).toBe(sandbox)
      // The badge comes before anything else on the page.
      if (sandbox) expect(html.indexOf("sandbox-badge")).toBeLessThan(html.indexOf("<main>"))
      expect(html).not.toMatch(/<script>|<script [^>]*>[^<]/)
      // No word of the page outside the catalogue: with the marked words, the title and the picker's names
      // taken out, no text is left between the tags.
      const unmarked = html
        .replace(/<title>[^<]*<\/title>/, "")
        .replace(/(data-i18n="[\w.]+">)[^<]*/g, "$1")
        .replace(/<option [^>]*>[^<]*/g, "")
        .replace(/<strong id="[\w-]+"><\/strong>/g, "")
      const between = [...unmarked.matchAll(/>([^<]*)</g)]
        .map((m) => m[1]?.trim())
        .filter((t) => t !== "" && t !== "…")
      const pay = fill(english["pay.send"], { amount: "", network: "" })
      expect(between.filter((t) => !pay.includes(t ?? ""))).toEqual([])
    }
  })
})
