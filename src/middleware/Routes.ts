import { HttpApi } from "@effect/platform"

/** The methods each path pattern answers, so an unmatched request can tell 404 from 405. */
export const makeRouteLookup = (
  api: HttpApi.HttpApi.Any,
  extra: ReadonlyArray<readonly [string, string]> = []
) => {
  const routes: Array<{ readonly method: string; readonly regex: RegExp }> = []
  const add = (method: string, path: string) => {
    const pattern = path
      .split("/")
      .map((segment) => (segment.startsWith(":") ? "[^/]+" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
      .join("/")
    routes.push({ method, regex: new RegExp(`^${pattern}/?$`) })
  }
  HttpApi.reflect(api as HttpApi.HttpApi.AnyWithProps, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => add(endpoint.method, endpoint.path)
  })
  for (const [method, path] of extra) add(method, path)
  return (_method: string, path: string): ReadonlyArray<string> => [
    ...new Set(routes.filter((r) => r.regex.test(path)).map((r) => r.method))
  ]
}
