import { HttpApiSchema } from "@effect/platform"
import type { Schema } from "effect"

/** One row of the documented error table. */
export interface ErrorRow {
  readonly status: number
  readonly code: string
  readonly when: string
}

/** What a public error states once: its HTTP status, its wire code, when it is answered and the headers it adds. */
export interface ErrorFacts<Code extends string = string> extends ErrorRow {
  readonly code: Code
  readonly headers: Readonly<Record<string, string>>
  /** The status as the `HttpApi` reads it, for the class's third argument. */
  readonly annotations: <A>() => Schema.Annotations.Schema<A>
}

/**
 * The facts of one public error class, stated once: the class passes `annotations` to `Schema.TaggedError` and
 * keeps the rest as `static facts`, so the status map, the README's table and the OpenAPI responses are all read
 * from the classes themselves.
 */
export const errorFacts = <const Code extends string>(facts: {
  readonly status: number
  readonly code: Code
  readonly when: string
  readonly headers?: Readonly<Record<string, string>>
}): ErrorFacts<Code> => ({
  ...facts,
  headers: facts.headers ?? {},
  annotations: <A>() => HttpApiSchema.annotations<A>({ status: facts.status })
})

/** A public error class: a tagged error whose class carries its facts (and, for codes by instance, its rows). */
export interface PublicErrorClass {
  readonly facts: ErrorFacts
  readonly rows?: ReadonlyArray<ErrorRow>
}
