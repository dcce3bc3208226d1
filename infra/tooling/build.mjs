// `npm run build`: the service and its CLI as plain JavaScript for `node` (no tsx at run time). Dependencies stay
// in node_modules (the production image installs them); our own code is bundled, one file per entry point.
import { readdirSync, readFileSync } from "node:fs"
import { build } from "esbuild"
import { buildClient } from "./clientBuild.mjs"
import { buildTypedClients } from "./typedClientsBuild.mjs"

// The stored functions' files (infra/sql/functions/*.sql), which migrations read from disk when run from source:
// the image ships `.build/` without `infra/`, so the bundle carries them (see infra/migrations/storedFunctions.ts).
const functionsDirectory = "infra/sql/functions"
const sqlFunctions = Object.fromEntries(
  readdirSync(functionsDirectory)
    .filter((file) => file.endsWith(".sql"))
    .sort()
    .map((file) => [file.slice(0, -".sql".length), readFileSync(`${functionsDirectory}/${file}`, "utf8")])
)

await build({
  entryPoints: { main: "src/app/main.ts", cli: "src/cli/main.ts", initChain: "infra/compose/initChain.ts" },
  outdir: ".build",
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  packages: "external",
  sourcemap: true,
  define: { BUNDLED_SQL_FUNCTIONS: JSON.stringify(sqlFunctions) },
  logLevel: "warning"
})

// The hosted checkout's script, for browsers (served as /checkout/assets/app.js; see src/web/checkout/CheckoutRoutes.ts,
// whose `checkoutBuildOptions` are the same options for a service run from source).
await build({
  entryPoints: { app: "src/web/checkout/page/app.ts" },
  outdir: ".build/checkout",
  bundle: true,
  minify: true,
  format: "iife",
  platform: "browser",
  target: "es2022",
  legalComments: "none",
  logLevel: "warning"
})

// The merchant dashboard's script (Preact, JSX), served as /dashboard/assets/app.js; the same options as
// `dashboardBuildOptions` in src/web/dashboard/DashboardRoutes.ts.
await build({
  entryPoints: { app: "src/web/dashboard/page/app.tsx" },
  outdir: ".build/dashboard",
  bundle: true,
  minify: true,
  format: "iife",
  platform: "browser",
  target: "es2022",
  jsx: "automatic",
  jsxImportSource: "preact",
  legalComments: "none",
  logLevel: "warning"
})

// The merchant-facing helpers (package.json `exports`: `./webhooks`), see clientBuild.mjs.
await buildClient()

// The typed API clients (`./client`, `./fetch`), see typedClientsBuild.mjs.
await buildTypedClients()
