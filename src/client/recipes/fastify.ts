/**
 * Receiving deliveries with Fastify 5. The webhook route lives in its own plugin whose `application/json` parser
 * keeps the body as a Buffer (`parseAs: "buffer"`), so `verify` sees the bytes exactly as signed while the rest of
 * the app keeps Fastify's JSON parser.
 */
import { fileURLToPath } from "node:url"
import Fastify, { type FastifyInstance, type FastifyServerOptions } from "fastify"
// In an app: from "deposit-request-service/webhooks".
import { type Event, verify, WebhookVerificationError } from "../webhooks"

export const fastifyReceiver = (
  secrets: ReadonlyArray<string>,
  handle: (event: Event) => void,
  onRefused: (error: WebhookVerificationError) => void = (error) =>
    console.warn(`webhook refused: ${error.code}`),
  options: FastifyServerOptions = {}
): FastifyInstance => {
  const app = Fastify(options)
  const seen = new Set<string>()
  app.register(async (webhooks) => {
    webhooks.addContentTypeParser("application/json", { parseAs: "buffer" }, (_req, body, done) =>
      done(null, body)
    )
    webhooks.post("/webhooks", async (req, reply) => {
      let event: Event
      try {
        event = await verify(req.body as Buffer, req.headers, secrets)
      } catch (error) {
        if (error instanceof WebhookVerificationError) {
          onRefused(error)
          return reply.code(400).send({ error: error.code, message: error.message })
        }
        throw error
      }
      // Answer first; retries carry the same Service-Event-Id, so each event is handled once.
      if (!seen.has(event.id)) {
        seen.add(event.id)
        setImmediate(() => handle(event))
      }
      return reply.code(200).send({ received: true })
    })
  })
  return app
}

// Run as a file: `WEBHOOK_SECRETS=whsec_new,whsec_old PORT=3000 npx tsx src/client/recipes/fastify.ts`.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const port = Number(process.env.PORT ?? 3000)
  await fastifyReceiver((process.env.WEBHOOK_SECRETS ?? "").split(","), (event) =>
    console.log(event.id, event.type)
  ).listen({ port })
  console.log(`POST http://localhost:${port}/webhooks`)
}
