/**
 * Runs the webhook vectors in Bun: `bun run bun.ts FILE` (the verifier's TypeScript as it is). Prints one JSON line
 * and exits 1 when any case fails.
 */
import { checkVectors, type WebhookVector } from "./check"

declare const Bun: {
  readonly argv: ReadonlyArray<string>
  readonly version: string
  file(path: string): { text(): Promise<string> }
}

const file = Bun.argv[2]
if (file === undefined) throw new Error("usage: bun run bun.ts VECTORS.json")
const vectors = JSON.parse(await Bun.file(file).text()) as ReadonlyArray<WebhookVector>
const results = await checkVectors(vectors)
console.log(JSON.stringify({ runtime: `bun ${Bun.version}`, results }))
process.exitCode = results.every((r) => r.pass) ? 0 : 1
