/** Where the service runs: sandbox keys and chain 10143, or production keys and chain 143. */
export type ServiceEnv = "sandbox" | "production"

/** Production settles on chain 143, the sandbox on the test network 10143. */
export const chainIdOf = (env: ServiceEnv): 143 | 10143 => (env === "production" ? 143 : 10143)

/** API keys say which environment they belong to in their prefix. */
export const apiKeyPrefixOf = (env: ServiceEnv) => (env === "production" ? "service_live_" : "service_test_")
