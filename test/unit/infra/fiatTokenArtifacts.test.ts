import { describe, expect, it } from "@effect/vitest"
import type { Hex } from "viem"
import {
  fiatTokenProxyArtifact,
  fiatTokenV2_2Artifact,
  type LinkReferences,
  linkBytecode,
  SIGNATURE_CHECKER,
  signatureCheckerArtifact
} from "../../../infra/contracts/artifacts"
import { fiatTokenAbi, fiatTokenProxyAbi } from "../../../infra/contracts/FiatToken"

const regenerate =
  "infra/contracts/FiatToken.ts differs from the package's artifacts: run `npx tsx infra/contracts/generate.ts` and commit the result"

// JSON round trip: the generated module is a formatted literal; what matters is the data it holds.
const plain = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown

describe("Circle's FiatToken artifacts", () => {
  it("the generated ABIs are the package's (FiatTokenV2_2 and FiatTokenProxy)", () => {
    expect(plain(fiatTokenAbi), regenerate).toEqual(plain(fiatTokenV2_2Artifact().abi))
    expect(plain(fiatTokenProxyAbi), regenerate).toEqual(plain(fiatTokenProxyArtifact().abi))
  })

  it("the package ships what the deployment uses: bytecodes, and the implementation linked to SignatureChecker only", () => {
    const v2_2 = fiatTokenV2_2Artifact()
    expect(v2_2.contractName).toBe("FiatTokenV2_2")
    expect(fiatTokenProxyArtifact().contractName).toBe("FiatTokenProxy")
    expect(signatureCheckerArtifact().contractName).toBe("SignatureChecker")
    for (const refs of [v2_2.linkReferences, v2_2.deployedLinkReferences]) {
      const libraries = Object.entries(refs).flatMap(([source, byName]) =>
        Object.keys(byName).map((name) => `${source}:${name}`)
      )
      expect(libraries).toEqual([SIGNATURE_CHECKER])
    }
    // The proxy and the library link nothing: their bytecodes are plain hex, deployable as shipped.
    for (const a of [fiatTokenProxyArtifact(), signatureCheckerArtifact()]) {
      expect(/^0x[0-9a-f]+$/.test(a.bytecode), a.contractName).toBe(true)
      expect(/^0x[0-9a-f]+$/.test(a.deployedBytecode), a.contractName).toBe(true)
    }
    // Unlinked, the implementation is not even hex: the placeholders are hardhat's `__$…$__`.
    expect(/__\$[0-9a-f]{34}\$__/.test(v2_2.deployedBytecode)).toBe(true)
  })

  it("the interface the service relies on is in the generated ABI, both signature forms included", () => {
    const signatures = new Set(
      fiatTokenAbi
        .filter((item) => item.type === "function")
        .map((item) => `${item.name}(${item.inputs.map((i) => i.type).join(",")})`)
    )
    for (const signature of [
      "transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)",
      "transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)",
      "receiveWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)",
      "receiveWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)",
      "cancelAuthorization(address,bytes32,uint8,bytes32,bytes32)",
      "cancelAuthorization(address,bytes32,bytes)",
      "authorizationState(address,bytes32)",
      "DOMAIN_SEPARATOR()",
      "name()",
      "version()",
      "paused()",
      "isBlacklisted(address)",
      "blacklist(address)",
      "unBlacklist(address)",
      "pause()",
      "unpause()",
      "mint(address,uint256)",
      "configureMinter(address,uint256)",
      "initializeV2_2(address[],string)"
    ]) {
      expect(signatures.has(signature), signature).toBe(true)
    }
  })
})

describe("linkBytecode", () => {
  const A = "0xAbCdEf0123456789aBcDeF0123456789AbCdEf01" as const
  const placeholder = `__$${"0".repeat(34)}$__`
  const references: LinkReferences = {
    "contracts/L.sol": {
      L: [
        { start: 1, length: 20 },
        { start: 23, length: 20 }
      ]
    }
  }
  // 0x60 ‖ placeholder ‖ 0x6001 ‖ placeholder ‖ 0x00: the placeholders at bytes 1 and 23.
  const code = `0x60${placeholder}6001${placeholder}00` as Hex

  it("writes the library's address, lower case, at every offset and leaves the rest alone", () => {
    const digits = A.slice(2).toLowerCase()
    expect(linkBytecode(code, references, { "contracts/L.sol:L": A })).toBe(`0x60${digits}6001${digits}00`)
  })

  it("links every library named in the references", () => {
    const B = "0x1111111111111111111111111111111111111111" as const
    const two: LinkReferences = {
      "contracts/L.sol": { L: [{ start: 1, length: 20 }] },
      "contracts/M.sol": { M: [{ start: 23, length: 20 }] }
    }
    expect(linkBytecode(code, two, { "contracts/L.sol:L": A, "contracts/M.sol:M": B })).toBe(
      `0x60${A.slice(2).toLowerCase()}6001${B.slice(2)}00`
    )
  })

  it("refuses a library it was not given an address for", () => {
    expect(() => linkBytecode(code, references, {})).toThrow("no address given for library contracts/L.sol:L")
    expect(() => linkBytecode(code, references, { "contracts/L.sol:Other": A })).toThrow(
      /contracts\/L\.sol:L/
    )
  })

  it("refuses a reference that is not an address's 20 bytes", () => {
    const odd: LinkReferences = { "contracts/L.sol": { L: [{ start: 1, length: 32 }] } }
    expect(() => linkBytecode(code, odd, { "contracts/L.sol:L": A })).toThrow(
      "library reference of 32 bytes at 1"
    )
  })

  it("links the real implementation: no placeholder is left, and the address is at each of the artifact's offsets", () => {
    const v2_2 = fiatTokenV2_2Artifact()
    const linked = linkBytecode(v2_2.deployedBytecode, v2_2.deployedLinkReferences, {
      [SIGNATURE_CHECKER]: A
    })
    expect(/^0x[0-9a-f]+$/.test(linked)).toBe(true)
    expect(linked.length).toBe(v2_2.deployedBytecode.length)
    const offsets = Object.values(v2_2.deployedLinkReferences).flatMap((byName) =>
      Object.values(byName).flat()
    )
    expect(offsets.length).toBeGreaterThan(0)
    for (const { start } of offsets) {
      expect(linked.slice(2 + start * 2, 2 + (start + 20) * 2)).toBe(A.slice(2).toLowerCase())
    }
  })
})
