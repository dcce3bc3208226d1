import { ConfigProvider, Effect, Exit, type Layer, Redacted } from "effect"
import { getAddress, isAddress } from "viem"
import { english, generateMnemonic, mnemonicToAccount } from "viem/accounts"
import { describe, expect, it } from "@effect/vitest"
import {
  KeyVault,
  type KeyVaultShape,
  PUBLISHED_TEST_MNEMONICS,
  SANDBOX_DEPOSIT_MNEMONIC
} from "../../../services/chain/KeyVault"

const ANVIL_MNEMONIC = "test test test test test test test test test test test junk"

const vaultFrom = (layer: Layer.Layer<KeyVault, unknown>, env: Record<string, string> = {}) =>
  Effect.runSyncExit(
    KeyVault.pipe(
      Effect.provide(layer),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))
    )
  )

const vault = (mnemonic: string): KeyVaultShape => {
  const exit = vaultFrom(KeyVault.Test(Redacted.make(mnemonic)))
  if (Exit.isFailure(exit)) throw new Error(`no vault: ${exit.cause}`)
  return exit.value
}

describe("KeyVault", () => {
  it("derives the standard BIP-44 Ethereum path m/44'/60'/0'/0/index", () => {
    const v = vault(ANVIL_MNEMONIC)
    // anvil's well-known dev accounts 0 and 1 come from the same mnemonic and path.
    expect(v.depositAddress(0)).toBe("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266")
    expect(v.depositAddress(1)).toBe("0x70997970C51812dc3A010C7d01b50e0d17dc79C8")
    for (const index of [2, 17, 123_456]) {
      expect(v.depositAddress(index)).toBe(mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: index }).address)
    }
  })

  it("is deterministic across vault instances and distinct per index", () => {
    const a = vault(SANDBOX_DEPOSIT_MNEMONIC)
    const b = vault(SANDBOX_DEPOSIT_MNEMONIC)
    const addresses = Array.from({ length: 200 }, (_, i) => a.depositAddress(i))
    expect(addresses).toEqual(Array.from({ length: 200 }, (_, i) => b.depositAddress(i)))
    expect(new Set(addresses.map((x) => x.toLowerCase())).size).toBe(200)
    expect(a.depositAccount(5).address).toBe(a.depositAddress(5))
    expect(vault(ANVIL_MNEMONIC).depositAddress(0)).not.toBe(a.depositAddress(0))
  })

  it("returns EIP-55 checksummed addresses", () => {
    const v = vault(SANDBOX_DEPOSIT_MNEMONIC)
    for (let i = 0; i < 20; i++) {
      const address = v.depositAddress(i)
      expect(isAddress(address, { strict: true })).toBe(true)
      expect(address).toBe(getAddress(address.toLowerCase()))
      expect(address).not.toBe(address.toLowerCase())
    }
  })

  // The seed (PBKDF2) is derived once per vault, not per address: measured against the same derivations made the
  // naive way in the same run (each one re-running PBKDF2), so the machine's speed on the day cancels out.
  it("derives its seed once: fresh addresses cost a fraction of deriving each from the mnemonic", () => {
    const count = 10
    const started = performance.now()
    const v = vault(SANDBOX_DEPOSIT_MNEMONIC)
    for (let i = 1_000; i < 1_000 + count; i++) v.depositAddress(i)
    const vaultMs = performance.now() - started
    const naiveStarted = performance.now()
    for (let i = 1_000; i < 1_000 + count; i++)
      mnemonicToAccount(SANDBOX_DEPOSIT_MNEMONIC, { addressIndex: i })
    const naiveMs = performance.now() - naiveStarted
    console.log(
      `KeyVault: seed + ${count} derivations ${vaultMs.toFixed(0)} ms, naive ${naiveMs.toFixed(0)} ms`
    )
    expect(vaultMs / naiveMs).toBeLessThan(0.6)
  })

  it("refuses an index outside the non-hardened BIP-32 range", () => {
    const v = vault(SANDBOX_DEPOSIT_MNEMONIC)
    for (const bad of [-1, 1.5, 2 ** 31, Number.NaN]) expect(() => v.depositAddress(bad)).toThrow(RangeError)
  })

  it("refuses a mnemonic with a wrong word or checksum", () => {
    for (const bad of [
      ANVIL_MNEMONIC.replace("junk", "test"),
      ANVIL_MNEMONIC.replace("junk", "junkk"),
      "test test test"
    ]) {
      const exit = vaultFrom(KeyVault.Test(Redacted.make(bad)))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(String(exit)).toContain("KeyVaultError")
    }
  })

  it("layer: the sandbox default, a configured seed, and no default in production", () => {
    const sandbox = vaultFrom(KeyVault.Default)
    expect(Exit.isSuccess(sandbox) && sandbox.value.depositAddress(0)).toBe(
      vault(SANDBOX_DEPOSIT_MNEMONIC).depositAddress(0)
    )
    const configured = vaultFrom(KeyVault.Default, { DEPOSIT_KEY_MNEMONIC: ANVIL_MNEMONIC })
    expect(Exit.isSuccess(configured) && configured.value.depositAddress(0)).toBe(
      "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
    )
    const own = generateMnemonic(english)
    const production = vaultFrom(KeyVault.Default, { SERVICE_ENV: "production", DEPOSIT_KEY_MNEMONIC: own })
    expect(Exit.isSuccess(production) && production.value.depositAddress(0)).toBe(
      mnemonicToAccount(own, { addressIndex: 0 }).address
    )
    const missing = vaultFrom(KeyVault.Default, { SERVICE_ENV: "production" })
    expect(Exit.isFailure(missing)).toBe(true)
    expect(String(missing)).toContain("DEPOSIT_KEY_MNEMONIC: must be set when SERVICE_ENV=production")
  })

  it.each(PUBLISHED_TEST_MNEMONICS)(
    "refuses the published mnemonic %s in production, in any spacing or case",
    (m) => {
      const refused = vaultFrom(KeyVault.Default, {
        SERVICE_ENV: "production",
        DEPOSIT_KEY_MNEMONIC: `  ${m.toUpperCase().replaceAll(" ", "   ")} `
      })
      expect(Exit.isFailure(refused)).toBe(true)
      expect(String(refused)).toContain("a published test mnemonic is refused")
    }
  )
})
