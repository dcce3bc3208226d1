// The merchant-facing entry points as plain ES modules for `node` (no tsx): package.json's `exports` point at
// them, so an app that installs the package by path imports them after `npm run build`
// (infra/decisions/0064-webhook-helpers.md). Each is bundled whole: the webhook helper's only import left is
// node:crypto.
import { build } from "esbuild"

export const clientEntryPoints = { webhooks: "src/client/webhooks.ts" }

export const buildClient = (outdir = ".build/client") =>
  build({
    entryPoints: clientEntryPoints,
    outdir,
    bundle: true,
    platform: "node",
    target: "node20",
    format: "esm",
    sourcemap: true,
    metafile: true,
    logLevel: "warning"
  })
