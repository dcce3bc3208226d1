/**
 * Receiving deliveries with Hono. The handler reads `c.req.text()` (the raw bytes as a string) before anything
 * parses JSON, and verifies that; `c.req.json()` would lose the exact bytes.
 */
import { Hono } from "hono"
import { type Event, verify, WebhookVerificationError } from "../webhooks"

export const honoReceiver = (
  secrets: ReadonlyArray<string>,
  handle: (event: Event) => void,
  onRefused: (error: WebhookVerificationError) => void = (error) =>
    console.warn(`webhook refused: ${error.code}`)
): Hono => {
  const app = new Hono()
  const seen = new Set<string>()
  app.post("/webhooks", async (c) => {
    const raw = await c.req.text()
    let event: Event
    try {
      event = verify(raw, c.req.raw.headers, secrets)
    } catch (error) {
      if (error instanceof WebhookVerificationError) {
        onRefused(error)
        return c.json({ error: error.code, message: error.message }, 400)
      }
      throw error
    }
    // Answer first; retries carry the same Service-Event-Id, so each event is handled once.
    if (!seen.has(event.id)) {
      seen.add(event.id)
      setImmediate(() => handle(event))
    }
    return c.json({ received: true }, 200)
  })
  return app
}
