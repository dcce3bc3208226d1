import accounts from "./0001_accounts"
import depositRequests from "./0003_deposit_requests"

/** Every migration, in order. The key's leading number is its id in `effect_sql_migrations`. */
export const migrations = {
  "0001_accounts": accounts,
  "0003_deposit_requests": depositRequests
}
