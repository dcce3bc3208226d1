import { Effect, Option } from "effect"
import { hostname } from "node:os"
import { newUuid7 } from "./Ids"
import { optionalSetting } from "./Settings"

/**
 * `INSTANCE_ID`: this instance's name where the deployment's instances are told apart (the step history names who
 * applied each step). Unset: the host's name (a pod's name on Kubernetes), the process id and a short random tail,
 * so a restarted process on the same host is a new instance.
 */
export const instanceIdSetting = optionalSetting(
  "INSTANCE_ID",
  "must be 1 to 100 printable characters without spaces",
  (id) => /^[\x21-\x7e]{1,100}$/.test(id)
)

const processInstance = `${hostname()}/${process.pid}/${newUuid7().slice(-6)}`

/** This process among the deployment's instances; fixed for the process's life. */
export class Instance extends Effect.Service<Instance>()("deposits/Instance", {
  effect: Effect.map(instanceIdSetting, (id) => ({ id: Option.getOrElse(id, () => processInstance) }))
}) {}
