import { Arbitrary, FastCheck as fc, JSONSchema, type Schema } from "effect"

import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { CreditMessage } from "../../services/chain/ChainCredits"
import { JobMessage } from "../../services/webhooks/OutboxRelay"
import { currentBuild } from "../chaos/Release"

/**
 * The formats one release writes and another reads during a rolling upgrade, beside the stored snapshots (whose
 * crossings the upgrade run counts): the JetStream messages, each decoded by its kind's schema where it enters a room
 * (a message its schema refuses is termed, so a format the other version cannot read loses what it carried).
 */
export const STREAM_FORMATS: Readonly<Record<string, Schema.Schema<unknown, unknown>>> = {
  credits: CreditMessage as Schema.Schema<unknown, unknown>,
  "webhook-jobs": JobMessage as Schema.Schema<unknown, unknown>
}

export const FORMATS_DIRECTORY = join(import.meta.dirname, "../fixtures/formats")

/** What a release records of its formats: each one's JSON Schema and messages it wrote. */
export interface ReleaseFormats {
  readonly version: string
  readonly schemas: Record<string, object>
  readonly samples: Record<string, ReadonlyArray<unknown>>
}

export const currentFormats = (samples = 8): ReleaseFormats => ({
  version: currentBuild().version,
  schemas: Object.fromEntries(
    Object.entries(STREAM_FORMATS).map(([name, schema]) => [name, JSONSchema.make(schema)])
  ),
  samples: Object.fromEntries(
    Object.entries(STREAM_FORMATS).map(([name, schema]) => [
      name,
      fc.sample(Arbitrary.make(schema), { numRuns: samples, seed: 47 })
    ])
  )
})

/** `tsx test/support/releaseFormats.ts`: records this release's formats (done when a release is cut). */
if (process.argv[1] === import.meta.filename) {
  const formats = currentFormats()
  mkdirSync(FORMATS_DIRECTORY, { recursive: true })
  const file = join(FORMATS_DIRECTORY, `${formats.version}.json`)
  writeFileSync(file, `${JSON.stringify(formats, null, 2)}\n`)
  console.log(`wrote ${file}`)
}
