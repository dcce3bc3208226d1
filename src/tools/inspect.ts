import { startRelay } from "./InspectRelay"

/**
 * `npm run inspect`: a relay on 127.0.0.1 between the service (INSPECT_URL) and Stately's inspector page. Unlike
 * @statelyai/inspect's own server it binds loopback only, replays recent events to a page that joins late, and
 * sends every actor with the machine's definition first, so Stately's inspector can draw it.
 */
const relay = await startRelay({ port: Number(process.env.INSPECT_PORT ?? 4242) })
process.stdout.write(
  [
    `Inspector relay on ws://127.0.0.1:${relay.port} (loopback only).`,
    `1. Start the service with INSPECT_URL=ws://127.0.0.1:${relay.port} npm start`,
    `2. Open https://stately.ai/inspect?server=ws://127.0.0.1:${relay.port} in a browser on this machine`,
    ""
  ].join("\n")
)
