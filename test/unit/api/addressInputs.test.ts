import { describe, expect, it } from "@effect/vitest"
import { Option, SchemaAST as AST } from "effect"
import { Address } from "../../../services/domain/Address"
import { Api } from "../../../src/http/Api"

/** The one rule: the Address schema's own decoding, which an annotated copy of it (a query's description) keeps. */
const isAddress = (ast: AST.AST): boolean =>
  (ast._tag === "Transformation" &&
    ast.transformation === (Address.ast as AST.Transformation).transformation) ||
  (ast._tag === "Refinement" && isAddress(ast.from))

/**
 * Every string the contract takes in a body or a query, as the client sends it (the encoded side), with where it
 * sits (`POST /path body.field`).
 */
const leavesOf = (ast: AST.AST, at: string, seen: Set<AST.AST>): Array<readonly [string, AST.AST]> => {
  if (isAddress(ast)) return [[at, ast]]
  if (ast._tag === "StringKeyword" || ast._tag === "TemplateLiteral") return [[at, ast]]
  // Only composite schemas can recur (suspended ones); keywords are shared singletons.
  if (seen.has(ast)) return []
  seen.add(ast)
  switch (ast._tag) {
    case "TypeLiteral":
      return ast.propertySignatures.flatMap((p) => leavesOf(p.type, `${at}.${String(p.name)}`, seen))
    case "Union":
      return ast.types.flatMap((t) => leavesOf(t, at, seen))
    case "Refinement":
      return leavesOf(ast.from, at, seen).map(
        ([where, leaf]) => [where, leaf === ast.from ? ast : leaf] as const
      )
    case "Transformation":
      return leavesOf(ast.from, at, seen)
    case "TupleType":
      return [...ast.elements.map((e) => e.type), ...ast.rest.map((r) => r.type)].flatMap((t) =>
        leavesOf(t, `${at}[]`, seen)
      )
    case "Suspend":
      return leavesOf(ast.f(), at, seen)
    default:
      return []
  }
}

/** A field a reader would take for an address: its name, or a pattern of 40 hex digits. */
const looksLikeAddress = (where: string, ast: AST.AST): boolean => {
  const pattern = (a: AST.AST): string | undefined => {
    const own = Option.getOrUndefined(AST.getJSONSchemaAnnotation(a)) as { pattern?: string } | undefined
    return own?.pattern ?? (a._tag === "Refinement" ? pattern(a.from) : undefined)
  }
  return /(^|[._])(address|wallet)$/.test(where) || /\{40\}/.test(pattern(ast) ?? "")
}

const addressInputs = () => {
  const found: Array<{ readonly where: string; readonly isAddress: boolean }> = []
  for (const group of Object.values(Api.groups))
    for (const endpoint of Object.values(group.endpoints)) {
      const route = `${endpoint.method} ${endpoint.path}`
      for (const [kind, schema] of [
        ["body", endpoint.payloadSchema],
        ["query", endpoint.urlParamsSchema]
      ] as const) {
        if (Option.isNone(schema)) continue
        for (const [where, leaf] of leavesOf(schema.value.ast, `${route} ${kind}`, new Set()))
          if (looksLikeAddress(where, leaf) || isAddress(leaf))
            found.push({ where, isAddress: isAddress(leaf) })
      }
    }
  return found
}

describe("the addresses the contract takes", () => {
  it("all go through the one Address schema (EIP-55 checksum checked on mixed case)", () => {
    const inputs = addressInputs()
    expect(inputs.filter((i) => !i.isAddress).map((i) => i.where)).toEqual([])
    // The inventory: a new address input is added here on purpose, with a test that refuses its checksum typo.
    expect([...new Set(inputs.map((i) => i.where))].sort()).toEqual([
      "GET /v1/deposit-requests query.deposit_address",
      "GET /v1/deposit-requests query.payer_wallet",
      "GET /v1/deposit-requests/export.csv query.deposit_address",
      "GET /v1/deposit-requests/export.csv query.payer_wallet",
      "POST /v1/payer/deposit-requests/:id/wallet body.wallet",
      "POST /v1/payout-addresses body.address"
    ])
  })
})
