import { createHash, pbkdf2Sync } from "node:crypto"
import { Config, ConfigError, Data, Effect, Either, Layer, Option, Redacted } from "effect"
import { type Address, getAddress } from "viem"
import { english, HDKey, type HDAccount, hdKeyToAccount } from "viem/accounts"
import type { ServiceEnv } from "../domain/Environment"
import { serviceEnv } from "../platform/Settings"

/**
 * The deposit keys: one HD account per deposit request (`m/44'/60'/0'/0/{index}`), all under one seed.
 *
 * Sandbox default (SERVICE_ENV=sandbox with no DEPOSIT_KEY_MNEMONIC): the published BIP-39 test vector
 * `SANDBOX_DEPOSIT_MNEMONIC`. Anyone can derive those keys, which is the point on a local devnet (a developer can
 * inspect and sign for any deposit address) and why production refuses to start without its own seed.
 * It is deliberately not anvil's dev mnemonic, so no deposit address is also a gas-funded dev account.
 */
export const SANDBOX_DEPOSIT_MNEMONIC =
  "legal winner thank year wave sausage worth useful legal winner thank yellow"

/** The seed is missing or is not a valid BIP-39 English mnemonic. */
export class KeyVaultError extends Data.TaggedError("KeyVaultError")<{ readonly message: string }> {}

export interface KeyVaultShape {
  /** The signing account of deposit address `index`; the treasury uses it to sign EIP-3009 authorizations. */
  readonly depositAccount: (index: number) => HDAccount
  /** The EIP-55 address of deposit address `index`. */
  readonly depositAddress: (index: number) => Address
}

/**
 * The vault as a service: DEPOSIT_KEY_MNEMONIC, or the sandbox mnemonic when SERVICE_ENV is sandbox (the default).
 * Its methods are plain functions, not effects: a derivation is pure and synchronous, and its callers use it inside
 * their own steps.
 */
export class KeyVault extends Effect.Service<KeyVault>()("deposits/KeyVault", {
  effect: Effect.gen(function* () {
    const { depositKeyMnemonic } = yield* depositKeySettings
    return yield* makeKeyVaultEffect(
      Option.getOrElse(depositKeyMnemonic, () => Redacted.make(SANDBOX_DEPOSIT_MNEMONIC))
    )
  })
}) {
  /** The vault over a given mnemonic instead of the settings (tests: a fresh one, a malformed one). */
  static readonly Test = (mnemonic: Redacted.Redacted<string>): Layer.Layer<KeyVault, KeyVaultError> =>
    Layer.effect(KeyVault, Effect.map(makeKeyVaultEffect(mnemonic), KeyVault.make))
}

/**
 * Mnemonics published in tools' documentation and test vectors: anyone can derive their keys, so production
 * refuses them (anvil's and Hardhat's, Ganache's, Truffle's, the BIP-39 test vectors, the sandbox's own).
 */
export const PUBLISHED_TEST_MNEMONICS: ReadonlyArray<string> = [
  "test test test test test test test test test test test junk",
  "myth like bonus scare over problem client lizard pioneer submit female collect",
  "candy maple cake sugar pudding cream honey rich smooth crumble sweet treat",
  "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about",
  "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon art",
  "zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo wrong",
  SANDBOX_DEPOSIT_MNEMONIC
]

// Compared as words (any case or spacing); whether it is a valid mnemonic at all is the vault's own check.
const isPublished = (mnemonic: Redacted.Redacted<string>) =>
  PUBLISHED_TEST_MNEMONICS.includes(
    Redacted.value(mnemonic).normalize("NFKD").trim().toLowerCase().split(/\s+/).join(" ")
  )

/** `DEPOSIT_KEY_MNEMONIC` as set (unset: the sandbox's published one, refused in production). */
export const depositKeyMnemonic = Config.option(Config.redacted("DEPOSIT_KEY_MNEMONIC"))

/** Why this seed cannot serve this environment, or undefined when it can. */
export const depositKeyRefusal = (
  env: ServiceEnv,
  mnemonic: Option.Option<Redacted.Redacted<string>>
): string | undefined =>
  env !== "production"
    ? undefined
    : Option.isNone(mnemonic)
      ? "DEPOSIT_KEY_MNEMONIC: must be set when SERVICE_ENV=production"
      : isPublished(mnemonic.value)
        ? "DEPOSIT_KEY_MNEMONIC: a published test mnemonic is refused when SERVICE_ENV=production (anyone can derive its keys)"
        : undefined

/** The vault's settings: the seed, checked against the environment. */
export const depositKeySettings = Config.all({ depositKeyMnemonic, serviceEnv }).pipe(
  Config.mapOrFail((c) => {
    const refusal = depositKeyRefusal(c.serviceEnv, c.depositKeyMnemonic)
    return refusal === undefined ? Either.right(c) : Either.left(ConfigError.InvalidData([], refusal))
  })
)

const makeKeyVaultEffect = (mnemonic: Redacted.Redacted<string>) =>
  Effect.try({
    try: () => makeKeyVault(mnemonic),
    catch: (cause) =>
      cause instanceof KeyVaultError
        ? cause
        : new KeyVaultError({ message: `cannot derive the HD root: ${cause}` })
  })

// BIP-32 non-hardened child indexes.
const MAX_INDEX = 0x7fff_ffff

/**
 * Builds the vault. PBKDF2 (the slow part, which viem's mnemonicToAccount reruns each call) runs once here; each
 * address then costs one path derivation from the root. Accounts are cached: a request's index never changes its key.
 */
export const makeKeyVault = (mnemonic: Redacted.Redacted<string>): KeyVaultShape => {
  const root = hdRootFromMnemonic(Redacted.value(mnemonic))
  const cache = new Map<number, HDAccount>()
  const depositAccount = (index: number): HDAccount => {
    if (!Number.isInteger(index) || index < 0 || index > MAX_INDEX) {
      throw new RangeError(`deposit key index must be an integer in [0, ${MAX_INDEX}], got ${index}`)
    }
    let account = cache.get(index)
    if (account === undefined) {
      account = hdKeyToAccount(root, { addressIndex: index })
      cache.set(index, account)
    }
    return account
  }
  return { depositAccount, depositAddress: (index) => getAddress(depositAccount(index).address) }
}

/** The BIP-32 root of a BIP-39 mnemonic (no passphrase), after checking its words and checksum. */
export const hdRootFromMnemonic = (mnemonic: string): HDKey => {
  const normalized = normalizeMnemonic(mnemonic)
  // BIP-39 seed: PBKDF2-HMAC-SHA512, 2048 rounds, salt "mnemonic" + passphrase (empty).
  const seed = pbkdf2Sync(
    Buffer.from(normalized, "utf8"),
    Buffer.from("mnemonic", "utf8"),
    2048,
    64,
    "sha512"
  )
  return HDKey.fromMasterSeed(seed)
}

const wordIndex = new Map(english.map((word, i) => [word, i]))

// A mistyped word must not silently yield a different set of deposit addresses, so the checksum is verified.
const normalizeMnemonic = (mnemonic: string): string => {
  const words = mnemonic.normalize("NFKD").trim().toLowerCase().split(/\s+/)
  if (![12, 15, 18, 21, 24].includes(words.length)) {
    throw new KeyVaultError({
      message: `the mnemonic must have 12, 15, 18, 21 or 24 words, not ${words.length}`
    })
  }
  let bits = ""
  for (const [position, word] of words.entries()) {
    const index = wordIndex.get(word)
    if (index === undefined)
      throw new KeyVaultError({
        message: `word ${position + 1} of the mnemonic is not a BIP-39 English word`
      })
    bits += index.toString(2).padStart(11, "0")
  }
  const checksumBits = words.length / 3
  const entropyBits = bits.slice(0, bits.length - checksumBits)
  const entropy = Buffer.from(entropyBits.match(/.{8}/g)!.map((byte) => Number.parseInt(byte, 2)))
  const hash = createHash("sha256").update(entropy).digest()
  const expected = Array.from(hash, (byte) => byte.toString(2).padStart(8, "0"))
    .join("")
    .slice(0, checksumBits)
  if (expected !== bits.slice(-checksumBits))
    throw new KeyVaultError({ message: "the mnemonic's checksum does not match" })
  return words.join(" ")
}
