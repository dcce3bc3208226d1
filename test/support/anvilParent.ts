/** A process that starts a node and then waits; a test kills it to see that the node goes with it. */
import { startAnvil } from "../../infra/chain/Anvil"

const node = await startAnvil({ handleSignals: false })
process.stdout.write(`ANVIL ${node.process.pid}\n`)
setInterval(() => {}, 60_000)
