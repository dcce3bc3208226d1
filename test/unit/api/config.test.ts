import { ConfigProvider, Effect, Either, Option } from "effect"
import { describe, expect, it } from "vitest"
import { loadConfig } from "../../../src/app/Config"
import { parseFinality } from "../../../services/chain/Finality"
import { rpcEndpointsOf } from "../../../services/chain/ChainSettings"
import { natsServersOf } from "../../../services/platform/Bus"

const load = (settings: Record<string, string>) =>
  Effect.runPromise(Effect.either(loadConfig(ConfigProvider.fromMap(new Map(Object.entries(settings))))))

describe("configuration", () => {
  it.each([
    ["RATE_LIMIT_CAPACITY", "0"],
    ["WEBHOOK_CLAIM_TTL_MS", "0"],
    ["DASHBOARD_ORIGIN", "https://x.example/path"],
    ["DATABASE_URL", "mysql://x"],
    ["CHAIN_RPC_URL", "ftp://node"],
    ["CHAIN_RPC_URLS", "http://a.example, ws://b.example"],
    ["CHAIN_RPC_URLS", "http://a.example,,http://b.example"],
    ["CHAIN_RPC_RETRIES", "11"],
    ["CHAIN_RPC_TIMEOUT_MS", "0"],
    ["TOKEN_ADDRESS", "0x12"],
    ["CHAIN_FINALITY", "soon"],
    ["CHAIN_FINALITY", "0"],
    ["NATS_URL", "nats://a:4222,,nats://b:4222"],
    ["NATS_URL", "nats://a:4222, http://b:4222"],
    ["NATS_STREAM_REPLICAS", "0"],
    ["NATS_STREAM_REPLICAS", "6"]
  ])("refuses %s=%s in one line that names the setting", async (name, value) => {
    const result = await load({ [name]: value })
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) expect(result.left).toMatch(new RegExp(`^invalid configuration: ${name}: `))
  })

  it("takes the node's finalized tag by default, or a number of confirmations", async () => {
    const byDefault = await load({})
    expect(Either.isRight(byDefault) && byDefault.right.chainFinality).toEqual({ _tag: "FinalizedTag" })
    const twelve = await load({ CHAIN_FINALITY: "12" })
    expect(Either.isRight(twelve) && twelve.right.chainFinality).toEqual({ _tag: "Confirmations", n: 12 })
    expect(parseFinality("10000")).toEqual(Either.right({ _tag: "Confirmations", n: 10_000 }))
    expect(Either.isLeft(parseFinality("10001"))).toBe(true)
    expect(Either.isLeft(parseFinality("1.5"))).toBe(true)
  })

  it("takes several chain endpoints in order of preference; CHAIN_RPC_URLS replaces CHAIN_RPC_URL", async () => {
    const several = await load({
      CHAIN_RPC_URL: "http://one.example",
      CHAIN_RPC_URLS: " https://a.example/key , http://b.example:8545"
    })
    expect(Either.isRight(several) && rpcEndpointsOf(several.right)).toEqual([
      "https://a.example/key",
      "http://b.example:8545"
    ])
    const one = await load({ CHAIN_RPC_URL: "http://one.example" })
    expect(Either.isRight(one) && rpcEndpointsOf(one.right)).toEqual(["http://one.example"])
    const none = await load({})
    expect(Either.isRight(none) && rpcEndpointsOf(none.right)).toEqual([])
  })
  it("takes one NATS server or a cluster's several, and one stream replica unless told", async () => {
    const cluster = await load({
      NATS_URL: "nats://10.0.0.1:4222, nats://10.0.0.2:4222,nats-3:4222",
      NATS_STREAM_REPLICAS: "3"
    })
    expect(Either.isRight(cluster) && cluster.right.natsStreamReplicas).toBe(3)
    expect(
      Either.isRight(cluster) && Option.map(cluster.right.natsUrl, natsServersOf).pipe(Option.getOrNull)
    ).toEqual(["nats://10.0.0.1:4222", "nats://10.0.0.2:4222", "nats-3:4222"])
    const byDefault = await load({ NATS_URL: "nats://127.0.0.1:4222" })
    expect(Either.isRight(byDefault) && byDefault.right.natsStreamReplicas).toBe(1)
  })
})
