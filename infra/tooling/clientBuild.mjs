// The merchant-facing entry points as plain ES modules for `node` (no tsx), with declarations a merchant's
// TypeScript reads under any module setting: package.json's `exports` point at them, so an app that installs the
// package by path imports them after `npm run build` (infra/decisions/0064-webhook-helpers.md). The webhook
// helper is bundled whole and imports nothing (it runs on WebCrypto, decision 0090); its declarations carry the
// contract's `Event` written out as plain object types, so they import nothing either.
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { build } from "esbuild"
import ts from "typescript"

export const clientEntryPoints = { webhooks: "src/client/webhooks.ts" }

/** Names whose types are written out in full in the declarations (they are aliases of the contract's schemas). */
const expanded = ["Event"]

const declarations = (entry) => {
  const program = ts.createProgram([entry], {
    strict: true,
    exactOptionalPropertyTypes: true,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
    declaration: true,
    emitDeclarationOnly: true
  })
  const source = program.getSourceFile(entry)
  const checker = program.getTypeChecker()
  let text = ""
  program.emit(source, (_name, data) => (text = data), undefined, true)
  for (const name of expanded) {
    const alias = source.statements.find((s) => ts.isTypeAliasDeclaration(s) && s.name.text === name)
    const written = checker.typeToString(
      checker.getTypeAtLocation(alias.name),
      undefined,
      ts.TypeFormatFlags.NoTruncation |
        ts.TypeFormatFlags.InTypeAlias |
        ts.TypeFormatFlags.MultilineObjectLiterals
    )
    text = text.replace(new RegExp(`export type ${name} = [^;]+;`), `export type ${name} = ${written};`)
  }
  // Only the imports the expanded aliases used remain: drop every import of our sources and of effect.
  text = text.replace(/^import .* from "(\.[^"]*|effect)";\n/gm, "")
  if (/^import /m.test(text)) throw new Error(`declarations of ${entry} still import: ${text}`)
  return text
}

export const buildClient = async (outdir = ".build/client") => {
  const result = await build({
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
  mkdirSync(outdir, { recursive: true })
  for (const [name, entry] of Object.entries(clientEntryPoints))
    writeFileSync(join(outdir, `${name}.d.ts`), declarations(entry))
  return result
}
