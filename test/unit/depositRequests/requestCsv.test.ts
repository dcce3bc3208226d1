import { describe, expect, it } from "vitest"
import { csv, csvField } from "../../../services/depositRequests/RequestCsv"

describe("the export's CSV", () => {
  it("quotes a field with a comma, quote or line break, doubling quotes", () => {
    expect(csvField("plain")).toBe("plain")
    expect(csvField("a,b")).toBe('"a,b"')
    expect(csvField('say "hi"')).toBe('"say ""hi"""')
    expect(csvField("two\nlines")).toBe('"two\nlines"')
    expect(csvField('{"a":1}')).toBe('"{""a"":1}"')
  })
  it("keeps a spreadsheet from running a field as a formula, but leaves numbers alone", () => {
    expect(csvField("=HYPERLINK(1)")).toBe("'=HYPERLINK(1)")
    expect(csvField("@cmd")).toBe("'@cmd")
    expect(csvField("-1.5")).toBe("-1.5")
    expect(csvField("+1 555")).toBe("'+1 555")
    expect(csvField("-2+3")).toBe("'-2+3")
    expect(csvField("\tx")).toBe("'\tx")
    expect(csvField("\r=1")).toBe('"\'\r=1"')
  })
  it("ends every line with CRLF, the header first", () => {
    expect(csv(["a", "b"], [["1", "x,y"]])).toBe('a,b\r\n1,"x,y"\r\n')
  })
})
