/**
 * The architecture, checked by `npm run lint` (dependency-cruiser): each room of services/ and of src/ imports only
 * the rooms below it, browser code only its pages and the contract's generated types, the domain room depends on nothing of ours, machines only on it and XState, services know nothing of
 * the HTTP layer or the composition root, infrastructure knows no service, production code imports no test, and
 * nothing imports in a cycle.
 */

const { ROOMS, KNOW_THE_MACHINE, SRC_ROOMS } = require("./rooms.cjs")

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

const srcRoomRules = Object.entries(SRC_ROOMS).map(([room, allowed]) => ({
  name: `src-room-${room}`,
  severity: "error",
  comment: `src/${room} may import only ${allowed.length === 0 ? "itself" : `src/{${allowed.join(", ")}}`} of src/.`,
  // Browser code has its own, narrower rule (pages-use-only-the-contract): its pages and the generated types.
  from: { path: `^src/${room}/`, pathNot: "^src/web/[^/]+/page/" },
  to: { path: "^src/", pathNot: `^src/(${[room, ...allowed].join("|")})/` }
}))

module.exports = {
  forbidden: [
    ...roomRules,
    ...srcRoomRules,
    {
      name: "src-lives-in-rooms",
      severity: "error",
      comment: "Every module of src/ belongs to a room: a folder under src/ named in SRC_ROOMS.",
      from: { path: "^src/[^/]+$" },
      to: {}
    },
    {
      name: "pages-use-only-the-contract",
      severity: "error",
      comment:
        "Browser code imports its own pages and the contract's generated types (src/client/openapi.d.ts), never " +
        "the server's modules, so a renamed contract field fails the pages' typecheck instead of drifting.",
      from: { path: "^src/web/[^/]+/page/" },
      to: { pathNot: "^src/web/[^/]+/page/|^src/client/openapi\\.d\\.ts$|^node_modules/" }
    },
    {
      name: "dev-chain-only-at-start-up",
      severity: "error",
      comment:
        "The local chain and the token's deployment are for the sandbox, the start-up and the command line, " +
        "not for the HTTP contract, the pages, the tools or the client kit.",
      from: { path: "^src/(http|web|tools|client)/" },
      to: { path: "^infra/(chain|contracts)/" }
    },
    {
      name: "contract-imports-pure-modules",
      severity: "error",
      comment:
        "The HTTP contract is bundled into the client kit (@deposits/client): from services/ it imports the domain " +
        "room and the few pure modules named here (types aside), never a service that reaches the database.",
      from: { path: "^src/http/(Api|[^/]+/Api)\\.ts$" },
      to: {
        path: "^services/",
        pathNot:
          "^services/(domain/|merchants/AttachmentRules\\.ts$|depositRequests/(WebhookFields|RequestCsv)\\.ts$)",
        dependencyTypesNot: ["type-only"]
      }
    },
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
      name: "production-settings-use-no-devnet",
      severity: "error",
      comment:
        "Production settings know no development chain: the sandbox's start-up supplies the local chain's defaults.",
      from: { path: "^src/app/Config\\.ts$" },
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
    // The kit packages' build output (git-ignored, written by their `prepack`) is not source.
    exclude: { path: "^src/client/packages/[^/]+/dist/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default"]
    }
  }
}
