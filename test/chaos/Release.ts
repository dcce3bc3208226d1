import { execFileSync } from "node:child_process"
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { homedir } from "node:os"
import { join, resolve } from "node:path"

/** A build of the service that instances run: this checkout from source, or an earlier release compiled. */
export interface Build {
  /** The release's version (`package.json`), as instances are named by it in the step history. */
  readonly version: string
  /** The commit built; `undefined` for this checkout as it is. */
  readonly ref: string | undefined
  /** Node's arguments for an instance of this build. */
  readonly entry: ReadonlyArray<string>
  /** The directory an instance runs in. */
  readonly cwd: string
}

const REPOSITORY = resolve(import.meta.dirname, "../..")

const git = (args: ReadonlyArray<string>) =>
  execFileSync("git", args, { cwd: REPOSITORY, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim()

const versionAt = (ref: string): string => JSON.parse(git(["show", `${ref}:package.json`])).version

/** This checkout, run from source as `npm start` does. */
export const currentBuild = (): Build => ({
  version: JSON.parse(readFileSync(join(REPOSITORY, "package.json"), "utf8")).version,
  ref: undefined,
  entry: ["--import", "tsx", "src/app/main.ts"],
  cwd: REPOSITORY
})

/**
 * The previous release, from git history: the parent of the oldest commit whose `package.json` has the current
 * version (the commit that began this release). A shallow clone without that commit cannot answer.
 */
export const previousRelease = (): { readonly ref: string; readonly version: string } => {
  const current = currentBuild().version
  const began = git([
    "log",
    "--format=%H",
    "--reverse",
    "-S",
    `"version": "${current}"`,
    "--",
    "package.json"
  ]).split("\n")[0]
  if (began === undefined || began === "")
    throw new Error(`no commit sets version ${current} in package.json: is this a shallow clone?`)
  const ref = git(["rev-parse", `${began}^`])
  return { ref, version: versionAt(ref) }
}

/**
 * What a release runs and builds with: its runtime dependencies and esbuild (test-only tools, such as Prism, may
 * differ without changing the build).
 */
const declared = (packageJson: string): Record<string, string> => {
  const parsed = JSON.parse(packageJson)
  return { ...parsed.dependencies, esbuild: parsed.devDependencies?.esbuild }
}

/**
 * REF compiled as its own `npm run build` makes it, in a cache directory kept between runs (one per commit). Its
 * dependencies: this checkout's `node_modules` when REF declares every package at the same version (the usual case
 * between neighbouring releases; linked again on every use, as the checkout that built it may be gone), else its own
 * `npm ci` from its lock file.
 */
export const buildRelease = (refName: string, log: (line: string) => void = () => undefined): Build => {
  const ref = git(["rev-parse", "--verify", `${refName}^{commit}`])
  const version = versionAt(ref)
  const dir = join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "deposits-releases", ref)
  const entry = ["--enable-source-maps", join(dir, ".build/main.js")]
  const modules = join(dir, "node_modules")
  const ours = declared(readFileSync(join(REPOSITORY, "package.json"), "utf8"))
  const differing = () =>
    Object.entries(declared(readFileSync(join(dir, "package.json"), "utf8"))).filter(
      ([name, range]) => ours[name] !== range
    )
  /** Borrows this checkout's packages, replacing a link an earlier checkout (perhaps gone since) left. */
  const linkOurModules = () => {
    rmSync(modules, { recursive: true, force: true })
    symlinkSync(join(REPOSITORY, "node_modules"), modules, "dir")
  }
  if (existsSync(join(dir, ".built"))) {
    if (lstatSync(modules, { throwIfNoEntry: false })?.isSymbolicLink() !== false) {
      if (differing().length > 0) rmSync(join(dir, ".built"))
      else {
        linkOurModules()
        return { version, ref, entry, cwd: dir }
      }
    } else return { version, ref, entry, cwd: dir }
  }
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  log(`release ${version} (${ref.slice(0, 10)}): extracting into ${dir}`)
  execFileSync("sh", ["-c", `git archive --format=tar ${ref} | tar -x -C '${dir}'`], { cwd: REPOSITORY })
  const differ = differing()
  if (differ.length === 0) linkOurModules()
  else {
    log(`release ${version}: ${differ.length} dependencies differ (${differ[0]![0]}…): npm ci`)
    execFileSync("npm", ["ci", "--no-audit", "--no-fund", "--prefer-offline"], { cwd: dir, stdio: "ignore" })
  }
  log(`release ${version}: npm run build`)
  execFileSync(process.execPath, ["infra/tooling/build.mjs"], {
    cwd: dir,
    stdio: ["ignore", "ignore", "pipe"]
  })
  writeFileSync(join(dir, ".built"), `${new Date().toISOString()}\n`)
  return { version, ref, entry, cwd: dir }
}
