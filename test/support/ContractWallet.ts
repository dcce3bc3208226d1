import { type Address, createWalletClient, getAddress, type Hex, http, publicActions } from "viem"
import type { LocalAccount } from "viem/accounts"
import { type AnvilHandle, anvilChain, anvilDevAccount } from "../../infra/chain/Anvil"

/**
 * A minimal ERC-1271 smart-contract wallet for tests: a signature is valid when its owner signed the hash.
 * Compiled with solc-js on first use (about a second) and deployed by an anvil dev account.
 */
const source = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

contract OwnedWallet {
    address public immutable owner;

    constructor(address owner_) {
        owner = owner_;
    }

    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        if (signature.length != 65) return 0xffffffff;
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        return ecrecover(hash, v, r, s) == owner ? bytes4(0x1626ba7e) : bytes4(0xffffffff);
    }
}
`

const abi = [
  { type: "constructor", inputs: [{ name: "owner_", type: "address" }], stateMutability: "nonpayable" }
] as const

let compiled: Promise<Hex> | undefined

const bytecode = (): Promise<Hex> => {
  compiled ??= (async () => {
    const { default: solc } = await import("solc")
    const input = {
      language: "Solidity",
      sources: { "OwnedWallet.sol": { content: source } },
      settings: {
        evmVersion: "cancun",
        outputSelection: { "OwnedWallet.sol": { OwnedWallet: ["evm.bytecode.object"] } }
      }
    }
    const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
      errors?: Array<{ severity: string; formattedMessage: string }>
      contracts?: Record<string, Record<string, { evm: { bytecode: { object: string } } }>>
    }
    const errors = (output.errors ?? []).filter((e) => e.severity === "error")
    if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join("\n"))
    const object = output.contracts?.["OwnedWallet.sol"]?.OwnedWallet?.evm.bytecode.object
    if (object === undefined) throw new Error("solc produced no OwnedWallet")
    return `0x${object}`
  })()
  return compiled
}

/** Deploys a contract wallet owned by `owner` and answers its address. */
export const deployContractWallet = async (node: AnvilHandle, owner: LocalAccount): Promise<Address> => {
  const chain = anvilChain(node)
  const client = createWalletClient({
    chain,
    account: anvilDevAccount(2),
    transport: http(node.rpcUrl, { retryCount: 0 }),
    pollingInterval: 50
  }).extend(publicActions)
  const hash = await client.deployContract({ abi, bytecode: await bytecode(), args: [owner.address] })
  const receipt = await client.waitForTransactionReceipt({ hash })
  if (receipt.contractAddress == null) throw new Error("the contract wallet was not deployed")
  return getAddress(receipt.contractAddress)
}
