import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { WRONG_CHECKSUM } from "../../../services/domain/Address"
import { type DevnetSettings, fund } from "../../../src/sandbox/devnet"

// A sandbox whose chain is never reached: the address is refused before anything is sent.
const settings: DevnetSettings = {
  serviceEnv: "sandbox",
  chainRpcUrl: Option.some("http://127.0.0.1:9"),
  chainRpcUrls: Option.none(),
  tokenAddress: Option.some("0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238")
}

const refusal = (address: string | undefined) =>
  Effect.map(Effect.flip(Effect.tryPromise(() => fund(settings, address, "1.000000"))), (e) =>
    e.error instanceof Error ? e.error.message : String(e.error)
  )

describe("devnet fund --address (the sandbox faucet, from the CLI and the checkout)", () => {
  it.effect("refuses a mixed-case address with a wrong EIP-55 checksum by the API's rule", () =>
    Effect.gen(function* () {
      assert.strictEqual(
        yield* refusal("0x52908400098527886E0F7030069857D2E4169Ee7"),
        `--address ${WRONG_CHECKSUM}`
      )
      assert.match(yield* refusal("0x1234"), /^--address must be a 0x-prefixed 20-byte hex address$/)
      assert.match(yield* refusal(undefined), /^--address /)
    })
  )
})
