import { HttpApiSchema } from "@effect/platform"
import type { Cause } from "effect"
import { Schema } from "effect"

/** One row of the documented error table: the page each answer's `doc_url` points at shows it. */
export interface ErrorRow {
  readonly status: number
  readonly code: string
  readonly when: string
  /** What the caller does about it, in a sentence or two. */
  readonly fix: string
}

/**
 * What a public error states once: its HTTP status, its wire code, when it is answered, what to do about it and the
 * headers it adds.
 */
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
  readonly fix: string
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

/**
 * A public error whose only field is its message (most of them): the class with its facts and code, from one
 * call. `class RateLimited extends MessageError<RateLimited>()("RateLimited", { status: 429, … }) {}`
 */
/** The fields of a message-only error. */
type MessageFields<Tag extends string> = { readonly _tag: Schema.tag<Tag>; message: typeof Schema.String }

/**
 * The class `MessageError` makes, named so that declarations can be emitted for it (the typed clients ship them):
 * the schema's tagged error class, its facts, and instances that know their code.
 */
export interface MessageErrorClass<Self, Tag extends string, Code extends string>
  extends Schema.Class<
    Self,
    MessageFields<Tag>,
    Schema.Struct.Encoded<MessageFields<Tag>>,
    never,
    Schema.Struct.Constructor<Omit<MessageFields<Tag>, "_tag">>,
    { readonly code: Code },
    Cause.YieldableError
  > {
  readonly _tag: Tag
  readonly facts: ErrorFacts<Code>
}

export const MessageError =
  <Self>() =>
  <const Tag extends string, const Code extends string>(
    tag: Tag,
    facts: Parameters<typeof errorFacts<Code>>[0]
  ): MessageErrorClass<Self, Tag, Code> => {
    const stated = errorFacts(facts)
    // The cast names the class type the call returns for a concrete `Self`, which TypeScript cannot resolve while
    // `Self` is still a parameter here.
    const Base = Schema.TaggedError<Self>()(
      tag,
      { message: Schema.String },
      stated.annotations()
    ) as unknown as Schema.TaggedErrorClass<Self, Tag, MessageFields<Tag>>
    return class extends Base {
      static readonly facts = stated
      get code(): Code {
        return stated.code
      }
    } as unknown as MessageErrorClass<Self, Tag, Code>
  }
