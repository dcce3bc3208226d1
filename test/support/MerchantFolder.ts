import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

/** The package's root: what a merchant installs by path. */
export const packageRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

/**
 * A temporary app folder outside the source tree with the package "installed by path": its
 * node_modules/deposit-request-service is a link to the package root (what `npm install <folder>` makes, without
 * npm touching the shared node_modules), beside the app's own Effect (the copies the package resolves, as npm
 * would dedupe them).
 */
export const merchantFolder = (prefix: string, packageJson: Record<string, unknown> = {}) => {
  const folder = mkdtempSync(join(tmpdir(), prefix))
  writeFileSync(
    join(folder, "package.json"),
    JSON.stringify({
      name: prefix.replace(/-$/, ""),
      private: true,
      type: "module",
      dependencies: { "deposit-request-service": `file:${packageRoot}` },
      ...packageJson
    })
  )
  mkdirSync(join(folder, "node_modules", "@effect"), { recursive: true })
  symlinkSync(packageRoot, join(folder, "node_modules", "deposit-request-service"), "dir")
  for (const name of ["effect", "@effect/platform"])
    symlinkSync(join(packageRoot, "node_modules", name), join(folder, "node_modules", name), "dir")
  return folder
}
