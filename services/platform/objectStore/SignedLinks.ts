import { PgClient } from "@effect/sql-pg"
import { Effect, Either } from "effect"
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"

/**
 * Links this service signs itself (uploads to the embedded store, every attachment download): a base64url JSON
 * payload with its expiry, and an HMAC-SHA256 of it under a secret made once per deployment and kept in
 * PostgreSQL (every instance signs and checks with the same one). Checked in constant time; a changed byte, an
 * expired link or one signed for another purpose is refused.
 */
export interface LinkPayload {
  /** What the link is for: an upload or a download (a link of one kind is refused as the other). */
  readonly use: "upload" | "download"
  readonly key: string
  /** Unix seconds. */
  readonly exp: number
  readonly [field: string]: unknown
}

const encode = (bytes: Buffer) => bytes.toString("base64url")

export const makeSignedLinks = Effect.gen(function* () {
  const sql = yield* PgClient.PgClient
  const made = encode(randomBytes(32))
  const rows = yield* sql<{ value: string }>`
    with created as (
      insert into service_secrets (name, value) values ('link_signing', ${made}) on conflict do nothing returning value
    )
    select value from created union all select value from service_secrets where name = 'link_signing'`
  const secret = Buffer.from(rows[0]!.value, "base64url")
  const mac = (body: string) => createHmac("sha256", secret).update(body).digest()

  const sign = (payload: LinkPayload): string => {
    const body = encode(Buffer.from(JSON.stringify(payload)))
    return `${body}.${encode(mac(body))}`
  }

  /** The payload of a link signed here, for this use, not expired at `nowSeconds`; else why it is refused. */
  const verify = (
    token: string,
    use: LinkPayload["use"],
    nowSeconds: number
  ): Either.Either<LinkPayload, string> => {
    const [body = "", signature = "", extra] = token.split(".")
    if (extra !== undefined || body === "" || signature === "") return Either.left("The link is malformed.")
    const given = Buffer.from(signature, "base64url")
    const expected = mac(body)
    // Only the canonical spelling: base64url's last character has spare bits, so two spellings decode alike.
    if (encode(given) !== signature || given.length !== expected.length || !timingSafeEqual(given, expected))
      return Either.left("The link's signature does not match.")
    const payload = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as LinkPayload
    if (payload.use !== use) return Either.left(`The link is not an ${use} link.`)
    if (payload.exp <= nowSeconds) return Either.left("The link has expired.")
    return Either.right(payload)
  }

  return { sign, verify } as const
})
/** Plain functions, not Effects: an HMAC over a few hundred bytes, on every attachment link written or checked. */
export class SignedLinks extends Effect.Service<SignedLinks>()("deposits/SignedLinks", {
  effect: makeSignedLinks
}) {}
