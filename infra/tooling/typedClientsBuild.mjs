// `npm run client:build`: the typed API clients as plain ES modules for Node 20 (package exports `./client` and
// `./fetch`), in .build/client/, with declarations a merchant's TypeScript reads under any module setting. Our own
// code is bundled; dependencies stay imports, so an Effect app shares its `effect` and `@effect/platform` with the
// client (decision 0065). `npm run build` runs it too.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { build } from "esbuild"
import ts from "typescript"

export const typedClientEntryPoints = { effect: "src/client/effect.ts", fetch: "src/client/fetch.ts" }
/** Where the declarations go: the sources' tree under it, so `types/src/client/effect.d.ts` is the entry. */
export const declarationsDirectory = ".build/client/types"

/** Every `.d.ts` under a folder. */
const declarationFiles = (folder) =>
  readdirSync(folder).flatMap((name) => {
    const path = join(folder, name)
    return statSync(path).isDirectory() ? declarationFiles(path) : path.endsWith(".d.ts") ? [path] : []
  })

/**
 * The contract's declarations, emitted by TypeScript from the sources the clients import. Relative imports get
 * their `.js` extension so that NodeNext resolution (which wants one) reads them as well as bundler resolution.
 */
const emitDeclarations = () => {
  rmSync(declarationsDirectory, { recursive: true, force: true })
  const program = ts.createProgram(Object.values(typedClientEntryPoints), {
    strict: true,
    exactOptionalPropertyTypes: true,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    target: ts.ScriptTarget.ES2022,
    types: ["node"],
    skipLibCheck: true,
    declaration: true,
    emitDeclarationOnly: true,
    rootDir: ".",
    outDir: declarationsDirectory
  })
  const emitted = program.emit()
  const problems = ts.getPreEmitDiagnostics(program).concat(emitted.diagnostics)
  if (problems.length > 0)
    throw new Error(
      ts.formatDiagnostics(problems, {
        getCanonicalFileName: (f) => f,
        getCurrentDirectory: () => ".",
        getNewLine: () => "\n"
      })
    )
  // A declaration source is not emitted again: the generated OpenAPI types are copied beside what imports them.
  const generated = "src/client/openapi.d.ts"
  mkdirSync(dirname(join(declarationsDirectory, generated)), { recursive: true })
  copyFileSync(generated, join(declarationsDirectory, generated))
  for (const file of declarationFiles(declarationsDirectory)) {
    const text = readFileSync(file, "utf8").replace(
      /((?:from|import)\s*\(?\s*)(["'])(\.{1,2}\/[^"']+)\2/g,
      (_all, before, quote, specifier) => `${before}${quote}${specifier}.js${quote}`
    )
    writeFileSync(file, text)
  }
  return relative(".", declarationsDirectory)
}

export const buildTypedClients = async (outdir = ".build/client") => {
  const result = await build({
    entryPoints: typedClientEntryPoints,
    outdir,
    bundle: true,
    splitting: true,
    platform: "node",
    target: "node20",
    format: "esm",
    packages: "external",
    sourcemap: true,
    metafile: true,
    logLevel: "warning"
  })
  emitDeclarations()
  return result
}

if (import.meta.url === `file://${process.argv[1]}`) await buildTypedClients()
