import { hash, randomBytes, timingSafeEqual } from "node:crypto"

/** 32 random bytes (256 bits), base64url: well above the 128 bits a bearer secret needs. */
export const newSecret = (prefix: string) => `${prefix}${randomBytes(32).toString("base64url")}`

/**
 * SHA-256 as hex, through one-shot `hash` (no Hash object per call); hex is the faster output of the two
 * (decision 0024).
 */
export const digestHexOf = (secret: string): string => hash("sha256", secret, "hex")

/** Only this digest is stored; the plaintext is shown once. */
export const digestOf = (secret: string): Buffer => Buffer.from(digestHexOf(secret), "hex")

/** Constant-time equality of two digests (a mismatch in length is not a timing leak: digests are fixed-size). */
export const sameDigest = (a: Uint8Array, b: Uint8Array) => a.length === b.length && timingSafeEqual(a, b)
