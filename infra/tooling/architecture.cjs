/**
 * The architecture, checked by `npm run lint` (dependency-cruiser): each room of services/ imports only the rooms
 * below it, the domain room depends on nothing of ours, machines only on it and XState, services know nothing of
 * the HTTP layer or the composition root, infrastructure knows no service, production code imports no test, and
 * nothing imports in a cycle.
 */

const { ROOMS, KNOW_THE_MACHINE } = require("./rooms.cjs")

const roomRules = Object.entries(ROOMS).map(([room, allowed]) => ({
  name: `room-${room}`,
  severity: "error",
  comment: `services/${room} may import only ${["domain", ...allowed].join(", ")}${
    KNOW_THE_MACHINE.includes(room) ? " and machines/" : ""
  }.`,
  from: { path: `^services/${room}/` },
  to: {
    path: KNOW_THE_MACHINE.includes(room) ? "^services/" : "^(services|machines)/",
    pathNot: `^services/(${[room, "domain", ...allowed].join("|")})/`
  }
}))

module.exports = {
  forbidden: [
    ...roomRules,
    {
      name: "services-live-in-rooms",
      severity: "error",
      comment:
        "Every service belongs to a room: a folder under services/ named in ROOMS, or the domain room.",
      from: { path: "^services/[^/]+$" },
      to: {}
    },
    {
      name: "no-cycles",
      severity: "error",
      comment: "A cycle ties modules into one; split the shared part out.",
      from: {},
      to: { circular: true }
    },
    {
      name: "domain-depends-on-nothing-of-ours",
      severity: "error",
      comment: "services/domain is what every room depends on; it depends on no room.",
      from: { path: "^services/domain/" },
      to: { path: "^(src|machines|infra|test)/|^services/(?!domain/)" }
    },
    {
      name: "machines-are-pure",
      severity: "error",
      comment: "The lifecycle machines import XState and the domain room only.",
      from: { path: "^machines/" },
      to: { pathNot: "^machines/|^services/domain/|^node_modules/xstate/" }
    },
    {
      name: "services-know-no-http",
      severity: "error",
      comment:
        "Services return domain values; src/ (the HTTP API and the composition root) picks and encodes them.",
      from: { path: "^services/" },
      to: { path: "^src/" }
    },
    {
      name: "services-use-no-devnet-fixture",
      severity: "error",
      comment:
        "The local chain and the deployment of Circle's token are for the sandbox's start-up and tests, not for services.",
      from: { path: "^services/" },
      to: { path: "^infra/(chain|contracts)/" }
    },
    {
      name: "handlers-use-services-not-the-root",
      severity: "error",
      comment:
        "Handlers take what they need as services (PublicUrl, ApiSettings, …) provided at the composition root; " +
        "they never import the root's own modules (settings, server, start-up).",
      from: { path: "^src/api/" },
      to: {
        path: "^src/(Config|Server|main|cli|devnet|docs|inspect|Ports|SandboxStart|StartupChecks|MetricsServer|ObjectRoutes|Tracing|PublicUrl)\\.ts$"
      }
    },
    {
      name: "production-settings-use-no-devnet",
      severity: "error",
      comment:
        "Production settings know no development chain: the sandbox's start-up supplies the local chain's defaults.",
      from: { path: "^src/Config\\.ts$" },
      to: { path: "^infra/(chain|contracts)/" }
    },
    {
      name: "infra-knows-no-service",
      severity: "error",
      comment:
        "Infrastructure (migrations, the local chain, tooling) may use the domain room, no service or route.",
      from: { path: "^infra/" },
      to: { path: "^(src|machines)/|^services/(?!domain/)" }
    },
    {
      name: "production-imports-no-test",
      severity: "error",
      from: { path: "^(src|services|machines|infra)/" },
      to: { path: "^test/" }
    }
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default"]
    }
  }
}
