import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"

const KEY = "checkout-test-key"

/** Sandbox only: a test wallet whose key is kept in this browser session (sessionStorage), never sent anywhere. */
export const testWallet = () => {
  let key = sessionStorage.getItem(KEY) as `0x${string}` | null
  if (key === null) {
    key = generatePrivateKey()
    sessionStorage.setItem(KEY, key)
  }
  return privateKeyToAccount(key)
}
