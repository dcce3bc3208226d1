import { CliError, type CliValues, withDocs } from "./Output"

/** The environment variable the key is read from when `--key` is not given. */
export const API_KEY_ENV = "DEPOSITS_API_KEY"

/** The API's error envelope as one line, and the link to its code's docs. */
export const refusalOf = async (res: Response): Promise<{ line: string; docUrl: string | undefined }> => {
  const text = await res.text()
  try {
    const body = JSON.parse(text) as { error?: { code?: string; message?: string; doc_url?: string } }
    return {
      line: `${res.status} ${body.error?.code ?? ""}: ${body.error?.message ?? text}`,
      docUrl: body.error?.doc_url
    }
  } catch {
    return { line: `${res.status}: ${text.slice(0, 200)}`, docUrl: undefined }
  }
}

/** The API's error envelope as stderr prints it: its line, and its docs link under it. */
export const refusal = async (res: Response) => {
  const { line, docUrl } = await refusalOf(res)
  return withDocs(line, docUrl)
}

/** `--key`, else `DEPOSITS_API_KEY`. */
export const apiKeyOf = (values: CliValues) => {
  const key = values.key ?? process.env[API_KEY_ENV]
  if (key === undefined || key === "")
    throw new CliError(`an API key is needed: --key KEY, or ${API_KEY_ENV} in the environment`)
  return key
}

/**
 * Calls the API with the key: a JSON body makes it a POST; an unreachable service is a `CliError` that names the
 * setting to fix.
 */
export const apiCaller =
  (api: string, key: string) =>
  (method: "GET" | "POST", path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${api}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    }).catch((e: unknown) => {
      const cause = e instanceof Error && e.cause instanceof Error ? e.cause.message : String(e)
      throw new CliError(`cannot reach the service at ${api} (${cause}); set --api to its URL`)
    })

export type ApiCall = ReturnType<typeof apiCaller>

/** The answer's JSON when it has the expected status, else the refusal as a `CliError` naming what was tried. */
export const expectJson = async <T>(res: Response, status: number, what: string): Promise<T> => {
  if (res.status !== status) throw new CliError(`${what} was refused: ${await refusal(res)}`)
  return (await res.json()) as T
}
