import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, assert, beforeEach, describe, it } from "@effect/vitest"
import { excerptOf } from "../../../src/cli/ListenCommand"
import { keepListener, keptListener, stateFile } from "../../../src/cli/ListenState"

// What `deposits listen` keeps between runs (decision 0091), and how it prints a failed local answer's body.

describe("listen's state file", () => {
  const before = process.env.XDG_CONFIG_HOME
  let home = ""
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "deposits-state-"))
    process.env.XDG_CONFIG_HOME = home
  })
  afterEach(() => {
    if (before === undefined) delete process.env.XDG_CONFIG_HOME
    else process.env.XDG_CONFIG_HOME = before
  })

  it("keeps a listener per API URL and account, in a file only its owner reads", () => {
    assert.strictEqual(stateFile(), join(home, "deposits", "listen.json"))
    assert.isUndefined(keptListener("http://localhost:8181", "acct_a"))
    keepListener("http://localhost:8181", "acct_a", { listener_id: "wh_1", secret: "whsec_one" })
    keepListener("http://localhost:8181", "acct_b", { listener_id: "wh_2", secret: "whsec_two" })
    keepListener("http://localhost:9000", "acct_a", { listener_id: "wh_3", secret: "whsec_three" })
    assert.deepStrictEqual(keptListener("http://localhost:8181", "acct_a"), {
      listener_id: "wh_1",
      secret: "whsec_one"
    })
    assert.strictEqual(keptListener("http://localhost:8181", "acct_b")?.secret, "whsec_two")
    assert.strictEqual(keptListener("http://localhost:9000", "acct_a")?.secret, "whsec_three")
    // A rotation replaces the entry in place.
    keepListener("http://localhost:8181", "acct_a", { listener_id: "wh_1", secret: "whsec_new" })
    assert.strictEqual(keptListener("http://localhost:8181", "acct_a")?.secret, "whsec_new")
    assert.strictEqual(statSync(stateFile()).mode & 0o777, 0o600)
    assert.strictEqual(statSync(join(home, "deposits")).mode & 0o077, 0)
    assert.strictEqual(Object.keys(JSON.parse(readFileSync(stateFile(), "utf8"))).length, 3)
  })

  it("treats an unreadable file as none", () => {
    keepListener("http://localhost:8181", "acct_a", { listener_id: "wh_1", secret: "whsec_one" })
    writeFileSync(stateFile(), "{not json")
    assert.isUndefined(keptListener("http://localhost:8181", "acct_a"))
  })
})

describe("a failed local answer's body on the CLI's line", () => {
  it("is quoted on one line with control characters escaped, and cut at 200 characters", () => {
    assert.strictEqual(excerptOf("boom"), '"boom"')
    assert.strictEqual(excerptOf('line one\nline\ttwo\u0007 "q"'), '"line one\\nline\\ttwo\\u0007 \\"q\\""')
    const long = excerptOf("x".repeat(500))
    assert.strictEqual(long, `"${"x".repeat(200)}"…`)
    assert.notInclude(excerptOf("a\r\nb"), "\n")
  })
})
