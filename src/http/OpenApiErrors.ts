import { codesOf as errorCodesOf } from "./Errors"

// The platform's decode failure is answered as invalid_request by the edge.
const codesOf = { ...errorCodesOf, HttpApiDecodeError: ["invalid_request"] }

type Spec = { components?: { schemas?: Record<string, unknown> } } & Record<string, unknown>

/**
 * Errors are tagged classes in code, but the edge renders every one as the same envelope; the published
 * document describes that envelope, with the codes each error can carry.
 */
export const envelopeOpenApi = (spec: Spec): Spec => {
  const schemas = spec.components?.schemas
  if (schemas === undefined) return spec
  for (const [name, codes] of Object.entries(codesOf)) {
    if (!(name in schemas)) continue
    schemas[name] = {
      type: "object",
      description: `Error envelope. \`error.code\` is one of: ${codes.map((c) => `\`${c}\``).join(", ")}.`,
      required: ["error", "request_id"],
      properties: {
        error: {
          type: "object",
          required: ["code", "message", "doc_url"],
          properties: {
            code: { type: "string", enum: [...codes] },
            message: {
              type: "string",
              description: "What went wrong and what to fix; names the field for invalid_request."
            },
            ...(name === "InvalidRequest" || name === "HttpApiDecodeError"
              ? { param: { type: "string", description: "The offending field, dotted for nested fields." } }
              : {}),
            doc_url: {
              type: "string",
              format: "uri",
              description:
                "The code's line on the service's error page: `PUBLIC_BASE_URL/docs/errors#<code>`, with what it means and what to do."
            }
          }
        },
        request_id: { type: "string", description: "Same as the X-Request-Id header." }
      }
    }
  }
  return spec
}
