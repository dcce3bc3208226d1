import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { serviceUrlOf } from "../../../src/cli/ServiceUrl"

/** The service a command reaches with these settings and this flag. */
const reached = (settings: Record<string, string>, flag?: string) =>
  serviceUrlOf(flag).pipe(
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(settings))))
  )

describe("API: the one setting naming the service for every CLI command (issue 48)", () => {
  it.effect("API wins over PORT and PUBLIC_BASE_URL; a flag wins over API", () =>
    Effect.gen(function* () {
      assert.strictEqual(yield* reached({ API: "http://localhost:8181/" }), "http://localhost:8181")
      assert.strictEqual(
        yield* reached({
          API: "http://localhost:8181",
          PORT: "8080",
          PUBLIC_BASE_URL: "https://pay.example.com"
        }),
        "http://localhost:8181"
      )
      assert.strictEqual(
        yield* reached({ API: "http://localhost:8181" }, "http://127.0.0.1:9191/"),
        "http://127.0.0.1:9191"
      )
    })
  )

  it.effect("unset or empty, the URL the service prints: PUBLIC_BASE_URL, else localhost:PORT", () =>
    Effect.gen(function* () {
      assert.strictEqual(yield* reached({}), "http://localhost:8080")
      assert.strictEqual(yield* reached({ API: "", PORT: "8282" }), "http://localhost:8282")
      assert.strictEqual(
        yield* reached({ PUBLIC_BASE_URL: "https://pay.example.com/" }),
        "https://pay.example.com"
      )
    })
  )

  it.effect("a value that is no service URL is refused with the setting's name", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(reached({ API: "localhost:8181" }))
      assert.match(String(error), /API: must be the service's http\(s\) URL/)
    })
  )
})
