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
