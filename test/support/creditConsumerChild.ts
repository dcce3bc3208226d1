import { Effect, Layer, Option } from "effect"
import { CreditConsumerLive } from "../../services/chain/CreditConsumer"
import { Lease } from "../../services/platform/Lease"
import { actorHostLayer } from "./ActorHostRuntime"

/**
 * Child process for the consumer-crash test: one instance of the credits' actor side (every partition's consumer
 * under its lease) over the given database and NATS server, running until it is killed.
 */
const [databaseUrl, natsUrl] = process.argv.slice(2) as [string, string]
const layer = CreditConsumerLive.pipe(
  Layer.provideMerge(Lease.Default),
  Layer.provideMerge(
    actorHostLayer(databaseUrl, {
      natsUrl: Option.some(natsUrl),
      tokenAddress: Option.some("0x5FbDB2315678afecb367f032d93F642f64180aa3")
    })
  )
)
process.stdout.write("consuming\n")
await Effect.runPromise(Layer.launch(layer))
