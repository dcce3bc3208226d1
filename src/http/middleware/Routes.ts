import { HttpApi } from "@effect/platform"
import { idPrefixes } from "../../../services/domain/PrefixedId"

type ResourceName = (typeof idPrefixes)[keyof typeof idPrefixes]
const resourceNames = new Set<string>(Object.values(idPrefixes))

/**
 * The resource a path's first id names, from the collection before it (`/deposit-requests/:id` → deposit_request,
 * `/webhook-listeners/:id` → webhook).
 */
const resourceOf = (path: string): ResourceName | undefined => {
  const segments = path.split("/")
  const at = segments.findIndex((segment) => segment.startsWith(":"))
  const collection = (segments[at - 1] ?? "").replaceAll("-", "_")
  // A sub-collection of a resource (`webhook-listeners`, whose ids are `wh_`) names it by its first word.
  const head = collection.split("_")[0] ?? ""
  for (const singular of [collection.replace(/es$/, ""), collection.replace(/s$/, ""), head]) {
    if (resourceNames.has(singular)) return singular as ResourceName
  }
  return undefined
}

export interface RouteMatch {
  /** Methods the path's pattern answers. */
  readonly allow: ReadonlyArray<string>
  /** The resource of the id in the path, when a pattern with this method matched it. */
  readonly resource: ResourceName | undefined
  /** The route's path template (`/v1/deposit-requests/:id`) when a pattern with this method matched. */
  readonly template: string | undefined
}

/**
 * The methods each path pattern answers, so an unmatched request can tell 404 from 405; and, when a pattern of the
 * request's own method matches but the router refused it (an id it cannot decode, or longer than it takes), the
 * resource whose `<resource>_not_found` answers.
 */
export const makeRouteLookup = (
  api: HttpApi.HttpApi.Any,
  extra: ReadonlyArray<readonly [string, string]> = []
) => {
  const routes: Array<{
    readonly method: string
    readonly regex: RegExp
    readonly resource: ResourceName | undefined
    readonly template: string
  }> = []
  const add = (method: string, path: string) => {
    const pattern = path
      .split("/")
      .map((segment) => (segment.startsWith(":") ? "[^/]+" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
      .join("/")
    routes.push({ method, regex: new RegExp(`^${pattern}/?$`), resource: resourceOf(path), template: path })
  }
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => add(endpoint.method, endpoint.path)
  })
  for (const [method, path] of extra) add(method, path)
  return (method: string, path: string): RouteMatch => {
    const matching = routes.filter((r) => r.regex.test(path))
    const own = matching.find((r) => r.method === method)
    return {
      allow: [...new Set(matching.map((r) => r.method))],
      resource: own?.resource,
      template: own?.template
    }
  }
}
