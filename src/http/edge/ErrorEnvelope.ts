import { HttpApi, HttpApiError, HttpServerError } from "@effect/platform"
import { Cause, Option, type SchemaAST as AST } from "effect"
import { Api } from "../Api"
import { unexpectedError } from "../middleware/ErrorBody"
import {
  type ApiError,
  InvalidRequest,
  isApiError,
  MethodNotAllowed,
  NotFound,
  RouteNotFound
} from "../Errors"
import type { RouteMatch } from "../middleware/Routes"

type IssuePath = ReadonlyArray<PropertyKey>

/** Request headers the API declares (decoded with the payload's rules, but named as headers in answers). */
let headerNames: Set<string> | undefined
const declaredHeaders = (): ReadonlySet<string> => {
  if (headerNames !== undefined) return headerNames
  const names = new Set<string>()
  HttpApi.reflect(Api as unknown as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      if (Option.isSome(endpoint.headersSchema)) {
        for (const name of fieldsOf(endpoint.headersSchema.value.ast, [])) names.add(name)
      }
    }
  })
  headerNames = names
  return names
}

/** `idempotency-key` → `Idempotency-Key`, as a reader writes a header's name. */
const headerName = (name: string) =>
  name.replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => dash + letter.toUpperCase())

/** The property names of the struct a schema decodes at `path` (through refinements, transformations, nulls). */
const fieldsOf = (ast: AST.AST, path: IssuePath): ReadonlyArray<string> => {
  switch (ast._tag) {
    case "TypeLiteral": {
      if (path.length === 0) return ast.propertySignatures.map((p) => String(p.name))
      const next = ast.propertySignatures.find((p) => p.name === path[0])
      return next === undefined ? [] : fieldsOf(next.type, path.slice(1))
    }
    case "Refinement":
      return fieldsOf(ast.from, path)
    case "Transformation":
      return fieldsOf(ast.from, path)
    case "Suspend":
      return fieldsOf(ast.f(), path)
    case "Union":
      for (const member of ast.types) {
        const names = fieldsOf(member, path)
        if (names.length > 0) return names
      }
      return []
    default:
      return []
  }
}

const payloadFields = new Map<string, AST.AST>()
let payloadFieldsBuilt = false
/** The payload schema of the route `method template`, read from the API once, on the first decode failure. */
const payloadOf = (method: string, template: string | undefined): AST.AST | undefined => {
  if (!payloadFieldsBuilt) {
    payloadFieldsBuilt = true
    HttpApi.reflect(Api as unknown as HttpApi.HttpApi.AnyWithProps, {
      onGroup: () => {},
      onEndpoint: ({ endpoint }) => {
        if (Option.isSome(endpoint.payloadSchema)) {
          payloadFields.set(`${endpoint.method} ${endpoint.path}`, endpoint.payloadSchema.value.ast)
        }
      }
    })
  }
  return template === undefined ? undefined : payloadFields.get(`${method} ${template}`)
}

const squeeze = (name: string) => name.toLowerCase().replace(/[-_\s]/g, "")

const editDistance = (a: string, b: string) => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)
      )
    }
    previous = current
  }
  return previous[b.length]!
}

/**
 * The known field an unknown one most likely meant: the same name in another case or spelling (`displayName`), a
 * qualified form of it (`name` → `display_name`, `email` → `support_email`), or a slip of a letter or two.
 */
export const nearestField = (unknown: string, known: ReadonlyArray<string>): string | undefined => {
  const wanted = squeeze(unknown)
  if (wanted === "") return undefined
  let best: { readonly name: string; readonly score: number } | undefined
  for (const name of known) {
    const squeezed = squeeze(name)
    const score =
      squeezed === wanted
        ? 0
        : name.endsWith(`_${unknown}`) || name.startsWith(`${unknown}_`)
          ? 1
          : editDistance(wanted, squeezed) <= (wanted.length <= 4 ? 1 : 2)
            ? 1 + editDistance(wanted, squeezed)
            : undefined
    if (score !== undefined && (best === undefined || score < best.score)) best = { name, score }
  }
  return best?.name
}

/**
 * Effect's own refinement message, `Expected <description>, actual <value>`, as a sentence about the field:
 * `must be an https:// URL (got "http://x")`.
 */
const rephrase = (message: string) => {
  const match = /^Expected ([\s\S]+?)\.?, actual ([\s\S]*)$/.exec(message)
  if (match === null) return message
  const expected = match[1]!
  const got = match[2]!
  const what = expected.includes(" | ")
    ? `one of ${expected.split(" | ").join(", ")}`
    : // Effect's own descriptions already carry their article, in either case ("a string at most …").
      /^(a|an|the) /i.test(expected)
      ? expected.charAt(0).toLowerCase() + expected.slice(1)
      : /^[aeiou]/i.test(expected)
        ? `an ${expected}`
        : `a ${expected}`
  return `must be ${what} (got ${got})`
}

const describeIssue = (
  issue: { readonly path: IssuePath; readonly message: string; readonly _tag: string },
  payload: AST.AST | undefined
) => {
  const head = issue.path[0]
  if (issue.path.length === 1 && typeof head === "string" && declaredHeaders().has(head)) {
    const header = headerName(head)
    return {
      param: header,
      message:
        issue._tag === "Missing"
          ? `missing required header '${header}'`
          : `the ${header} header ${rephrase(issue.message)}`
    }
  }
  const param = issue.path.map(String).join(".")
  if (issue._tag === "Unexpected") {
    const field = issue.path[issue.path.length - 1]
    const meant =
      payload === undefined || typeof field !== "string"
        ? undefined
        : nearestField(field, fieldsOf(payload, issue.path.slice(0, -1)))
    const name =
      meant === undefined ? param : `${issue.path.slice(0, -1).map(String).concat(meant).join(".")}`
    return {
      param,
      message: `unknown field${param === "" ? "" : ` '${param}'`}${meant === undefined ? "" : `; did you mean '${name}'?`}`
    }
  }
  const message =
    issue._tag === "Missing"
      ? `missing required field '${param}'`
      : `${param === "" ? "body" : `'${param}'`}: ${rephrase(issue.message)}`
  return { param, message }
}

/** A schema decode failure names the first offending field (and, for an unknown one, the field it likely meant). */
export const fromDecodeError = (
  error: HttpApiError.HttpApiDecodeError,
  payload?: AST.AST | undefined
): InvalidRequest => {
  const first = error.issues[0]
  if (first === undefined) return new InvalidRequest({ message: error.message })
  const { param, message } = describeIssue(first, payload)
  return new InvalidRequest(param === "" ? { message } : { message, param })
}

export type RouteLookup = (method: string, path: string) => RouteMatch

/**
 * Turns whatever a request ended with into one of the table's errors: typed API errors as they are, schema and
 * JSON failures as `invalid_request`, unmatched routes as 404/405, and anything else as a logged 500.
 */
export const classifyCause = (
  cause: Cause.Cause<unknown>,
  methodsForPath: RouteLookup,
  method: string,
  path: string
): { readonly error: ApiError; readonly unexpected: boolean } => {
  const failure = Cause.failureOption(cause)
  const squashed = Option.isSome(failure) ? failure.value : Cause.squash(cause)
  if (isApiError(squashed)) return { error: squashed, unexpected: false }
  if (squashed instanceof HttpApiError.HttpApiDecodeError)
    return {
      error: fromDecodeError(squashed, payloadOf(method, methodsForPath(method, path).template)),
      unexpected: false
    }
  if (HttpServerError.isServerError(squashed)) {
    if (squashed._tag === "RouteNotFound") {
      const { allow, resource } = methodsForPath(method, path)
      // A pattern of this very method matched, so the router refused the id itself (undecodable, too long).
      if (resource !== undefined) return { error: NotFound.of(resource), unexpected: false }
      return allow.length > 0
        ? {
            error: new MethodNotAllowed({ message: `${method} is not allowed on ${path}.`, allow }),
            unexpected: false
          }
        : { error: new RouteNotFound({ message: `No route for ${method} ${path}.` }), unexpected: false }
    }
    if (squashed._tag === "RequestError" && squashed.reason === "Decode") {
      return {
        error: new InvalidRequest({ message: "The body is not valid JSON.", param: "body" }),
        unexpected: false
      }
    }
  }
  return { error: unexpectedError(cause), unexpected: true }
}
