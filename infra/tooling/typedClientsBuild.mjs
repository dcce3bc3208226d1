// `npm run client:build`: the typed API clients as plain ES modules for Node 20 (package exports `./client` and
// `./fetch`), in .build/client/. Our own code is bundled; dependencies stay imports, so an Effect app shares
// its `effect` and `@effect/platform` with the client (decision 0065). `npm run build` runs it too.
import { build } from "esbuild"

await build({
  entryPoints: { effect: "src/client/effect.ts", fetch: "src/client/fetch.ts" },
  outdir: ".build/client",
  bundle: true,
  splitting: true,
  platform: "node",
  target: "node20",
  format: "esm",
  packages: "external",
  sourcemap: true,
  logLevel: "warning"
})
