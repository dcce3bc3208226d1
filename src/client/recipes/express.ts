/**
 * Receiving deliveries with Express 5. The webhook route reads the body with `express.raw`, so the bytes reach
 * `verify` exactly as signed; an app-wide `express.json()` must not run before it (it would be refused as
 * `body_reserialised`). Serve it with
 * `https.createServer(tls, app)` or `app.listen(port)`.
 */
import { fileURLToPath } from "node:url"
import express, { type Express } from "express"
// In an app: from "deposit-request-service/webhooks".
import { type Event, verify, WebhookVerificationError } from "../webhooks"

export const expressReceiver = (
  secrets: ReadonlyArray<string>,
  handle: (event: Event) => void,
  onRefused: (error: WebhookVerificationError) => void = (error) =>
    console.warn(`webhook refused: ${error.code}`)
): Express => {
  const app = express()
  const seen = new Set<string>()
  app.post("/webhooks", express.raw({ type: "application/json" }), async (req, res) => {
    let event: Event
    try {
      event = await verify(req.body as Buffer, req.headers, secrets)
    } catch (error) {
      if (error instanceof WebhookVerificationError) {
        onRefused(error)
        res.status(400).json({ error: error.code, message: error.message })
        return
      }
      throw error
    }
    // Answer first; retries carry the same Service-Event-Id, so each event is handled once.
    res.status(200).json({ received: true })
    if (seen.has(event.id)) return
    seen.add(event.id)
    setImmediate(() => handle(event))
  })
  return app
}

// Run as a file: `WEBHOOK_SECRETS=whsec_new,whsec_old PORT=3000 npx tsx src/client/recipes/express.ts`.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const port = Number(process.env.PORT ?? 3000)
  expressReceiver((process.env.WEBHOOK_SECRETS ?? "").split(","), (event) =>
    console.log(event.id, event.type)
  ).listen(port, () => console.log(`POST http://localhost:${port}/webhooks`))
}
