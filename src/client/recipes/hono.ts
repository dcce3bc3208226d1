/**
 * Receiving deliveries with Hono. The handler reads `c.req.text()` (the raw bytes as a string) before anything
 * parses JSON, and verifies that; `c.req.json()` would lose the exact bytes.
 */
import { fileURLToPath } from "node:url"
import { serve } from "@hono/node-server"
import { Hono } from "hono"
// In an app: from "deposit-request-service/webhooks".
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
      event = await verify(raw, c.req.raw.headers, secrets)
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

// Run as a file: `WEBHOOK_SECRETS=whsec_new,whsec_old PORT=3000 npx tsx src/client/recipes/hono.ts`.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const port = Number(process.env.PORT ?? 3000)
  const app = honoReceiver((process.env.WEBHOOK_SECRETS ?? "").split(","), (event) =>
    console.log(event.id, event.type)
  )
  serve({ fetch: app.fetch, port }, () => console.log(`POST http://localhost:${port}/webhooks`))
}
