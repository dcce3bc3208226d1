import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { depositRequestMachine, MACHINE_VERSION } from "../../../machines/DepositRequest"
import { machineDefinition, machineGraph } from "./MachineGraph"
import { Api } from "../Api"

export const MachineLive = HttpApiBuilder.group(Api, "machine", (handlers) =>
  Effect.gen(function* () {
    // Laid out on first use and kept: the machine cannot change while the service runs.
    const graph = Effect.promise(() => machineGraph(depositRequestMachine, MACHINE_VERSION))
    const definition = JSON.stringify(machineDefinition(depositRequestMachine))
    return handlers
      .handle("graph", () => Effect.map(graph, (g) => ({ object: "lifecycle_machine" as const, ...g })))
      .handle("definition", () =>
        Effect.succeed(
          HttpServerResponse.text(definition, {
            contentType: "application/json",
            headers: { "content-disposition": 'attachment; filename="deposit-request-machine.json"' }
          })
        )
      )
  })
)
