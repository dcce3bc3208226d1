import { TEXT_PATTERN } from "../../services/domain/Text"
import { AllErrors } from "./Errors"
import { envelopeOpenApi } from "./OpenApiErrors"

/**
 * The last step of `/openapi.json`: what the schemas cannot say about themselves, added in one place, so the
 * document is exact for the tools that read it (Ajv, Prism, generators). Error bodies become the envelope; the
 * keyword ids Effect writes for `Schema.Unknown` and `Schema.Never` go; the bearer credential splits into its two
 * kinds; every header the service answers with is declared on the responses that carry it.
 */

type Json = Record<string, unknown>
interface Operation {
  operationId?: string
  security?: Array<Record<string, Array<string>>>
  responses: Record<string, { description: string; headers?: Json; content?: Json }>
}
type Spec = Json & {
  paths?: Record<string, Record<string, Operation>>
  components?: Json & { schemas?: Json; securitySchemes?: Json; headers?: Json }
}

/**
 * Effect writes `$id: "/schemas/unknown"` (any value) and `$id: "/schemas/never"` (no value) inline wherever
 * `Schema.Unknown` or `Schema.Never` appears, so one document repeats the same `$id`, which JSON Schema forbids
 * (Ajv refuses the whole document). The schemas mean the same without the id and its `title`.
 */
const KEYWORD_IDS = new Set(["/schemas/unknown", "/schemas/never", "/schemas/any", "/schemas/void"])
const dropKeywordIds = (node: unknown): void => {
  if (Array.isArray(node)) {
    for (const item of node) dropKeywordIds(item)
    return
  }
  if (node === null || typeof node !== "object") return
  const schema = node as Json
  if (typeof schema.$id === "string" && KEYWORD_IDS.has(schema.$id)) {
    if (schema.title === schema.$id.slice("/schemas/".length)) delete schema.title
    delete schema.$id
  }
  for (const value of Object.values(schema)) dropKeywordIds(value)
}

/**
 * The text rule holds for every string a caller sends (JsonBody.ts checks every string and key of a body, and every
 * query name and value), whatever the field's own schema: each string of a request schema carries it, keys of open
 * objects too, and an "any value" field becomes any JSON value whose strings keep it.
 */
const TEXT = { type: "string", pattern: TEXT_PATTERN }
const ANY_TEXT_JSON = "JsonValue"
const anyTextJson = {
  description: "Any JSON value; its strings and keys are text (no C0 control but tab, LF and CR).",
  anyOf: [
    TEXT,
    { type: "number" },
    { type: "boolean" },
    { type: "null" },
    { type: "array", items: { $ref: `#/components/schemas/${ANY_TEXT_JSON}` } },
    {
      type: "object",
      propertyNames: TEXT,
      additionalProperties: { $ref: `#/components/schemas/${ANY_TEXT_JSON}` }
    }
  ]
}
/**
 * A pattern of explicit characters only cannot match a control character; one with a negated class, `.` or `\s`
 * (which takes vertical tab and form feed) may.
 */
const mayMatchControls = (pattern: string) => /\[\^|(?<!\\)\.|\\[SDWPs]/.test(pattern)

const holdTextRule = (node: unknown, schemas: Json, seen: Set<string>): void => {
  if (Array.isArray(node)) {
    for (const item of node) holdTextRule(item, schemas, seen)
    return
  }
  if (node === null || typeof node !== "object") return
  const schema = node as Json
  if (typeof schema.$ref === "string") {
    const name = schema.$ref.replace("#/components/schemas/", "")
    if (!seen.has(name)) {
      seen.add(name)
      holdTextRule(schemas[name], schemas, seen)
    }
  }
  if (schema.type === "string" && schema.const === undefined && schema.enum === undefined) {
    if (typeof schema.pattern !== "string") schema.pattern = TEXT_PATTERN
    else if (
      schema.pattern !== TEXT_PATTERN &&
      mayMatchControls(schema.pattern) &&
      !(Array.isArray(schema.allOf) && schema.allOf.some((s) => (s as Json).pattern === TEXT_PATTERN))
    )
      schema.allOf = [...((schema.allOf as Array<unknown> | undefined) ?? []), { ...TEXT }]
  }
  if (schema.type === "object" && schema.additionalProperties !== false && schema.propertyNames === undefined)
    schema.propertyNames = { ...TEXT }
  for (const key of ["additionalProperties", "items"] as const) {
    const value = schema[key]
    if (value !== null && typeof value === "object" && Object.keys(value).length === 0)
      schema[key] = { $ref: `#/components/schemas/${ANY_TEXT_JSON}` }
  }
  for (const [key, value] of Object.entries(schema)) {
    if (key === "examples" || key === "const" || key === "enum" || key === "default") continue
    if (key === "properties" && value !== null && typeof value === "object") {
      for (const [name, property] of Object.entries(value as Json)) {
        if (property !== null && typeof property === "object" && Object.keys(property).length === 0)
          (value as Json)[name] = { $ref: `#/components/schemas/${ANY_TEXT_JSON}` }
        else holdTextRule(property, schemas, seen)
      }
    } else holdTextRule(value, schemas, seen)
  }
}

const requestsHoldTextRule = (spec: Spec) => {
  const schemas = (spec.components?.schemas ?? {}) as Json
  schemas[ANY_TEXT_JSON] = anyTextJson
  const seen = new Set<string>([ANY_TEXT_JSON])
  for (const item of Object.values(spec.paths ?? {})) {
    for (const op of Object.values(item) as Array<
      Operation & { parameters?: Array<Json>; requestBody?: Json }
    >) {
      for (const parameter of op.parameters ?? [])
        if (parameter.in !== "path") holdTextRule(parameter.schema, schemas, seen)
      holdTextRule(op.requestBody, schemas, seen)
    }
  }
}

const refsIn = (node: unknown, out: Set<string> = new Set()): Set<string> => {
  if (Array.isArray(node)) for (const item of node) refsIn(item, out)
  else if (node !== null && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string") out.add(value.replace("#/components/schemas/", ""))
      else refsIn(value, out)
    }
  }
  return out
}

/**
 * One bearer header, two credentials: an API key (integrations; spends the rate limit) or a dashboard session.
 * A route that can refuse an API key with `identity_unauthorized` is for sessions only, and names only that scheme.
 */
const securitySchemes = {
  api_key: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "API key",
    description:
      "An API key: `service_test_…` in the sandbox, `service_live_…` in production. Full account authority; each call spends one token of the account's rate limit (`X-RateLimit-*` on every answer)."
  },
  session: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "session token",
    description:
      "A dashboard session token (`session_…`), from signing in to the dashboard. Full account authority, no rate-limit token; the only credential the account's people routes (keys, members, sessions, passkeys, audit log, resume) take."
  }
} as const

const isSessionOnly = (op: Operation) => refsIn(op.responses["401"]).has("IdentityUnauthorized")

const splitBearer = (spec: Spec) => {
  const components = spec.components ?? {}
  const schemes = (components.securitySchemes ?? {}) as Json
  if (!("bearer" in schemes)) return
  delete schemes.bearer
  Object.assign(schemes, securitySchemes)
  components.securitySchemes = schemes
  for (const item of Object.values(spec.paths ?? {})) {
    for (const op of Object.values(item)) {
      if (!op.security?.some((requirement) => "bearer" in requirement)) continue
      op.security = isSessionOnly(op) ? [{ session: [] }] : [{ api_key: [] }, { session: [] }]
    }
  }
}

const header = (description: string, schema: Json = { type: "string" }) => ({ description, schema })

/** Every header the service's answers carry, declared once and referred to from each response. */
const headers = {
  "X-Request-Id": header(
    "The request's id: the caller's `X-Request-Id` when it is 1 to 128 printable bytes, else a UUIDv7. The error body's `request_id` is the same.",
    { type: "string", minLength: 1, maxLength: 128 }
  ),
  "Cache-Control": header(
    "`no-store` unless the route says otherwise: answers carry secrets and account data."
  ),
  "X-Content-Type-Options": header("Always `nosniff`.", { type: "string", const: "nosniff" }),
  "Strict-Transport-Security": header(
    "Behind HTTPS only (`max-age=63072000; includeSubDomains`): browsers keep to HTTPS."
  ),
  Vary: header(
    "`Origin` on merchant routes and payer writes, whose CORS answer depends on the caller's origin."
  ),
  "Access-Control-Allow-Origin": header(
    "CORS: `*` on payer reads and health; the dashboard's origin (or a sandboxed page's `null`) on merchant routes; the checkout's origin on payer writes."
  ),
  "Access-Control-Expose-Headers": header(
    "CORS: the headers a browser page may read, with the origin it allows."
  ),
  "X-RateLimit-Limit": header("API-key calls: the account's bucket size.", {
    type: "string",
    pattern: "^\\d+$"
  }),
  "X-RateLimit-Remaining": header("API-key calls: tokens left in the bucket after this call.", {
    type: "string",
    pattern: "^\\d+$"
  }),
  "X-RateLimit-Reset": header("API-key calls: Unix seconds when the bucket is full again.", {
    type: "string",
    pattern: "^\\d+$"
  }),
  "Retry-After": header("Seconds to wait before trying again.", { type: "string", pattern: "^\\d+$" }),
  "WWW-Authenticate": header('On a missing or refused credential: `Bearer realm="deposits"`.'),
  "Idempotency-Replayed": header("`true`: this answer replays the first create made with the same key.", {
    type: "string",
    const: "true"
  }),
  "Content-Disposition": header("An attachment's file name: the body is meant to be saved as a file.")
} as const
type HeaderName = keyof typeof headers

/**
 * A reference to the header's component: one per header and required-ness (a reference cannot say `required`
 * beside itself), made when first used.
 */
const referTo = (used: Json) => (name: HeaderName, required: boolean) => {
  const component = `${name.replaceAll("-", "")}${required ? "" : "Optional"}`
  used[component] ??= { ...headers[name], required }
  return { $ref: `#/components/headers/${component}` }
}

/** The headers each public error adds, by its component name (the error's tag), from the classes' own facts. */
const errorHeaders: Record<string, ReadonlyArray<string>> = Object.fromEntries(
  AllErrors.map((ErrorClass) => [
    ErrorClass._tag,
    Object.keys((ErrorClass as unknown as { facts: { headers: Record<string, string> } }).facts.headers)
  ])
)
const canonical = new Map(Object.keys(headers).map((name) => [name.toLowerCase(), name as HeaderName]))

/** Operations whose success is a file to save, by operation id. */
const FILE_ANSWERS = new Set(["machine.definition", "steps.statelyExport"])

const declareHeaders = (spec: Spec) => {
  const components = spec.components ?? {}
  const used: Json = {}
  const ref = referTo(used)
  for (const [path, item] of Object.entries(spec.paths ?? {})) {
    for (const [method, op] of Object.entries(item)) {
      const apiKey = op.security?.some((requirement) => "api_key" in requirement) === true
      const payer = path.startsWith("/v1/payer/")
      const publicRead = (payer && method === "get") || path === "/v1/health"
      for (const [status, response] of Object.entries(op.responses)) {
        const declared: Json = {
          "X-Request-Id": ref("X-Request-Id", true),
          "Cache-Control": ref("Cache-Control", true),
          "X-Content-Type-Options": ref("X-Content-Type-Options", true),
          "Strict-Transport-Security": ref("Strict-Transport-Security", false)
        }
        if (publicRead) {
          declared["Access-Control-Allow-Origin"] = ref("Access-Control-Allow-Origin", true)
          declared["Access-Control-Expose-Headers"] = ref("Access-Control-Expose-Headers", true)
        } else {
          declared.Vary = ref("Vary", true)
          declared["Access-Control-Allow-Origin"] = ref("Access-Control-Allow-Origin", false)
          declared["Access-Control-Expose-Headers"] = ref("Access-Control-Expose-Headers", false)
        }
        // A refused credential is refused before the bucket is read; any other answer to an API key carries them.
        if (apiKey && status !== "401") {
          for (const name of ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"] as const)
            declared[name] = ref(name, false)
        }
        const errors = [...refsIn(response.content)].filter((name) => name in errorHeaders)
        for (const lower of new Set(errors.flatMap((name) => errorHeaders[name] ?? []))) {
          const name = canonical.get(lower)
          if (name === undefined) continue
          declared[name] = ref(
            name,
            errors.every((error) => errorHeaders[error]?.includes(lower))
          )
        }
        if (op.operationId === "depositRequests.create" && status === "200")
          declared["Idempotency-Replayed"] = ref("Idempotency-Replayed", true)
        if (op.operationId !== undefined && FILE_ANSWERS.has(op.operationId) && status === "200")
          declared["Content-Disposition"] = ref("Content-Disposition", true)
        response.headers = declared
      }
    }
  }
  components.headers = Object.fromEntries(Object.entries(used).sort(([a], [b]) => a.localeCompare(b)))
}

/** The document `/openapi.json` serves: Effect's, made exact. Mutates and returns it (Effect caches the result). */
export const publishedDocument = <S extends Spec>(spec: S): S => {
  envelopeOpenApi(spec)
  dropKeywordIds(spec)
  requestsHoldTextRule(spec)
  splitBearer(spec)
  declareHeaders(spec)
  return spec
}
