import { Option, Redacted } from "effect"
import { toHex } from "viem"
import { anvilDevAccount, DEV_ACCOUNT } from "../infra/chain/Anvil"
import type { AppConfigShape } from "./Config"

/**
 * The sandbox pays gas from the local chain's dev account 1 when no treasury key is set: a development
 * convenience chosen at the sandbox's start-up, so neither the production settings nor the treasury know a
 * development account.
 */
export const withSandboxTreasury = (config: AppConfigShape): AppConfigShape =>
  config.serviceEnv === "sandbox" && Option.isNone(config.treasuryPrivateKey)
    ? {
        ...config,
        treasuryPrivateKey: Option.some(
          Redacted.make(toHex(anvilDevAccount(DEV_ACCOUNT.treasury).getHdKey().privateKey!))
        )
      }
    : config
