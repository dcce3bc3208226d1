import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * An endpoint's rotated-out secret and when it stops signing (infra/decisions/0083-webhook-secret-rotation.md): one
 * endpoint carries at most two secrets, so a rotation never registers a second endpoint.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    alter table webhook_endpoints
      add column previous_secret text,
      add column previous_secret_expires_at timestamptz,
      add constraint webhook_endpoints_previous_secret_expiry
        check ((previous_secret is null) = (previous_secret_expires_at is null))`
})
