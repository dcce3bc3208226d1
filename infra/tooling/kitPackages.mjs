// The integration kit as packages a merchant installs (decision 0096): `node infra/tooling/kitPackages.mjs NAME…`
// builds src/client/packages/NAME/dist/, and each package's `prepack` runs it, so `npm pack` (and `npm publish`)
// in a package folder ships what it builds. Our code is bundled; only the packages named in the package.json
// stay imports (openapi-fetch for the fetch client; effect and @effect/platform, peers, for the Effect client),
// so nothing of the service comes with them. Declarations are emitted by TypeScript from the sources, with the
// `.js` extensions NodeNext resolution wants.
import { execFileSync } from "node:child_process"
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"
import ts from "typescript"
import { buildClient } from "./clientBuild.mjs"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
export const packagesDirectory = join(root, "src", "client", "packages")

const declarationFiles = (folder) =>
  readdirSync(folder).flatMap((name) => {
    const path = join(folder, name)
    return statSync(path).isDirectory() ? declarationFiles(path) : path.endsWith(".d.ts") ? [path] : []
  })

/** TypeScript's declarations of `entry` and what it imports, under `outDir` (the tree below `rootDir`). */
const emitDeclarations = (entry, rootDir, outDir) => {
  const program = ts.createProgram([join(root, entry)], {
    strict: true,
    exactOptionalPropertyTypes: true,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    target: ts.ScriptTarget.ES2022,
    lib: ["lib.es2023.d.ts", "lib.dom.d.ts"],
    types: [],
    skipLibCheck: true,
    declaration: true,
    emitDeclarationOnly: true,
    rootDir: join(root, rootDir),
    outDir
  })
  const emitted = program.emit()
  const problems = ts.getPreEmitDiagnostics(program).concat(emitted.diagnostics)
  if (problems.length > 0)
    throw new Error(
      ts.formatDiagnostics(problems, {
        getCanonicalFileName: (f) => f,
        getCurrentDirectory: () => root,
        getNewLine: () => "\n"
      })
    )
  // A declaration source is not emitted again: the generated OpenAPI types are copied beside what imports them.
  const generated = "src/client/openapi.d.ts"
  const copy = join(outDir, generated.slice(rootDir === "." ? 0 : rootDir.length + 1))
  mkdirSync(dirname(copy), { recursive: true })
  copyFileSync(join(root, generated), copy)
  for (const file of declarationFiles(outDir)) {
    const text = readFileSync(file, "utf8").replace(
      /((?:from|import)\s*\(?\s*)(["'])(\.{1,2}\/[^"']+)\2/g,
      (_all, before, quote, specifier) => `${before}${quote}${specifier}.js${quote}`
    )
    writeFileSync(file, text)
  }
}

/** esbuild, bundling all but `external`; answers the packages the bundle still imports. */
const bundle = async (entry, outfile, external) => {
  const result = await build({
    entryPoints: [join(root, entry)],
    outfile,
    bundle: true,
    platform: "node",
    target: "node20",
    format: "esm",
    external: external.flatMap((name) => [name, `${name}/*`]),
    // The contract checks addresses with two functions of viem; its root module also re-exports transports that
    // need Node (ws), which a bundle for any runtime cannot take.
    alias: { viem: "viem/utils" },
    sourcemap: true,
    metafile: true,
    logLevel: "warning"
  })
  return [...new Set(Object.values(result.metafile.outputs).flatMap((o) => o.imports.map((i) => i.path)))]
}

const builders = {
  /** @deposits/fetch: openapi-fetch over the generated types. */
  fetch: async (dist) => {
    const imports = await bundle("src/client/fetch.ts", join(dist, "index.js"), ["openapi-fetch"])
    emitDeclarations("src/client/fetch.ts", "src/client", join(dist, "types"))
    return imports
  },
  /** @deposits/client: the Effect client, the contract inside, effect and @effect/platform the app's own. */
  client: async (dist) => {
    const imports = await bundle("src/client/effect.ts", join(dist, "index.js"), [
      "effect",
      "@effect/platform"
    ])
    emitDeclarations("src/client/effect.ts", ".", join(dist, "types"))
    return imports
  },
  /** @deposits/webhooks: the WebCrypto verifier, one module importing nothing (decision 0090). */
  webhooks: async (dist) => {
    const result = await buildClient(dist)
    return [...new Set(Object.values(result.metafile.outputs).flatMap((o) => o.imports.map((i) => i.path)))]
  }
}

/** Builds one package's dist/ and checks that its bundle imports only what its package.json names. */
export const buildKitPackage = async (name) => {
  const folder = join(packagesDirectory, name)
  const manifest = JSON.parse(readFileSync(join(folder, "package.json"), "utf8"))
  const dist = join(folder, "dist")
  rmSync(dist, { recursive: true, force: true })
  mkdirSync(dist, { recursive: true })
  const imports = await builders[name](dist)
  const allowed = Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies })
  const stray = imports.filter(
    (path) => !path.startsWith("node:") && !allowed.some((p) => path === p || path.startsWith(`${p}/`))
  )
  if (stray.length > 0)
    throw new Error(`${manifest.name} would import what it does not declare: ${stray.join(", ")}`)
  return { name: manifest.name, imports }
}

export const kitPackageNames = Object.keys(builders)

if (import.meta.url === `file://${process.argv[1]}`) {
  const names = process.argv.slice(2)
  // `prepack` runs in the package's folder; the sources' paths are the repository's, and esbuild takes its working
  // folder when it is loaded, so the build runs again from the repository's root.
  if (process.cwd() !== root) {
    execFileSync(process.execPath, [fileURLToPath(import.meta.url), ...names], {
      cwd: root,
      stdio: "inherit"
    })
    process.exit(0)
  }
  for (const name of names.length === 0 ? kitPackageNames : names) {
    if (!(name in builders)) throw new Error(`no kit package ${name} (one of ${kitPackageNames.join(", ")})`)
    const built = await buildKitPackage(name)
    console.log(`built ${built.name}: imports ${built.imports.join(", ") || "nothing"}`)
  }
}
