/**
 * The rooms of services/ and what each may import besides itself and the domain room. Arrows run one way:
 * the platform knows no business; actors step machines and write what a step decides, knowing no wire format;
 * chain, treasury and the use-case rooms build on them; webhooks deliver what the outbox holds and know nothing
 * of how it was decided.
 */
const ROOMS = {
  platform: [],
  merchants: ["platform"],
  actors: ["platform"],
  chain: ["platform", "actors"],
  treasury: ["platform", "actors", "chain"],
  webhooks: ["platform"],
  depositRequests: ["platform", "actors", "chain"],
  payer: ["platform", "actors", "chain", "merchants", "depositRequests"]
}
/** Rooms that may read the lifecycle machine itself (the others see only what a step committed). */
const KNOW_THE_MACHINE = ["actors", "depositRequests", "payer"]

/**
 * The rooms of src/ and the other src/ rooms each may import (all may use services/ and machines/). The HTTP
 * contract is the floor the pages' servers, the client kit and the tools stand on; the sandbox adds the local
 * chain's routes to it; the composition root (app) stands over everything and only the command line, the other
 * entry point, reads its settings.
 */
const SRC_ROOMS = {
  http: [],
  web: ["http"],
  client: ["http"],
  tools: ["http"],
  sandbox: ["http", "web"],
  app: ["http", "web", "sandbox"],
  cli: ["app", "sandbox"]
}

module.exports = { ROOMS, KNOW_THE_MACHINE, SRC_ROOMS }
