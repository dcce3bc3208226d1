import { SqlClient } from "@effect/sql"
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Either } from "effect"
import { uuidFromId } from "../../services/domain/PrefixedId"
import { chainSettings } from "../../services/chain/ChainSettings"
import { fund, type PayMode, payRequest, payTargetOf } from "./devnet"
import { CHECKOUT_PATH } from "../web/checkout/CheckoutRoutes"

const refused = (status: number, message: string) =>
  HttpServerResponse.unsafeJson({ error: { code: "sandbox_refused", message } }, { status })

const modes: ReadonlyArray<PayMode> = ["exact", "partial", "over", "stranger"]

/**
 * The checkout's sandbox helpers, registered only in the sandbox (in production these paths do not exist): fund a
 * test wallet with test USDC and gas, and pay a request exactly, partly, too much or from a stranger, the way
 * `npm run cli -- devnet …` does, so every money path can be seen in a browser on `npm start`.
 */
export const SandboxRoutesLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const settings = yield* chainSettings
    if (settings.serviceEnv !== "sandbox") return
    const sql = yield* SqlClient.SqlClient
    const body = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      Effect.orElseSucceed(request.json, () => ({}) as unknown)
    ).pipe(
      Effect.map((json) =>
        typeof json === "object" && json !== null ? (json as Record<string, unknown>) : {}
      )
    )
    const attempt = <A>(run: () => Promise<A>) =>
      Effect.tryPromise(run).pipe(
        Effect.match({
          onSuccess: (result) => HttpServerResponse.unsafeJson(result, { status: 200 }),
          onFailure: (e) => refused(409, e.error instanceof Error ? e.error.message : String(e.error))
        })
      )
    yield* router.post(
      `${CHECKOUT_PATH}sandbox/fund`,
      Effect.flatMap(body, (b) => attempt(() => fund(settings, String(b.address ?? ""), "100.000000")))
    )
    yield* router.post(
      `${CHECKOUT_PATH}sandbox/pay`,
      Effect.gen(function* () {
        const b = yield* body
        const uuid = uuidFromId("dr", String(b.deposit_request ?? ""))
        const mode = modes.find((m) => m === b.mode)
        if (uuid === undefined) return refused(404, "No such payment request.")
        if (mode === undefined) return refused(400, `mode must be one of ${modes.join(", ")}`)
        const target = yield* Effect.provideService(payTargetOf(uuid), SqlClient.SqlClient, sql)
        if (Either.isLeft(target)) return refused(409, target.left)
        return yield* attempt(() => payRequest(settings, target.right, mode, undefined))
      }).pipe(Effect.orDie)
    )
  })
)
