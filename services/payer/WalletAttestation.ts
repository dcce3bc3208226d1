import { Effect, Option } from "effect"
import { type Address, createPublicClient, type Hex, type PublicClient, verifyTypedData } from "viem"
import { type ChainAccess, ChainEndpoints } from "../chain/ChainEndpoints"
import { chainSettings } from "../chain/ChainSettings"
import { chainIdOf } from "../domain/Environment"
import { ServiceUnavailable } from "../domain/Errors"

/** The EIP-712 statement a payer signs to bind a wallet to one deposit request, on one chain, until a deadline. */
export const attestationDomain = (chainId: number) =>
  ({ name: "Deposit Request Service", version: "1", chainId }) as const

export const attestationTypes = {
  WalletAttestation: [
    { name: "depositRequest", type: "string" },
    { name: "wallet", type: "address" },
    { name: "chainId", type: "uint256" },
    { name: "expiresAt", type: "uint256" }
  ]
} as const

/** A statement may be valid for at most this long after it is submitted. */
export const MAX_STATEMENT_SECONDS = 24 * 3600

export interface Statement {
  readonly depositRequest: string
  readonly wallet: Address
  readonly chainId: number
  /** Unix seconds. */
  readonly expiresAt: number
}

/** The typed data as a wallet signs it (`eth_signTypedData_v4`). */
export const typedData = (s: Statement) => ({
  domain: attestationDomain(s.chainId),
  types: attestationTypes,
  primaryType: "WalletAttestation" as const,
  message: {
    depositRequest: s.depositRequest,
    wallet: s.wallet,
    chainId: BigInt(s.chainId),
    expiresAt: BigInt(s.expiresAt)
  }
})

/**
 * Whether the wallet named in the statement signed it. Resolves false for a signature that does not hold; rejects
 * only when the answer could not be obtained (the chain node is unreachable), which is not the payer's fault.
 */
export type SignatureCheck = (s: Statement, signature: Hex) => Promise<boolean>

/** Externally owned accounts only: recovers the signer offline. */
export const eoaSignatureCheck: SignatureCheck = (s, signature) =>
  verifyTypedData({ address: s.wallet, signature, ...typedData(s) }).catch(() => false)

/**
 * EOAs offline first; a wallet with code (a smart-contract wallet) is then asked on chain through ERC-1271
 * `isValidSignature`, by viem's public-client `verifyTypedData`. The code is read first so that an unreachable
 * node rejects instead of reading as a bad signature (viem folds a failed call into "invalid").
 */
export const chainSignatureCheck =
  (client: Pick<PublicClient, "getCode" | "verifyTypedData">): SignatureCheck =>
  async (s, signature) => {
    if (await eoaSignatureCheck(s, signature)) return true
    const code = await client.getCode({ address: s.wallet })
    if (code === undefined || code === "0x") return false
    return client.verifyTypedData({ address: s.wallet, signature, ...typedData(s) })
  }

/** The check the service uses: on chain when a node is configured, EOAs only otherwise. */
export const signatureCheckFor = (chain: Option.Option<ChainAccess>): SignatureCheck =>
  Option.match(chain, {
    onNone: () => eoaSignatureCheck,
    onSome: (access) => chainSignatureCheck(createPublicClient({ transport: access.transport }))
  })

/**
 * Checks a statement: it names this request and this chain, has not expired, and is signed by the wallet it
 * names. Returns the refusal, or undefined when it holds; rejects when the signature could not be checked.
 */
export const refusalOf = async (
  s: Statement,
  signature: Hex,
  expected: { readonly depositRequest: string; readonly chainId: number; readonly nowSeconds: number },
  check: SignatureCheck = eoaSignatureCheck
): Promise<{ param: string; message: string } | undefined> => {
  if (s.depositRequest !== expected.depositRequest) {
    return { param: "signature", message: "The statement names another deposit request." }
  }
  if (s.chainId !== expected.chainId)
    return { param: "chain_id", message: `The statement must name chain ${expected.chainId}.` }
  if (s.expiresAt <= expected.nowSeconds)
    return { param: "expires_at", message: "The statement has expired." }
  if (s.expiresAt > expected.nowSeconds + MAX_STATEMENT_SECONDS) {
    return { param: "expires_at", message: "The statement may be valid for at most 24 hours." }
  }
  return (await check(s, signature))
    ? undefined
    : { param: "signature", message: "The signature is not the wallet's signature of this statement." }
}

/**
 * The service's statement check: this deployment's chain, and the signature check its chain access allows (on
 * chain when a node is configured). A node that does not answer is a 503, never the payer's refusal.
 */
export class WalletAttestation extends Effect.Service<WalletAttestation>()("deposits/WalletAttestation", {
  effect: Effect.gen(function* () {
    const chainId = chainIdOf((yield* chainSettings).serviceEnv)
    const check = signatureCheckFor((yield* ChainEndpoints).access)

    /** The refusal of a statement for this request at this time, or undefined when it holds. */
    const refusal = Effect.fn("WalletAttestation.refusal")(function* (
      s: Statement,
      signature: Hex,
      expected: { readonly depositRequest: string; readonly nowSeconds: number }
    ) {
      return yield* Effect.tryPromise({
        try: () => refusalOf(s, signature, { ...expected, chainId }, check),
        catch: () =>
          new ServiceUnavailable({
            message: "The wallet's signature could not be checked on chain; try again."
          })
      })
    })

    return { refusal } as const
  }),
  dependencies: [ChainEndpoints.Default]
}) {}
