import { Effect, Layer, ManagedRuntime, Option, Redacted } from "effect"
import { Bus } from "../../services/platform/Bus"
import { Accounts } from "../../services/merchants/Accounts"
import { DatabaseLive } from "../../services/platform/Database"
import { Ids } from "../../services/platform/Ids"
import { toId } from "../../services/domain/PrefixedId"
import type { ServiceEnv } from "../../services/domain/Environment"
import { settingsLayer } from "../../src/app/Config"

export interface Merchant {
  readonly accountId: string
  readonly sessionToken: string
  readonly apiKey: string
  /** Headers for a merchant call with the API key (or the session, when asked). */
  readonly headers: (via?: "api_key" | "session", extra?: Record<string, string>) => Record<string, string>
}

/** An account with a dashboard session and an API key, made through the same service the CLI uses. */
export const createMerchant = async (
  databaseUrl: string,
  options: { readonly serviceEnv?: ServiceEnv; readonly sessionTtlMs?: number } = {}
): Promise<Merchant> => {
  const serviceEnv = options.serviceEnv ?? "sandbox"
  // Long enough to outlive tests that move the service's clock forward by days.
  const sessionTtlMs = options.sessionTtlMs ?? 30 * 24 * 60 * 60 * 1000
  const layer = Accounts.Default.pipe(
    Layer.provideMerge(Layer.mergeAll(Ids.Default, Bus.inProcess)),
    Layer.provideMerge(DatabaseLive),
    Layer.provide(settingsLayer({ databaseUrl: Option.some(Redacted.make(databaseUrl)), serviceEnv }))
  )
  const runtime = ManagedRuntime.make(layer)
  try {
    return await runtime.runPromise(
      Effect.gen(function* () {
        const accounts = yield* Accounts
        const account = yield* accounts.create("Test merchant")
        const session = yield* accounts.createSession(account.id, { ttlMs: sessionTtlMs })
        const key = yield* accounts.issueApiKey(account.id)
        return {
          accountId: toId("acct", account.id),
          sessionToken: session.token,
          apiKey: key.apiKey,
          headers: (via = "api_key", extra = {}) => ({
            authorization: `Bearer ${via === "api_key" ? key.apiKey : session.token}`,
            ...extra
          })
        }
      })
    )
  } finally {
    await runtime.dispose()
  }
}
