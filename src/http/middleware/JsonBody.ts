import { textProblem } from "../../../services/domain/Text"

/**
 * How deep a body may nest arrays and objects. Ours nest two levels (metadata); the limit only has to stop bodies
 * that would overflow the stack of the schema decoder and of error formatting, which recurse.
 */
export const MAX_JSON_DEPTH = 32

export interface BodyProblem {
  readonly message: string
  readonly param: string
}

/** Only `application/json`, with a UTF-8 charset when one is named (the body is read as UTF-8). */
export const isJsonContentType = (contentType: string): boolean => {
  const [media = "", ...params] = contentType.split(";")
  if (media.trim().toLowerCase() !== "application/json") return false
  for (const param of params) {
    const [name = "", value = ""] = param.split("=")
    if (name.trim().toLowerCase() === "charset" && !/^"?utf-8"?$/i.test(value.trim())) return false
  }
  return true
}

const QUOTE = 34
const BACKSLASH = 92
const OPEN_ARRAY = 91
const OPEN_OBJECT = 123
const CLOSE_ARRAY = 93
const CLOSE_OBJECT = 125

/**
 * Checks a body before it is decoded: nesting depth (one pass, no recursion), then, only when the body holds an
 * escape, every key and string against the text rule. JSON forbids control characters and lone surrogates raw, so
 * an escape is the only way either gets in. Malformed JSON passes: the decoder names it.
 */
export const checkJsonBody = (text: string): BodyProblem | undefined => {
  let depth = 0
  let inString = false
  let escaped = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === BACKSLASH) {
        escaped = true
        i++
      } else if (c === QUOTE) inString = false
    } else if (c === QUOTE) inString = true
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > MAX_JSON_DEPTH) {
        return {
          message: `The body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.`,
          param: "body"
        }
      }
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--
  }
  if (!escaped) return undefined
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  return findBadText(value)
}

/** The first key or string value that breaks the text rule, named by its path (`metadata.note`, `items.2`). */
const findBadText = (root: unknown): BodyProblem | undefined => {
  const stack: Array<readonly [unknown, string]> = [[root, ""]]
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [value, path] = next
    if (typeof value === "string") {
      const problem = textProblem(value)
      if (problem !== undefined) return { message: `'${path || "body"}' ${problem}.`, param: path || "body" }
    } else if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) {
        stack.push([value[index], path === "" ? String(index) : `${path}.${index}`])
      }
    } else if (typeof value === "object" && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        const at = path === "" ? key : `${path}.${key}`
        const problem = textProblem(key)
        if (problem !== undefined) return { message: `A key of '${path || "body"}' ${problem}.`, param: at }
        stack.push([item, at])
      }
    }
  }
  return undefined
}

/** The first query parameter (name or value) that breaks the text rule. */
export const checkQuery = (query: string): BodyProblem | undefined => {
  for (const [name, value] of new URLSearchParams(query)) {
    const problem = textProblem(name) ?? textProblem(value)
    if (problem !== undefined) return { message: `Query parameter '${name}' ${problem}.`, param: name }
  }
  return undefined
}
