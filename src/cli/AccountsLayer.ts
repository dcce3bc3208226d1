import { Effect, Layer, Option } from "effect"
import { uuidFromId } from "../../services/domain/PrefixedId"
import { Accounts } from "../../services/merchants/Accounts"
import { Bus } from "../../services/platform/Bus"
import { CliDatabase } from "./Database"
import { CliError } from "./Output"

/**
 * The one-row commands: only the accounts service and the database (no chain, no bus connection, no app layer), so
 * they answer in well under a second (test/bench/cli.bench.ts).
 */
export const AccountsLive = Accounts.Default.pipe(
  Layer.provide(Bus.inProcess),
  Layer.provideMerge(CliDatabase)
)

export const accountOf = (accounts: Accounts, option: string | undefined) =>
  Effect.gen(function* () {
    const uuid = uuidFromId("acct", option ?? "")
    if (uuid === undefined) return yield* Effect.fail(new CliError("--account must be an acct_ id"))
    const account = yield* accounts.get(uuid)
    if (Option.isNone(account)) return yield* Effect.fail(new CliError(`no account ${option}`))
    return account.value
  })
