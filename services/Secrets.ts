import { hash, randomBytes, timingSafeEqual } from "node:crypto"

/** 32 random bytes (256 bits), base64url: well above the 128 bits a bearer secret needs. */
export const newSecret = (prefix: string) => `${prefix}${randomBytes(32).toString("base64url")}`

/** Only this digest is stored; the plaintext is shown once. (One-shot `hash`: no Hash object per call.) */
export const digestOf = (secret: string): Buffer => hash("sha256", secret, "buffer")

/** Constant-time equality of two digests (a mismatch in length is not a timing leak: digests are fixed-size). */
export const sameDigest = (a: Uint8Array, b: Uint8Array) => a.length === b.length && timingSafeEqual(a, b)
