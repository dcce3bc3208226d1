import { Effect, Option } from "effect"
import { type Address, createPublicClient, getAddress, http, zeroAddress, zeroHash } from "viem"
import { chainCall } from "../../services/chain/ChainRpc"
import { chainIdOf } from "../../services/domain/Environment"
import { depositKeyRefusal } from "../../services/chain/KeyVault"
import { rpcEndpointsOf } from "../../services/chain/ChainSettings"
import { readTokenDomain, usdcAbi } from "../../services/chain/Usdc"
import type { AppConfigShape } from "./Config"

/**
 * What must hold before the service takes a single request, beyond each setting's own format: production runs
 * only on durable, shared parts with its own keys, and a configured chain is the right chain with a token the
 * treasury can move. Each refusal is one line naming the setting; the start-up prints them and exits 78.
 */
export const startupRefusals = (config: AppConfigShape): Effect.Effect<StartupChecks> =>
  Effect.gen(function* () {
    const refusals: Array<string> = []
    const unanswered: Array<string> = []
    const production = config.serviceEnv === "production"
    const endpoints = rpcEndpointsOf(config)
    const setting = Option.isSome(config.chainRpcUrls) ? "CHAIN_RPC_URLS" : "CHAIN_RPC_URL"
    if (production) {
      const required: ReadonlyArray<[boolean, string]> = [
        [
          Option.isNone(config.databaseUrl),
          "DATABASE_URL: production needs a real PostgreSQL (the embedded one runs without fsync and serves one process)"
        ],
        [
          Option.isNone(config.natsUrl),
          "NATS_URL: production needs NATS (the in-process bus reaches no other instance)"
        ],
        [endpoints.length === 0, "CHAIN_RPC_URLS: production needs the nodes of chain 143"],
        [Option.isNone(config.tokenAddress), "TOKEN_ADDRESS: production needs the USDC token contract"],
        [
          Option.isNone(config.treasuryPrivateKey),
          "TREASURY_PRIVATE_KEY: production needs the account that pays gas for settlements and returns"
        ]
      ]
      for (const [missing, line] of required) if (missing) refusals.push(line)
    }
    const seed = depositKeyRefusal(config.serviceEnv, config.depositKeyMnemonic)
    if (seed !== undefined) refusals.push(seed)
    // Every endpoint must serve the environment's chain (a fallback to another chain would be worse than none);
    // the token is checked through the first one.
    for (const [i, url] of endpoints.entries()) {
      const name = endpoints.length > 1 ? `${setting} (endpoint ${i + 1})` : setting
      const checked = yield* chainRefusals(
        name,
        url,
        chainIdOf(config.serviceEnv),
        i === 0 ? config.tokenAddress : Option.none()
      )
      if ("unanswered" in checked) unanswered.push(checked.unanswered)
      else refusals.push(...checked)
    }
    return { refusals, unanswered }
  })

/**
 * What the start-up found: settings it refuses (the service exits 78), and chain endpoints that did not answer, so
 * nothing could be checked on them yet (the service starts unready and checks them again until they answer).
 */
export interface StartupChecks {
  readonly refusals: ReadonlyArray<string>
  readonly unanswered: ReadonlyArray<string>
}

/** The node answers with the environment's chain id, and the token has code, 6 decimals and EIP-3009. */
const chainRefusals = (
  setting: string,
  rpcUrl: string,
  expectedChainId: number,
  tokenAddress: Option.Option<string>
) =>
  Effect.gen(function* () {
    const client = createPublicClient({ transport: http(rpcUrl, { retryCount: 0, timeout: 10_000 }) })
    const chainId = yield* Effect.either(chainCall("eth_chainId", () => client.getChainId()))
    if (chainId._tag === "Left")
      return { unanswered: `${setting}: the node does not answer (${chainId.left.message})` } as const
    if (chainId.right !== expectedChainId)
      return [
        `${setting}: the node serves chain ${chainId.right}, this environment needs chain ${expectedChainId}`
      ]
    if (Option.isNone(tokenAddress)) return []
    const token = getAddress(tokenAddress.value)
    const code = yield* Effect.either(chainCall("eth_getCode", () => client.getCode({ address: token })))
    if (code._tag === "Left" || code.right === undefined || code.right === "0x")
      return [`TOKEN_ADDRESS: no contract at ${token} on chain ${expectedChainId}`]
    return yield* tokenRefusals(client, token, expectedChainId)
  })

/**
 * USDC as Circle issues it: 6 decimals, EIP-3009, an EIP-712 domain read from the contract that hashes to its own
 * DOMAIN_SEPARATOR (the one the treasury signs for), and the FiatToken controls the treasury checks before every
 * transfer (`paused()`, `isBlacklisted()`).
 */
const tokenRefusals = (client: ReturnType<typeof createPublicClient>, token: Address, chainId: number) =>
  Effect.gen(function* () {
    const refusals: Array<string> = []
    const decimals = yield* Effect.either(
      chainCall("decimals", () =>
        client.readContract({ address: token, abi: usdcAbi, functionName: "decimals" })
      )
    )
    if (decimals._tag === "Left" || decimals.right !== 6)
      refusals.push(`TOKEN_ADDRESS: ${token} must have 6 decimals like USDC`)
    // EIP-3009's view: a token without it cannot be moved out of a gasless deposit address.
    const eip3009 = yield* Effect.either(
      chainCall("authorizationState", () =>
        client.readContract({
          address: token,
          abi: usdcAbi,
          functionName: "authorizationState",
          args: [zeroAddress, zeroHash]
        })
      )
    )
    if (eip3009._tag === "Left") {
      refusals.push(`TOKEN_ADDRESS: ${token} does not implement EIP-3009 (transferWithAuthorization)`)
      return refusals
    }
    const domain = yield* Effect.either(
      Effect.tryPromise({ try: () => readTokenDomain(client, token, chainId), catch: (e) => e as Error })
    )
    if (domain._tag === "Left")
      refusals.push(`TOKEN_ADDRESS: no usable EIP-712 domain: ${domain.left.message.split("\n")[0]}`)
    const controls = yield* Effect.either(
      Effect.tryPromise(() =>
        Promise.all([
          client.readContract({ address: token, abi: usdcAbi, functionName: "paused" }),
          client.readContract({
            address: token,
            abi: usdcAbi,
            functionName: "isBlacklisted",
            args: [zeroAddress]
          })
        ])
      )
    )
    if (controls._tag === "Left")
      refusals.push(
        `TOKEN_ADDRESS: ${token} does not answer paused() and isBlacklisted() as Circle's FiatToken does`
      )
    return refusals
  })
