import { ConfigProvider, Effect, Either, Option } from "effect"
import { describe, expect, it } from "vitest"
import { anvilArgs } from "../../../infra/chain/Anvil"
import { embeddedAnvilOptions, type EmbeddedChainConfig } from "../../../infra/chain/EmbeddedChain"
import { defaultSettings, loadConfig, settingsMap } from "../../../src/app/Config"

const load = (settings: Record<string, string>) =>
  Effect.runPromise(Effect.either(loadConfig(ConfigProvider.fromMap(new Map(Object.entries(settings))))))

const sandbox = (chainBlockMs: number): EmbeddedChainConfig => ({
  dataDir: "/tmp/embedded-chain-test",
  serviceEnv: "sandbox",
  chainRpcUrl: Option.none(),
  chainRpcUrls: Option.none(),
  tokenAddress: Option.none(),
  chainBlockMs
})

/** The value following a flag in anvil's arguments. */
const flag = (args: ReadonlyArray<string>, name: string) => {
  const at = args.indexOf(name)
  return at === -1 ? undefined : args[at + 1]
}

describe("CHAIN_BLOCK_MS, the embedded chain's block time", () => {
  it("is a second unless set", async () => {
    const result = await load({})
    expect(Either.isRight(result) && result.right.chainBlockMs).toBe(1000)
    expect(defaultSettings().chainBlockMs).toBe(1000)
  })

  it.each([
    ["400", 400],
    ["100", 100],
    ["60000", 60_000],
    [" 250 ", 250]
  ])("takes %j as %d ms", async (text, ms) => {
    const result = await load({ CHAIN_BLOCK_MS: text })
    expect(Either.isRight(result) && result.right.chainBlockMs).toBe(ms)
  })

  it.each(["99", "0", "60001", "-400", "0.4", "400ms", "1e3", "fast"])(
    "refuses %j in one line that names the setting and its bounds",
    async (text) => {
      const result = await load({ CHAIN_BLOCK_MS: text })
      expect(Either.isLeft(result)).toBe(true)
      if (Either.isLeft(result))
        expect(result.left).toBe(
          "invalid configuration: CHAIN_BLOCK_MS: must be whole milliseconds from 100 to 60000 (the embedded chain's block time, e.g. 400)"
        )
    }
  )

  it("reaches the layers' settings as set", () => {
    expect(settingsMap({ chainBlockMs: 400 }).get("CHAIN_BLOCK_MS")).toBe("400")
  })

  it("is handed to anvil in seconds, fractions included, with finalized 4 blocks behind", () => {
    const args = anvilArgs(8545, embeddedAnvilOptions(sandbox(400)))
    expect(flag(args, "--block-time")).toBe("0.4")
    expect(flag(args, "--slots-in-an-epoch")).toBe("2")
    expect(args).toContain("--mixed-mining")
    expect(flag(anvilArgs(8545, embeddedAnvilOptions(sandbox(1000))), "--block-time")).toBe("1")
    expect(flag(anvilArgs(8545, embeddedAnvilOptions(sandbox(100))), "--block-time")).toBe("0.1")
    expect(flag(anvilArgs(8545, { blockTime: 0.4 }), "--block-time")).toBe("0.4")
  })
})
