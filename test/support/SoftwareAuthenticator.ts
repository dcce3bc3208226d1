import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from "node:crypto"
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON
} from "@simplewebauthn/server"

/**
 * A WebAuthn authenticator in software, for tests: ES256 (P-256) credentials made with node:crypto, `none`
 * attestation, a signature counter per credential, user presence and verification always reported. It answers as
 * a browser would (clientDataJSON, authenticatorData, a CBOR attestation object), and each answer can be bent
 * (another origin, another rpID, a counter held back) to play an attacker.
 */

// The few CBOR types an attestation object and a COSE key need: integers, byte and text strings, maps.
type Cbor = number | string | Uint8Array | Map<number | string, Cbor>

const head = (major: number, n: number): Buffer => {
  if (n < 24) return Buffer.from([(major << 5) | n])
  if (n < 0x100) return Buffer.from([(major << 5) | 24, n])
  if (n < 0x10000) {
    const b = Buffer.alloc(3)
    b[0] = (major << 5) | 25
    b.writeUInt16BE(n, 1)
    return b
  }
  const b = Buffer.alloc(5)
  b[0] = (major << 5) | 26
  b.writeUInt32BE(n, 1)
  return b
}

export const encodeCbor = (value: Cbor): Buffer => {
  if (typeof value === "number") return value >= 0 ? head(0, value) : head(1, -1 - value)
  if (typeof value === "string") {
    const bytes = Buffer.from(value, "utf8")
    return Buffer.concat([head(3, bytes.length), bytes])
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value])
  const parts: Array<Buffer> = [head(5, value.size)]
  for (const [k, v] of value) parts.push(encodeCbor(k), encodeCbor(v))
  return Buffer.concat(parts)
}

const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest()
const b64url = (data: Uint8Array) => Buffer.from(data).toString("base64url")

const FLAG_USER_PRESENT = 0x01
const FLAG_USER_VERIFIED = 0x04
const FLAG_ATTESTED_CREDENTIAL = 0x40

export interface StoredCredential {
  readonly id: Buffer
  readonly privateKey: KeyObject
  readonly publicKey: KeyObject
  readonly rpId: string
  readonly userHandle: string
  counter: number
}

/** How one answer departs from an honest one. */
export interface Bend {
  /** The origin the "browser" puts in clientDataJSON (default: the authenticator's origin). */
  readonly origin?: string
  /** The rpID whose hash goes into authenticatorData (default: the options' rpID). */
  readonly rpId?: string
  /** The signature counter to report instead of the next one. */
  readonly counter?: number
  /** Sign for this credential rather than one the options allow; register this one again. */
  readonly credentialId?: string
  /** Report user verification (default true). */
  readonly userVerified?: boolean
}

export class SoftwareAuthenticator {
  readonly credentials = new Map<string, StoredCredential>()

  /** `origin`: the page the ceremonies run on, as a browser would name it. */
  constructor(readonly origin: string) {}

  /** `navigator.credentials.create` with these options: a new credential, stored here, and its answer. */
  register(options: PublicKeyCredentialCreationOptionsJSON, bend: Bend = {}): RegistrationResponseJSON {
    const rpId = options.rp.id ?? new URL(this.origin).hostname
    // A credential registered again (as an authenticator that ignores `excludeCredentials` would), or a new one.
    const again = bend.credentialId === undefined ? undefined : this.credentials.get(bend.credentialId)
    const { privateKey, publicKey } = again ?? generateKeyPairSync("ec", { namedCurve: "P-256" })
    const id = again?.id ?? randomBytes(32)
    const credential: StoredCredential = {
      id,
      privateKey,
      publicKey,
      rpId,
      userHandle: options.user.id,
      counter: 0
    }
    this.credentials.set(b64url(id), credential)
    const jwk = publicKey.export({ format: "jwk" })
    const coseKey = encodeCbor(
      new Map<number, Cbor>([
        [1, 2], // kty: EC2
        [3, -7], // alg: ES256
        [-1, 1], // crv: P-256
        [-2, Buffer.from(jwk.x!, "base64url")],
        [-3, Buffer.from(jwk.y!, "base64url")]
      ])
    )
    const idLength = Buffer.alloc(2)
    idLength.writeUInt16BE(id.length)
    const authData = Buffer.concat([
      this.authenticatorData(bend.rpId ?? rpId, FLAG_ATTESTED_CREDENTIAL, bend, 0),
      Buffer.alloc(16), // AAGUID: none, as `none` attestation allows
      idLength,
      id,
      coseKey
    ])
    const attestationObject = encodeCbor(
      new Map<string, Cbor>([
        ["fmt", "none"],
        ["attStmt", new Map()],
        ["authData", authData]
      ])
    )
    return {
      id: b64url(id),
      rawId: b64url(id),
      response: {
        clientDataJSON: this.clientData("webauthn.create", options.challenge, bend),
        attestationObject: b64url(attestationObject),
        transports: ["internal"]
      },
      authenticatorAttachment: "platform",
      clientExtensionResults: {},
      type: "public-key"
    }
  }

  /**
   * `navigator.credentials.get` with these options: an assertion by the credential the options allow (or, with
   * none listed, the first stored for the rpID: a discoverable credential), its counter advanced by one.
   */
  authenticate(options: PublicKeyCredentialRequestOptionsJSON, bend: Bend = {}): AuthenticationResponseJSON {
    const rpId = options.rpId ?? new URL(this.origin).hostname
    const allowed = new Set((options.allowCredentials ?? []).map((c) => c.id))
    const credential =
      bend.credentialId !== undefined
        ? this.credentials.get(bend.credentialId)
        : [...this.credentials.values()].find(
            (c) => c.rpId === rpId && (allowed.size === 0 || allowed.has(b64url(c.id)))
          )
    if (credential === undefined) throw new Error(`no credential for ${rpId}`)
    credential.counter += 1
    const authData = this.authenticatorData(bend.rpId ?? rpId, 0, bend, credential.counter)
    const clientDataJSON = this.clientData("webauthn.get", options.challenge, bend)
    const signature = sign(
      "sha256",
      Buffer.concat([authData, sha256(Buffer.from(clientDataJSON, "base64url"))]),
      credential.privateKey
    )
    return {
      id: b64url(credential.id),
      rawId: b64url(credential.id),
      response: {
        clientDataJSON,
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        userHandle: credential.userHandle
      },
      authenticatorAttachment: "platform",
      clientExtensionResults: {},
      type: "public-key"
    }
  }

  private authenticatorData(rpId: string, flags: number, bend: Bend, counter: number): Buffer {
    const counterBytes = Buffer.alloc(4)
    counterBytes.writeUInt32BE(bend.counter ?? counter)
    const verified = bend.userVerified ?? true
    return Buffer.concat([
      sha256(rpId),
      Buffer.from([flags | FLAG_USER_PRESENT | (verified ? FLAG_USER_VERIFIED : 0)]),
      counterBytes
    ])
  }

  private clientData(type: "webauthn.create" | "webauthn.get", challenge: string, bend: Bend): string {
    return b64url(
      Buffer.from(
        JSON.stringify({ type, challenge, origin: bend.origin ?? this.origin, crossOrigin: false }),
        "utf8"
      )
    )
  }
}
