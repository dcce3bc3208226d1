// `npm run build`: the service and its CLI as plain JavaScript for `node` (no tsx at run time). Dependencies stay
// in node_modules (the production image installs them); our own code is bundled, one file per entry point.
import { build } from "esbuild"

await build({
  entryPoints: { main: "src/main.ts", cli: "src/cli.ts", initChain: "infra/compose/initChain.ts" },
  outdir: ".build",
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  packages: "external",
  sourcemap: true,
  logLevel: "warning"
})

// The hosted checkout's script, for browsers (served as /checkout/assets/app.js; see src/checkout/CheckoutRoutes.ts,
// whose `checkoutBuildOptions` are the same options for a service run from source).
await build({
  entryPoints: { app: "src/checkout/page/app.ts" },
  outdir: ".build/checkout",
  bundle: true,
  minify: true,
  format: "iife",
  platform: "browser",
  target: "es2022",
  legalComments: "none",
  logLevel: "warning"
})
