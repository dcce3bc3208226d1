import { Effect, Either } from "effect"
import { withRunningChain } from "../../infra/chain/EmbeddedChain"
import { uuidFromId } from "../../services/domain/PrefixedId"
import { loadConfig } from "../app/Config"
import {
  attestWallet,
  controlToken,
  fund,
  NO_WALLET_YET,
  type PayMode,
  payRequest,
  payTargetOf,
  setTreasuryGas,
  type TokenControl
} from "../sandbox/devnet"
import { CliDatabase } from "./Database"
import { CliError, type CliValues, print } from "./Output"
import { attempt, runCommand } from "./Run"
import { serviceUrlOf } from "./ServiceUrl"

/** The sandbox's devnet commands: they talk to the local chain, and `attest` to the running service. */
export type DevnetCommand =
  | "devnet fund"
  | "devnet attest"
  | "devnet pay"
  | "devnet treasury-gas"
  | "devnet blacklist"
  | "devnet unblacklist"
  | "devnet pause"
  | "devnet unpause"

const requestOf = (values: CliValues) => {
  const uuid = uuidFromId("dr", values.request ?? "")
  return uuid === undefined
    ? Effect.fail(new CliError("--request must be a dr_ id"))
    : Effect.succeed({ uuid, id: values.request as string })
}

const modes: ReadonlyArray<PayMode> = ["exact", "partial", "over", "late", "stranger"]

const program = (command: DevnetCommand, values: CliValues) =>
  Effect.gen(function* () {
    // Without CHAIN_RPC_URL the commands use the embedded chain of a running `npm start` on this DATA_DIR.
    const config = withRunningChain(yield* loadConfig())
    const json = values.json === true
    switch (command) {
      case "devnet fund":
        return print(json, yield* attempt(() => fund(config, values.address, values.amount)))
      case "devnet treasury-gas":
        return print(json, yield* attempt(() => setTreasuryGas(config, values.eth)))
      case "devnet blacklist":
      case "devnet unblacklist":
      case "devnet pause":
      case "devnet unpause": {
        const control = command.slice("devnet ".length) as TokenControl
        return print(json, yield* attempt(() => controlToken(config, control, values.address)))
      }
      case "devnet attest": {
        const { id } = yield* requestOf(values)
        const url = yield* serviceUrlOf(values.url)
        return print(json, yield* attempt(() => attestWallet(config, url, id)))
      }
      case "devnet pay": {
        const { uuid, id } = yield* requestOf(values)
        const mode = modes.find((m) => m === values.mode)
        if (mode === undefined)
          return yield* Effect.fail(new CliError(`--mode must be one of ${modes.join(", ")}`))
        const paid = yield* Effect.gen(function* () {
          let target = yield* payTargetOf(uuid)
          let attested: string | null = null
          // A new request waits for its payer: attest the sandbox payer first, so `devnet pay` works alone.
          if (Either.isLeft(target) && target.left === NO_WALLET_YET) {
            const url = yield* serviceUrlOf(values.url)
            attested = (yield* attempt(() => attestWallet(config, url, id))).wallet
            target = yield* payTargetOf(uuid)
          }
          if (Either.isLeft(target)) return yield* Effect.fail(new CliError(`${target.left} (${id})`))
          const right = target.right
          const sent = yield* attempt(() => payRequest(config, right, mode, values.amount))
          return { ...sent, attested_wallet: attested }
        }).pipe(Effect.provide(CliDatabase), Effect.scoped)
        return print(json, paid)
      }
    }
  })

export const run = (command: DevnetCommand, values: CliValues) => runCommand(program(command, values))
