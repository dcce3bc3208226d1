import { Effect, Either, Option, ParseResult, Schema } from "effect"
import type { StreamMessage } from "./Contract"

/** Where a message failed its schema and how, bounded (a hostile message must not make the log line huge). */
const reasonOf = (error: ParseResult.ParseError) => {
  try {
    return ParseResult.ArrayFormatter.formatErrorSync(error)
      .slice(0, 5)
      .map((issue) => `${issue.path.join(".") || "message"}: ${issue.message}`.slice(0, 200))
      .join("; ")
  } catch {
    return "unreadable"
  }
}

/**
 * A stream's messages of one kind, decoded where they enter the room: the JSON text through the kind's schema. A
 * message the schema refuses can never be handled, whatever its delivery: it is logged and termed (never delivered
 * again, never redelivered forever), and the answer is `None`.
 */
export const messageDecoder = <A, I>(stream: string, schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeEither(Schema.parseJson(schema))
  return (message: StreamMessage): Effect.Effect<Option.Option<A>> => {
    const decoded = decode(message.data)
    if (Either.isRight(decoded)) return Effect.succeed(Option.some(decoded.right))
    return Effect.zipRight(
      Effect.logError(`${stream} stream: dropped a malformed message ${message.seq}`, reasonOf(decoded.left)),
      Effect.sync(() => {
        message.term()
        return Option.none()
      })
    )
  }
}
