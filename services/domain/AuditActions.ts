/**
 * What the audit log records, by name: the contract lists them (so the typed clients know them) without
 * reaching the merchants room that writes them.
 */
export const AUDIT_ACTIONS = [
  "member.invited",
  "member.invite_revoked",
  "member.joined",
  "member.removed",
  "api_key.created",
  "api_key.rotated",
  "api_key.revoked",
  "payout_address.created",
  "payout_address.updated",
  "payout_address.disabled",
  "payout_address.hold_cancelled",
  "issuer.created",
  "issuer.updated",
  "issuer.deleted",
  "passkey.added",
  "passkey.removed",
  "webhook_endpoint.created",
  "webhook_endpoint.disabled",
  "webhook_endpoint.updated",
  "webhook_endpoint.secret_rotated"
] as const
export type AuditAction = (typeof AUDIT_ACTIONS)[number]
