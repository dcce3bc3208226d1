import { SqlError } from "@effect/sql/SqlError"
import { Cause, Runtime } from "effect"
import { describe, expect, it } from "vitest"
import {
  isDatabaseUnavailable,
  isWriteConflict,
  mayBeOneCallers,
  sqlStateOf
} from "../../../services/platform/SqlFailure"

const pgError = (code: string, message: string) => Object.assign(new Error(message), { code })

describe("isDatabaseUnavailable", () => {
  it.each([
    [
      "connection refused, wrapped",
      new SqlError({
        cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" })
      })
    ],
    [
      "the server shutting down (57P01)",
      new SqlError({ cause: pgError("57P01", "terminating connection due to administrator command") })
    ],
    ["the server starting up (57P03)", pgError("57P03", "the database system is starting up")],
    ["a connection exception (08006)", pgError("08006", "connection failure")],
    ["too many connections (53300)", pgError("53300", "sorry, too many clients already")],
    [
      "a connection that ended mid-statement",
      new SqlError({ cause: new Error("Connection terminated unexpectedly") })
    ],
    ["a pool that could not connect in time", new Error("timeout exceeded when trying to connect")],
    ["one of several causes", new AggregateError([new Error("x"), pgError("ECONNRESET", "read ECONNRESET")])],
    [
      "a refused connection rethrown by runPromise (a shared read)",
      Runtime.makeFiberFailure(
        Cause.fail(
          new SqlError({
            message: "Failed to acquire connection",
            cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" })
          })
        )
      )
    ]
  ])("says yes for %s", (_, failure) => {
    expect(isDatabaseUnavailable(failure)).toBe(true)
  })

  it.each([
    [
      "a unique violation",
      new SqlError({ cause: pgError("23505", "duplicate key value violates unique constraint") })
    ],
    ["a syntax error", pgError("42601", "syntax error at or near")],
    ["a serialization failure", pgError("40001", "could not serialize access")],
    ["a plain defect", new Error("boom")],
    ["nothing", undefined]
  ])("says no for %s", (_, failure) => {
    expect(isDatabaseUnavailable(failure)).toBe(false)
  })
})

describe("sqlStateOf", () => {
  it("reads the server's SQLSTATE from an SqlError, and nothing else", () => {
    expect(sqlStateOf(new SqlError({ cause: pgError("23505", "duplicate key") }))).toBe("23505")
    expect(
      sqlStateOf(new SqlError({ cause: pgError("ECONNREFUSED", "connect ECONNREFUSED") }))
    ).toBeUndefined()
    expect(sqlStateOf(pgError("23505", "not wrapped"))).toBeUndefined()
    expect(sqlStateOf(undefined)).toBeUndefined()
  })
})

describe("isWriteConflict", () => {
  it.each([
    ["a deadlock (40P01)", pgError("40P01", "deadlock detected")],
    [
      "a serialization failure (40001)",
      pgError("40001", "could not serialize access due to concurrent update")
    ]
  ])("says yes for %s", (_, cause) => {
    expect(isWriteConflict(new SqlError({ cause }))).toBe(true)
  })
  it.each([
    [
      "a unique violation",
      new SqlError({ cause: pgError("23505", "duplicate key value violates unique constraint") })
    ],
    ["a deadlock not from the database", new Error("deadlock detected")]
  ])("says no for %s", (_, failure) => {
    expect(isWriteConflict(failure)).toBe(false)
  })
})

describe("mayBeOneCallers", () => {
  it.each([
    ["a unique violation (23505)", Cause.fail(new SqlError({ cause: pgError("23505", "duplicate key") }))],
    ["a check violation (23514)", Cause.fail(new SqlError({ cause: pgError("23514", "check constraint") }))],
    ["a failure that is not the database's", Cause.fail({ _tag: "SnapshotVersionError" })],
    ["a defect", Cause.die(new Error("boom"))]
  ])("splits the batch for %s", (_, cause) => {
    expect(mayBeOneCallers(cause)).toBe(true)
  })
  it.each([
    [
      "a lost connection (08006)",
      Cause.fail(new SqlError({ cause: pgError("08006", "connection failure") }))
    ],
    ["a shutdown (57P01)", Cause.fail(new SqlError({ cause: pgError("57P01", "terminating connection") }))],
    ["too many clients (53300)", Cause.fail(new SqlError({ cause: pgError("53300", "too many clients") }))],
    ["no SQLSTATE (no connection)", Cause.fail(new SqlError({ cause: new Error("Connection terminated") }))]
  ])("fails the batch at once for %s", (_, cause) => {
    expect(mayBeOneCallers(cause)).toBe(false)
  })
})
