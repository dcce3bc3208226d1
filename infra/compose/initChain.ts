import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"
import { createWalletClient, getAddress, http, publicActions } from "viem"
import { anvilChain, anvilDevAccount, DEV_ACCOUNT } from "../chain/Anvil"
import { deployUsdc, holdsUsdcProxy } from "../chain/deployUsdc"

/**
 * The compose stack's one-shot init: deploys Circle's FiatToken v2.2 behind its proxy on the stack's anvil (dev
 * account 0 holds its roles and is the faucet) and hands its address to the service replicas through `TOKEN_FILE`. Run again, it keeps a token that is
 * still there. Settings: `CHAIN_RPC_URL`, `CHAIN_ID` (10143), `TOKEN_FILE`.
 */
const rpcUrl = process.env.CHAIN_RPC_URL ?? "http://127.0.0.1:8545"
const chainId = Number(process.env.CHAIN_ID ?? "10143")
const tokenFile = process.env.TOKEN_FILE ?? "/shared/token-address"

const client = createWalletClient({
  chain: anvilChain({ chainId, rpcUrl }),
  transport: http(rpcUrl, { retryCount: 0 }),
  account: anvilDevAccount(DEV_ACCOUNT.faucetOwner)
}).extend(publicActions)

// The node may still be starting (compose starts services together): wait for it, up to a minute.
for (let attempt = 0; ; attempt++) {
  try {
    await client.getChainId()
    break
  } catch (error) {
    if (attempt >= 120) throw error
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
}

const kept = existsSync(tokenFile) ? readFileSync(tokenFile, "utf8").trim() : ""
const token =
  kept !== "" && (await holdsUsdcProxy(client, getAddress(kept)))
    ? getAddress(kept)
    : (await deployUsdc(client)).address
mkdirSync(dirname(tokenFile), { recursive: true })
writeFileSync(tokenFile, `${token}\n`)
process.stdout.write(`USDC (FiatToken v2.2) at ${token} on chain ${chainId}\n`)
