/**
 * Runs the webhook vectors in Deno: `deno run --sloppy-imports --no-lock --allow-read=FILE deno.ts FILE` (the
 * verifier's TypeScript as it is; --sloppy-imports for the repository's extensionless imports). Prints one JSON line
 * and exits 1 when any case fails.
 */
import { checkVectors, type WebhookVector } from "./check"

declare const Deno: {
  readonly args: ReadonlyArray<string>
  readonly version: { readonly deno: string }
  readTextFile(path: string): Promise<string>
  exit(code: number): never
}

const [file] = Deno.args
if (file === undefined) throw new Error("usage: deno.ts VECTORS.json")
const vectors = JSON.parse(await Deno.readTextFile(file)) as ReadonlyArray<WebhookVector>
const results = await checkVectors(vectors)
console.log(JSON.stringify({ runtime: `deno ${Deno.version.deno}`, results }))
Deno.exit(results.every((r) => r.pass) ? 0 : 1)
