import fc from "fast-check"

/**
 * JSON Schema (2020-12, the subset an OpenAPI 3.1 document of ours uses) to fast-check arbitraries: values the
 * schema should accept, and, for a value it accepts, nearby values it should refuse. Both are candidates: the
 * caller keeps only what Ajv says (the generator aims close, Ajv decides), so keywords this file only approximates
 * (`allOf` beside a type, `not`, `if`/`then`/`else`, `oneOf` exclusivity) cost filtered runs, never wrong verdicts.
 *
 * Everything is bounded: strings from a pattern are drawn with `size: "small"` and a length cap, recursion through
 * `$ref` stops at a depth, arrays and open objects stay small but also reach their declared maximum now and then,
 * since a limit's edge is where a document and a service disagree.
 */

export type JsonSchema = boolean | { readonly [key: string]: unknown }
type Obj = { readonly [key: string]: unknown }

export interface SchemaContext {
  /** `components.schemas` of the document, for `#/components/schemas/…` references. */
  readonly schemas: { readonly [name: string]: JsonSchema }
  /** How many references deep a value may go (recursive schemas such as any-JSON stop here). */
  readonly maxDepth?: number
  /** Strings longer than this are not drawn, whatever `maxLength` allows (10 KiB documents are not the point). */
  readonly maxStringLength?: number
  /** A caller's own arbitrary for a schema (real ids of a test account, say), or `undefined` to generate. */
  readonly override?: (schema: JsonSchema) => fc.Arbitrary<unknown> | undefined
}

/** The keys this generator understands; any other validation keyword is a reason to extend it, not to guess. */
const KNOWN = new Set([
  "type",
  "enum",
  "const",
  "pattern",
  "format",
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "properties",
  "required",
  "additionalProperties",
  "patternProperties",
  "propertyNames",
  "maxProperties",
  "minProperties",
  "items",
  "minItems",
  "maxItems",
  "anyOf",
  "oneOf",
  "allOf",
  "not",
  "if",
  "then",
  "else",
  "$ref",
  "description",
  "title",
  "examples",
  "default",
  "deprecated",
  "readOnly",
  "writeOnly",
  "contentEncoding",
  "contentMediaType"
])

const isObj = (value: unknown): value is Obj =>
  value !== null && typeof value === "object" && !Array.isArray(value)

/** A schema that no value satisfies (`false`, `{ not: {} }`): a property with it must be left out. */
export const isNever = (schema: JsonSchema): boolean =>
  schema === false ||
  (isObj(schema) &&
    isObj(schema.not) &&
    Object.keys(schema.not).length === 0 &&
    Object.keys(schema).every((key) => key === "not" || key === "description" || key === "title"))

export const resolve = (schema: JsonSchema, ctx: SchemaContext): JsonSchema => {
  if (!isObj(schema) || typeof schema.$ref !== "string") return schema
  const prefix = "#/components/schemas/"
  if (!schema.$ref.startsWith(prefix)) throw new Error(`unsupported $ref ${schema.$ref}`)
  const target = ctx.schemas[schema.$ref.slice(prefix.length)]
  if (target === undefined) throw new Error(`unresolved $ref ${schema.$ref}`)
  return target
}

/** Whether a schema reaches a `$ref` (where recursion may continue). */
const refers = (schema: unknown): boolean =>
  Array.isArray(schema)
    ? schema.some(refers)
    : isObj(schema) && ("$ref" in schema || Object.values(schema).some(refers))

const typesOf = (schema: Obj): ReadonlyArray<string> =>
  typeof schema.type === "string"
    ? [schema.type]
    : Array.isArray(schema.type)
      ? (schema.type as Array<string>)
      : []

/** Any JSON value, small: what `true` and `{}` accept. */
const anyJson = (): fc.Arbitrary<unknown> =>
  fc.jsonValue({ maxDepth: 2, depthSize: "small" }) as fc.Arbitrary<unknown>

/** `.filter` that throws, rather than loops for ever, when a generator stops meeting its predicate. */
export const boundedFilter = <T>(arb: fc.Arbitrary<T>, keep: (value: T) => boolean, label: string) => {
  let misses = 0
  return arb.filter((value) => {
    if (keep(value)) {
      misses = 0
      return true
    }
    if (++misses > 2_000) throw new Error(`${label}: 2000 candidates in a row refused; the generator is off`)
    return false
  })
}

const num = (value: unknown): number | undefined => (typeof value === "number" ? value : undefined)

/** Characters RFC 3986 does not allow unencoded (`%` included: a bare one is not an escape). */
const NOT_URI = /[^A-Za-z0-9\-._~:/?#@!$&'()*+,;=]/gu

const stringArbitrary = (schema: Obj, ctx: SchemaContext): fc.Arbitrary<string> => {
  const cap = ctx.maxStringLength ?? 300
  const minLength = num(schema.minLength) ?? 0
  const maxLength = Math.min(num(schema.maxLength) ?? cap, cap)
  const inLength = (s: string) => {
    const length = [...s].length
    return length >= minLength && length <= (num(schema.maxLength) ?? Number.POSITIVE_INFINITY)
  }
  if (schema.format === "uuid" && schema.pattern === undefined) return fc.uuid()
  if (typeof schema.pattern === "string") {
    const single = /^\^(\[[^\]]*\])\*\$$/.exec(schema.pattern)
    if (single?.[1] !== undefined) {
      // One character class repeated: draw its characters at any length the schema allows, edges included,
      // astral characters (one code point, two UTF-16 units) too.
      const unit = fc.stringMatching(new RegExp(`^${single[1]}$`, "u"))
      const lengths = fc.oneof(
        { weight: 4, arbitrary: fc.integer({ min: minLength, max: Math.min(maxLength, minLength + 40) }) },
        { weight: 1, arbitrary: fc.constantFrom(minLength, maxLength) }
      )
      return lengths.chain((length) =>
        fc.array(unit, { minLength: length, maxLength: length }).map((units) => units.join(""))
      )
    }
    const drawn = fc.stringMatching(new RegExp(schema.pattern, "u"), {
      size: "small",
      maxLength: Math.max(maxLength, 1)
    })
    return boundedFilter(
      // A URI carries other characters percent-encoded (as a browser sends them); the pattern still holds.
      schema.format === "uri" ? drawn.map((s) => s.replace(NOT_URI, (c) => encodeURIComponent(c))) : drawn,
      inLength,
      `length of /${schema.pattern}/`
    )
  }
  return boundedFilter(
    fc.string({ unit: "grapheme", minLength, maxLength: Math.min(maxLength, minLength + 40) }),
    inLength,
    "string length"
  )
}

const integerArbitrary = (schema: Obj): fc.Arbitrary<number> => {
  const min = num(schema.minimum) ?? (num(schema.exclusiveMinimum) ?? Number.NaN) + 1
  const max = num(schema.maximum) ?? (num(schema.exclusiveMaximum) ?? Number.NaN) - 1
  const lo = Number.isNaN(min) ? Number.MIN_SAFE_INTEGER : min
  const hi = Number.isNaN(max) ? Number.MAX_SAFE_INTEGER : max
  const small = fc.integer({ min: Math.max(lo, -(2 ** 31)), max: Math.min(hi, 2 ** 31 - 1) })
  const edges = fc.constantFrom(lo, hi)
  // The whole safe range only where the schema leaves it open (a filter on a narrow range would never end).
  return lo === Number.MIN_SAFE_INTEGER && hi === Number.MAX_SAFE_INTEGER
    ? fc.oneof(
        { weight: 4, arbitrary: small },
        { weight: 1, arbitrary: edges },
        { weight: 1, arbitrary: fc.maxSafeInteger() }
      )
    : fc.oneof({ weight: 4, arbitrary: small }, { weight: 1, arbitrary: edges })
}

const numberArbitrary = (schema: Obj): fc.Arbitrary<number> =>
  fc.double({
    noNaN: true,
    noDefaultInfinity: true,
    ...(num(schema.minimum) === undefined ? {} : { min: num(schema.minimum) as number }),
    ...(num(schema.maximum) === undefined ? {} : { max: num(schema.maximum) as number })
  })

/** The `if`/`then`/`else` members of an object's `allOf`. */
const conditionalsOf = (schema: Obj): Array<Obj> =>
  (Array.isArray(schema.allOf) ? (schema.allOf as Array<JsonSchema>) : []).filter(
    (s): s is Obj => isObj(s) && isObj(s.if)
  )

/**
 * Whether an `if` of the simple kind (`required` names, `properties` with a `const`) holds for a value;
 * undefined for any other kind (then the value is left as drawn and Ajv judges it).
 */
const simpleIfHolds = (cond: Obj, value: Obj): boolean | undefined => {
  const keys = Object.keys(cond).filter((k) => k !== "required" && k !== "properties")
  if (keys.length > 0) return undefined
  const required = Array.isArray(cond.required) ? (cond.required as Array<string>) : []
  if (!required.every((name) => name in value)) return false
  for (const [name, property] of Object.entries(isObj(cond.properties) ? cond.properties : {})) {
    if (!isObj(property) || Object.keys(property).some((k) => k !== "const")) return undefined
    if (name in value && value[name] !== property.const) return false
  }
  return true
}

/** Drops what the branch each conditional takes forbids (`properties: { name: false }`). */
const keepToConditionals = (conditionals: ReadonlyArray<Obj>, value: Obj): Obj => {
  const out: Record<string, unknown> = { ...value }
  for (const conditional of conditionals) {
    const holds = simpleIfHolds(conditional.if as Obj, out)
    if (holds === undefined) continue
    const branch = holds ? conditional.then : conditional.else
    if (!isObj(branch) || !isObj(branch.properties)) continue
    for (const [name, property] of Object.entries(branch.properties)) if (property === false) delete out[name]
  }
  return out
}

const objectArbitrary = (schema: Obj, ctx: SchemaContext, depth: number): fc.Arbitrary<unknown> => {
  const properties = isObj(schema.properties) ? (schema.properties as Record<string, JsonSchema>) : {}
  const conditionals = conditionalsOf(schema)
  // What a `then` or `else` requires is always drawn, and dropped afterwards where a branch forbids it.
  const required = new Set([
    ...(Array.isArray(schema.required) ? (schema.required as Array<string>) : []),
    ...conditionals.flatMap((c) =>
      [c.then, c.else].flatMap((b) =>
        isObj(b) && Array.isArray(b.required) ? (b.required as Array<string>) : []
      )
    )
  ])
  const model: Record<string, fc.Arbitrary<unknown>> = {}
  for (const [name, property] of Object.entries(properties)) {
    if (isNever(property)) continue
    model[name] = arbitraryOf(property, ctx, depth + 1)
  }
  const declared = fc
    .record(model, { requiredKeys: [...required].filter((name) => name in model) })
    .map((value) => (conditionals.length === 0 ? value : keepToConditionals(conditionals, value as Obj)))
  // Open objects: extra keys from `additionalProperties` or the match-all pattern property.
  const patternAll = isObj(schema.patternProperties)
    ? (schema.patternProperties as Record<string, JsonSchema>)[""]
    : undefined
  const extra =
    patternAll ??
    (schema.additionalProperties === false || schema.additionalProperties === undefined
      ? undefined
      : (schema.additionalProperties as JsonSchema))
  if (extra === undefined) return declared
  const maxProperties = num(schema.maxProperties) ?? 5
  const keys = boundedFilter(
    schema.propertyNames === undefined
      ? fc.string({ minLength: 1, maxLength: 12 })
      : (arbitraryOf(schema.propertyNames as JsonSchema, ctx, depth + 1) as fc.Arbitrary<string>),
    (key) => !(key in properties) && key !== "__proto__",
    "property name"
  )
  // Past the depth, a recursive schema's values stop at null (any-JSON's own branches allow it).
  const values =
    depth >= (ctx.maxDepth ?? 3) && refers(extra) ? fc.constant(null) : arbitraryOf(extra, ctx, depth + 1)
  const count = fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: 0, max: Math.min(maxProperties, 3) }) },
    { weight: 1, arbitrary: fc.constant(maxProperties) }
  )
  return fc
    .tuple(
      declared,
      count.chain((n) =>
        fc.uniqueArray(fc.tuple(keys, values), { minLength: n, maxLength: n, selector: ([k]) => k })
      )
    )
    .map(([base, entries]) => ({ ...(base as object), ...Object.fromEntries(entries) }))
}

/**
 * Values the schema should accept. Unknown keywords throw: a document that grows one should grow this file.
 */
export const arbitraryOf = (schema: JsonSchema, ctx: SchemaContext, depth = 0): fc.Arbitrary<unknown> => {
  const chosen = ctx.override?.(schema)
  if (chosen !== undefined) return chosen
  if (schema === true) return anyJson()
  if (schema === false) throw new Error("no value satisfies `false`")
  for (const key of Object.keys(schema))
    if (!KNOWN.has(key))
      throw new Error(`unsupported keyword ${key} in ${JSON.stringify(schema).slice(0, 120)}`)
  if (typeof schema.$ref === "string") {
    if (depth > (ctx.maxDepth ?? 3) + 2) throw new Error(`references deeper than ${depth}`)
    return arbitraryOf(resolve(schema, ctx), ctx, depth + 1)
  }
  if ("const" in schema) return fc.constant(schema.const)
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as Array<unknown>))
  for (const key of ["anyOf", "oneOf"] as const) {
    const branches = schema[key]
    if (Array.isArray(branches)) {
      // Past the depth only branches that end (no reference, no container) are drawn.
      const ending = (branches as Array<JsonSchema>).filter(
        (b) => !refers(b) && !(isObj(b) && (b.type === "array" || b.type === "object"))
      )
      const usable =
        depth >= (ctx.maxDepth ?? 3) && ending.length > 0 ? ending : (branches as Array<JsonSchema>)
      const { [key]: _, ...rest } = schema
      return fc.oneof(...usable.map((b) => arbitraryOf(mergeBranch(rest, b), ctx, depth + 1)))
    }
  }
  const types = typesOf(schema)
  if (types.length === 0) {
    // Keywords without a type: the first `allOf` member that says what the value is, else any JSON.
    const allOf = Array.isArray(schema.allOf) ? (schema.allOf as Array<JsonSchema>) : []
    const typed = allOf.find((s) => isObj(s) && ("type" in s || "$ref" in s))
    if (typed !== undefined) return arbitraryOf(typed, ctx, depth + 1)
    if (isObj(schema.properties) || Array.isArray(schema.required)) return objectArbitrary(schema, ctx, depth)
    return anyJson()
  }
  return fc.oneof(
    ...types.map((type): fc.Arbitrary<unknown> => {
      switch (type) {
        case "string":
          return stringArbitrary(schema, ctx)
        case "integer":
          return integerArbitrary(schema)
        case "number":
          return numberArbitrary(schema)
        case "boolean":
          return fc.boolean()
        case "null":
          return fc.constant(null)
        case "array": {
          const items = schema.items === undefined ? true : (schema.items as JsonSchema)
          const minItems = num(schema.minItems) ?? 0
          const maxItems = num(schema.maxItems) ?? minItems + 3
          const item =
            depth >= (ctx.maxDepth ?? 3) && refers(items)
              ? fc.constant(null)
              : arbitraryOf(items, ctx, depth + 1)
          return fc.oneof(
            {
              weight: 4,
              arbitrary: fc.array(item, { minLength: minItems, maxLength: Math.min(maxItems, minItems + 3) })
            },
            { weight: 1, arbitrary: fc.array(item, { minLength: maxItems, maxLength: maxItems }) }
          )
        }
        case "object":
          return objectArbitrary(schema, ctx, depth)
        default:
          throw new Error(`unsupported type ${type}`)
      }
    })
  )
}

/** A branch of `anyOf`/`oneOf` with the keywords beside it (the branch wins where both speak). */
const mergeBranch = (rest: Obj, branch: JsonSchema): JsonSchema => {
  const meaningful = Object.keys(rest).filter(
    (k) => !["description", "title", "examples", "default"].includes(k)
  )
  if (meaningful.length === 0) return branch
  if (!isObj(branch)) return branch
  return { allOf: [rest, branch], ...branch }
}

// ---- Values the schema should refuse ------------------------------------------------------------------------

/** A place in a value: the path to it and the schema that speaks for it there (references followed). */
export interface Site {
  readonly path: ReadonlyArray<string | number>
  readonly schema: JsonSchema
  /** The object it sits in, when it is a property, with that object's schema (for missing-required and extra). */
  readonly value: unknown
}

/** Every place of a value the schema describes, root first. `anyOf` branches are followed where the value fits. */
export const sitesOf = (
  value: unknown,
  schema: JsonSchema,
  ctx: SchemaContext,
  path: ReadonlyArray<string | number> = []
): Array<Site> => {
  const here = resolve(schema, ctx)
  const out: Array<Site> = [{ path, schema: here, value }]
  if (!isObj(here)) return out
  if (Array.isArray(value)) {
    const items = here.items as JsonSchema | undefined
    if (items !== undefined)
      for (const [i, item] of value.entries()) out.push(...sitesOf(item, items, ctx, [...path, i]))
  } else if (isObj(value)) {
    const properties = isObj(here.properties) ? (here.properties as Record<string, JsonSchema>) : {}
    for (const [key, item] of Object.entries(value)) {
      const property = properties[key]
      if (property !== undefined) out.push(...sitesOf(item, property, ctx, [...path, key]))
    }
  }
  for (const key of ["anyOf", "oneOf"] as const) {
    const branches = here[key]
    if (!Array.isArray(branches)) continue
    for (const branch of branches as Array<JsonSchema>) {
      const resolved = resolve(branch, ctx)
      if (isObj(resolved) && fitsType(value, typesOf(resolved))) {
        out.push(...sitesOf(value, resolved, ctx, path))
        break
      }
    }
  }
  return out
}

const fitsType = (value: unknown, types: ReadonlyArray<string>): boolean =>
  types.length === 0 ||
  types.some((type) =>
    type === "null"
      ? value === null
      : type === "array"
        ? Array.isArray(value)
        : type === "object"
          ? isObj(value)
          : type === "integer"
            ? Number.isInteger(value)
            : typeof value === type
  )

export type MutationKind =
  | "wrong_type"
  | "out_of_range"
  | "not_an_integer"
  | "pattern_broken"
  | "too_long"
  | "too_short"
  | "control_character"
  | "not_in_enum"
  | "extra_property"
  | "missing_required"
  | "too_many_items"
  | "too_few_items"

export interface Mutation {
  readonly kind: MutationKind
  readonly path: ReadonlyArray<string | number>
  /** The value at `path` afterwards; `undefined` removes it. */
  readonly replacement: unknown
}

const OTHER_TYPES: ReadonlyArray<unknown> = [12, 1.5, true, null, "x", [], {}]

/** Replacements a schema should refuse at one site (the caller keeps those Ajv refuses). */
const mutationsAt = (site: Site, ctx: SchemaContext): Array<Mutation> => {
  const s = site.schema
  const at = (kind: MutationKind, replacement: unknown, path = site.path): Mutation => ({
    kind,
    path,
    replacement
  })
  const out: Array<Mutation> = OTHER_TYPES.filter(
    (v) => typeof v !== typeof site.value || Array.isArray(v) !== Array.isArray(site.value)
  ).map((v) => at("wrong_type", v))
  if (!isObj(s)) return out
  const value = site.value
  if (typeof value === "string") {
    out.push(at("control_character", `${value}\u0001`), at("control_character", `\u001f${value}`))
    out.push(
      at("pattern_broken", `${value}x`),
      at("pattern_broken", `x${value}`),
      at("pattern_broken", value.slice(1))
    )
    out.push(
      at("pattern_broken", `${value} `),
      at("pattern_broken", value.toUpperCase()),
      at("pattern_broken", "")
    )
    out.push(at("pattern_broken", "0"), at("pattern_broken", "-1"), at("pattern_broken", "1.5"))
    if (typeof s.maxLength === "number") out.push(at("too_long", "a".repeat(s.maxLength + 1)))
    if (typeof s.maxLength === "number")
      out.push(at("too_long", `${value}${"7".repeat(Math.max(1, s.maxLength + 1 - [...value].length))}`))
    if (typeof s.minLength === "number" && s.minLength > 0) out.push(at("too_short", ""))
    if (Array.isArray(s.enum))
      out.push(at("not_in_enum", `${value}_`), at("not_in_enum", value.toUpperCase()))
  }
  if (typeof value === "number") {
    if (typeof s.minimum === "number") out.push(at("out_of_range", s.minimum - 1))
    if (typeof s.maximum === "number") out.push(at("out_of_range", s.maximum + 1))
    out.push(at("not_an_integer", value + 0.5), at("wrong_type", String(value)))
  }
  if (Array.isArray(value)) {
    if (typeof s.maxItems === "number" && value.length > 0)
      out.push(
        at(
          "too_many_items",
          Array.from({ length: s.maxItems + 1 }, (_, i) => value[i % value.length])
        )
      )
    if (typeof s.minItems === "number" && s.minItems > 0) out.push(at("too_few_items", []))
  }
  if (isObj(value)) {
    if (s.additionalProperties === false)
      out.push(at("extra_property", "x", [...site.path, "unexpected_field"]))
    if (Array.isArray(s.required))
      for (const name of s.required as Array<string>)
        out.push(at("missing_required", undefined, [...site.path, name]))
  }
  if (Array.isArray(s.enum) && typeof value !== "string") out.push(at("not_in_enum", "not_a_choice"))
  void ctx
  return out
}

/** Every candidate mutation of a value the schema accepts. */
export const mutationsOf = (value: unknown, schema: JsonSchema, ctx: SchemaContext): Array<Mutation> =>
  sitesOf(value, schema, ctx).flatMap((site) => mutationsAt(site, ctx))

/** The value with one mutation applied (a copy; the original is left alone). */
export const applyMutation = (value: unknown, mutation: Mutation): unknown => {
  if (mutation.path.length === 0) return mutation.replacement
  const copy = structuredClone(value) as Record<string | number, unknown>
  let node = copy
  for (const step of mutation.path.slice(0, -1)) node = node[step] as Record<string | number, unknown>
  const last = mutation.path[mutation.path.length - 1] as string | number
  if (mutation.replacement === undefined) delete node[last]
  else node[last] = mutation.replacement
  return copy
}
