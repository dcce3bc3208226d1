/**
 * Writes test/fixtures/webhookVectors.json, the webhook verifier's shared test vector, from the service's own signer
 * (services/webhooks/WebhookSignature.ts, node:crypto): `npx tsx test/support/webhookVectors/generate.ts`. Run once
 * and committed; every runtime's runner reads the committed file. Each case's expected outcome is written here by
 * hand from the spec's "Signature verification" and decision 0083, never by running the verifier.
 */
import { writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { signPayload } from "../../../services/webhooks/WebhookSignature"
import type { WebhookVector } from "./check"

const SECRET = "whsec_Vd3kq2xR0yJ8bM1nT5pC7wE9zA4sH6uL2fG0iK8oQ3Y"
const PREVIOUS = "whsec_old7Pq1Zr4Tx9Wb2Nc5Md8Ke3Lf6Hg0Jh1Ai4Bj7Ck"
const OTHER = "whsec_notThisEndpoints0000000000000000000000000"
/** Unix seconds at signing, 2026-11-28T12:00:00Z. */
const T = 1_795_867_200

// A lifecycle event as the service writes it: compact JSON, with non-ASCII metadata so the bytes are not the
// characters (UTF-8 on every runtime).
const settled = JSON.stringify({
  id: "evt_0193a1f4a8a87c3a9f1f7a1e2b3c4d5e",
  type: "deposit_request.settled",
  occurred_at: "2026-11-28T11:59:58Z",
  data: {
    deposit_request: {
      id: "dr_0193a1f4a8a87c3a9f1f7a1e2b3c4d5f",
      status: "settled",
      amount: "25000000",
      metadata: { order: "A-1042", note: "café ☕ — 100 €" }
    }
  }
})
const settledId = "evt_0193a1f4a8a87c3a9f1f7a1e2b3c4d5e"
const testEvent = JSON.stringify({
  id: "evt_0193a1f4a8a87c3a9f1f7a1e2b3c4d60",
  type: "webhook.test",
  occurred_at: "2026-11-28T12:00:00Z",
  data: { webhook_id: "wh_0193a1f4a8a87c3a9f1f7a1e2b3c4d61" }
})

const signed = signPayload(SECRET, T, settled)
const digestOf = (header: string) => header.slice(header.indexOf("sha256="))

export const webhookVectors: ReadonlyArray<WebhookVector> = [
  {
    name: "a valid delivery",
    secret: SECRET,
    body: settled,
    timestamp: T,
    header: signed,
    now: T + 2,
    expected: { ok: true, eventId: settledId }
  },
  {
    name: "a changed body",
    secret: SECRET,
    body: settled.replace('"A-1042"', '"A-1043"'),
    timestamp: T,
    header: signed,
    now: T + 2,
    expected: { ok: false, code: "signature_mismatch" }
  },
  {
    name: "a changed timestamp (the digest of another t)",
    secret: SECRET,
    body: settled,
    timestamp: T + 1,
    header: `v1,t=${T + 1},${digestOf(signed)}`,
    now: T + 2,
    expected: { ok: false, code: "signature_mismatch" }
  },
  {
    name: "an old timestamp (a replay ten minutes later)",
    secret: SECRET,
    body: settled,
    timestamp: T,
    header: signed,
    now: T + 600,
    expected: { ok: false, code: "timestamp_outside_tolerance" }
  },
  {
    name: "a timestamp at the tolerance's edge (300 s)",
    secret: SECRET,
    body: settled,
    timestamp: T,
    header: signed,
    now: T + 300,
    expected: { ok: true, eventId: settledId }
  },
  {
    name: "a timestamp in the future, past the tolerance",
    secret: SECRET,
    body: settled,
    timestamp: T,
    header: signed,
    now: T - 301,
    expected: { ok: false, code: "timestamp_outside_tolerance" }
  },
  {
    name: "a wrong secret",
    secret: OTHER,
    body: settled,
    timestamp: T,
    header: signed,
    now: T + 2,
    expected: { ok: false, code: "signature_mismatch" }
  },
  {
    name: "another scheme (v2)",
    secret: SECRET,
    body: settled,
    timestamp: T,
    header: signed.replace(/^v1,/, "v2,"),
    now: T + 2,
    expected: { ok: false, code: "unsupported_scheme" }
  },
  {
    name: "a header without its sha256 element",
    secret: SECRET,
    body: settled,
    timestamp: T,
    header: `v1,t=${T}`,
    now: T + 2,
    expected: { ok: false, code: "missing_header" }
  },
  {
    name: "during a rotation: two sha256 elements, newest first, the receiver still on the old secret",
    secret: PREVIOUS,
    body: settled,
    timestamp: T,
    header: signPayload([SECRET, PREVIOUS], T, settled),
    now: T + 2,
    expected: { ok: true, eventId: settledId }
  },
  {
    name: "during a rotation: two sha256 elements, the receiver already on the new secret",
    secret: SECRET,
    body: settled,
    timestamp: T,
    header: signPayload([SECRET, PREVIOUS], T, settled),
    now: T + 2,
    expected: { ok: true, eventId: settledId }
  },
  {
    name: "during a rotation: the receiver holds [new, old], the delivery signed by the old one only",
    secret: [SECRET, PREVIOUS],
    body: settled,
    timestamp: T,
    header: signPayload(PREVIOUS, T, settled),
    now: T + 2,
    expected: { ok: true, eventId: settledId }
  },
  {
    name: "during a rotation: two sha256 elements, neither the receiver's",
    secret: OTHER,
    body: settled,
    timestamp: T,
    header: signPayload([SECRET, PREVIOUS], T, settled),
    now: T + 2,
    expected: { ok: false, code: "signature_mismatch" }
  },
  {
    name: "a body parsed and written out again (indented)",
    secret: SECRET,
    body: JSON.stringify(JSON.parse(settled), null, 2),
    timestamp: T,
    header: signed,
    now: T + 2,
    expected: { ok: false, code: "body_reserialised" }
  },
  {
    name: "a valid webhook.test delivery",
    secret: SECRET,
    body: testEvent,
    timestamp: T,
    header: signPayload(SECRET, T, testEvent),
    now: T,
    expected: { ok: true, eventId: "evt_0193a1f4a8a87c3a9f1f7a1e2b3c4d60" }
  }
]

export const VECTORS_FILE = fileURLToPath(new URL("../../fixtures/webhookVectors.json", import.meta.url))

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(VECTORS_FILE, `${JSON.stringify(webhookVectors, null, 2)}\n`)
  console.log(`wrote ${webhookVectors.length} cases to ${VECTORS_FILE}`)
}
