#!/usr/bin/env node
// The CLI as a command (package.json `bin`: `npx deposits …`). It runs a bundle of src/cli/main.ts in plain node:
// through tsx every module of Effect is resolved and loaded through tsx's hooks, which alone took longer than the
// one-second budget of a one-row command on this two-core machine (test/bench/cli.bench.ts). The bundle is
// rebuilt, with esbuild, whenever a file it was built from is newer than it, so an edit is never run stale; each
// build goes to a folder of its own and is switched to by renaming one small file, so concurrent runs never see
// half a build.
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync
} from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const home = join(root, ".build", "bin")
const current = join(home, "current.json")
const functionsDirectory = join(root, "infra", "sql", "functions")

const readCurrent = () => {
  try {
    return JSON.parse(readFileSync(current, "utf8"))
  } catch {
    return undefined
  }
}

const isFresh = (built) =>
  built !== undefined &&
  existsSync(join(home, built.folder, "cli.js")) &&
  built.inputs.every((file) => {
    try {
      return statSync(join(root, file)).mtimeMs <= built.startedAtMs
    } catch {
      return false
    }
  })

// The stored functions' files, which the migrations read from disk when run from source (as `npm run build` does).
const sqlFunctions = () =>
  Object.fromEntries(
    readdirSync(functionsDirectory)
      .filter((file) => file.endsWith(".sql"))
      .sort()
      .map((file) => [file.slice(0, -".sql".length), readFileSync(join(functionsDirectory, file), "utf8")])
  )

const build = async () => {
  const { build: esbuild } = await import("esbuild")
  const startedAtMs = Date.now()
  const folder = `${startedAtMs.toString(36)}-${process.pid}`
  const result = await esbuild({
    absWorkingDir: root,
    entryPoints: { cli: "src/cli/main.ts" },
    outdir: join(home, folder),
    bundle: true,
    splitting: true,
    platform: "node",
    target: "node20",
    format: "esm",
    metafile: true,
    // Dependencies are bundled (tree-shaken: Effect's index alone is over a hundred modules), except those that
    // load files beside their own code (PGlite's WebAssembly, anvil's binary) or that only a slow command needs.
    external: [
      "@electric-sql/*",
      "@foundry-rs/*",
      "@aws-sdk/*",
      "@smithy/*",
      "@opentelemetry/*",
      "nodemailer",
      "prom-client",
      "pg-native",
      "solc"
    ],
    define: { BUNDLED_SQL_FUNCTIONS: JSON.stringify(sqlFunctions()) },
    // Bundled CommonJS dependencies call require(): give the ES module one.
    banner: {
      js: 'import { createRequire as __cliRequire } from "node:module"; const require = __cliRequire(import.meta.url);'
    },
    logLevel: "warning"
  })
  const inputs = [
    ...Object.keys(result.metafile.inputs).filter(
      (file) => !file.includes("node_modules/") && !file.startsWith("<")
    ),
    ...readdirSync(functionsDirectory).map((file) => relative(root, join(functionsDirectory, file))),
    // An install may change any bundled dependency.
    "package-lock.json"
  ]
  const next = join(home, `current.${process.pid}.json`)
  writeFileSync(next, JSON.stringify({ folder, startedAtMs, inputs }))
  renameSync(next, current)
  // Earlier builds: a run still using one has loaded it already (or will fail once and be re-run).
  for (const old of readdirSync(home))
    if (old !== folder && !old.endsWith(".json")) rmSync(join(home, old), { recursive: true, force: true })
  return readCurrent()
}

mkdirSync(home, { recursive: true })
let built = readCurrent()
if (!isFresh(built)) {
  try {
    built = await build()
  } catch (error) {
    // No esbuild (an install without devDependencies): run the last build if there is one.
    if (built === undefined || !existsSync(join(home, built.folder, "cli.js"))) throw error
  }
}
await import(pathToFileURL(join(home, built.folder, "cli.js")).href)
