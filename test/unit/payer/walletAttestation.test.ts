import { Option } from "effect"
import { chainAccessOf } from "../../support/LocalChain"
import { createPublicClient, hashTypedData, http } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type AnvilHandle, startAnvil } from "../../../infra/chain/Anvil"
import {
  chainSignatureCheck,
  eoaSignatureCheck,
  MAX_STATEMENT_SECONDS,
  refusalOf,
  type Statement,
  signatureCheckFor,
  typedData
} from "../../../services/payer/WalletAttestation"
import { deployContractWallet } from "../../support/ContractWallet"

const request = "dr_0193a5b2-7c1d-7e8f-9a0b-1c2d3e4f5a6b"
const now = 1_800_000_000
const expected = { depositRequest: request, chainId: 10143, nowSeconds: now }

const statementFor = (wallet: `0x${string}`, over: Partial<Statement> = {}): Statement => ({
  depositRequest: request,
  wallet,
  chainId: 10143,
  expiresAt: now + 600,
  ...over
})

describe("wallet statement (EIP-712)", () => {
  const account = privateKeyToAccount(generatePrivateKey())

  it("pins the domain and the WalletAttestation type a wallet signs", () => {
    const data = typedData(statementFor(account.address))
    expect(data.domain).toEqual({ name: "Deposit Request Service", version: "1", chainId: 10143 })
    expect(data.primaryType).toBe("WalletAttestation")
    expect(data.types.WalletAttestation.map((f) => `${f.type} ${f.name}`)).toEqual([
      "string depositRequest",
      "address wallet",
      "uint256 chainId",
      "uint256 expiresAt"
    ])
  })

  it("accepts the wallet's own signature of this request, chain and deadline", async () => {
    const s = statementFor(account.address)
    expect(await refusalOf(s, await account.signTypedData(typedData(s)), expected)).toBeUndefined()
  })

  it("refuses another request, another chain, an expired or too distant deadline, another wallet", async () => {
    const sign = (s: Statement) => account.signTypedData(typedData(s))
    const other = statementFor(account.address, {
      depositRequest: `dr_${"0".repeat(8)}-0000-0000-0000-000000000000`
    })
    expect((await refusalOf(other, await sign(other), expected))?.param).toBe("signature")
    const chain = statementFor(account.address, { chainId: 143 })
    expect((await refusalOf(chain, await sign(chain), expected))?.param).toBe("chain_id")
    const expired = statementFor(account.address, { expiresAt: now })
    expect(await refusalOf(expired, await sign(expired), expected)).toEqual({
      param: "expires_at",
      message: "The statement has expired."
    })
    const distant = statementFor(account.address, { expiresAt: now + MAX_STATEMENT_SECONDS + 1 })
    expect((await refusalOf(distant, await sign(distant), expected))?.param).toBe("expires_at")
    // Signed by one key, claimed for another wallet: the recovered signer differs.
    const claimed = statementFor(privateKeyToAccount(generatePrivateKey()).address)
    expect((await refusalOf(claimed, await sign(claimed), expected))?.param).toBe("signature")
  })

  it("refuses a signature of different typed data and a malformed signature without throwing", async () => {
    const s = statementFor(account.address)
    const signedLater = await account.signTypedData(typedData({ ...s, expiresAt: s.expiresAt + 1 }))
    expect((await refusalOf(s, signedLater, expected))?.param).toBe("signature")
    expect((await refusalOf(s, "0x1234", expected))?.param).toBe("signature")
    expect(await eoaSignatureCheck(s, "0x")).toBe(false)
  })

  it("uses the offline check when no chain node is configured", () => {
    expect(signatureCheckFor(Option.none())).toBe(eoaSignatureCheck)
  })
})

describe("smart-contract wallets (ERC-1271) through the chain client", () => {
  let node: AnvilHandle
  beforeAll(async () => {
    node = await startAnvil()
  })
  afterAll(async () => {
    await node?.stop()
  })

  const client = () => createPublicClient({ transport: http(node.rpcUrl, { retryCount: 0 }) })

  it("accepts the owner's signature for a deployed contract wallet, which the offline check cannot", async () => {
    const owner = privateKeyToAccount(generatePrivateKey())
    const wallet = await deployContractWallet(node, owner)
    const s = statementFor(wallet)
    const signature = await owner.sign({ hash: hashTypedData(typedData(s)) })
    expect(await eoaSignatureCheck(s, signature)).toBe(false)
    expect(await refusalOf(s, signature, expected, chainSignatureCheck(client()))).toBeUndefined()
    expect(
      await refusalOf(s, signature, expected, signatureCheckFor(Option.some(chainAccessOf(node.rpcUrl))))
    ).toBeUndefined()
  })

  it("refuses a contract wallet whose owner did not sign, and an EOA's bad signature, on chain", async () => {
    const owner = privateKeyToAccount(generatePrivateKey())
    const wallet = await deployContractWallet(node, owner)
    const s = statementFor(wallet)
    const stranger = privateKeyToAccount(generatePrivateKey())
    const forged = await stranger.sign({ hash: hashTypedData(typedData(s)) })
    const check = chainSignatureCheck(client())
    expect((await refusalOf(s, forged, expected, check))?.param).toBe("signature")
    const eoa = statementFor(stranger.address)
    expect((await refusalOf(eoa, forged, expected, check))?.param).toBe("signature")
    // EOAs still verify offline with a node configured.
    expect(
      await refusalOf(eoa, await stranger.signTypedData(typedData(eoa)), expected, check)
    ).toBeUndefined()
  })

  it("rejects, rather than refusing the payer, when the node cannot be reached", async () => {
    const s = statementFor(privateKeyToAccount(generatePrivateKey()).address)
    const unreachable = signatureCheckFor(Option.some(chainAccessOf("http://127.0.0.1:9")))
    await expect(refusalOf(s, `0x${"11".repeat(65)}`, expected, unreachable)).rejects.toThrow()
  })
})
