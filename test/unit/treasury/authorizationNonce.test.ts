import { describe, expect, it } from "vitest"
import { keccak256, toHex } from "viem"
import { redirectedSettleId } from "../../../machines/DepositRequest"
import { authorizationNonce } from "../../../services/treasury/TransferSigner"

// A settlement redirected to another payout address is a new command (a new transfer row, a new address in the
// authorization) under the SAME EIP-3009 nonce as the request's first settlement: the token then executes at most
// one of them, whichever authorization a reverted transaction may have published.
describe("the EIP-3009 nonce of a transfer", () => {
  const id = "dr_01a22091-7c83-734e-9348-94ebc4d972aa"

  it("is the command id's digest", () => {
    expect(authorizationNonce(`settle:${id}`)).toBe(keccak256(toHex(`settle:${id}`)))
    const back = `return:${id}:overpayment:remainder`
    expect(authorizationNonce(back)).toBe(keccak256(toHex(back)))
  })

  it("is the first settlement's for every redirect the machine names, and no return shares it", () => {
    const first = `settle:${id}`
    const once = redirectedSettleId(id, first)
    const twice = redirectedSettleId(id, once)
    expect([once, twice]).toEqual([`settle:${id}:redirect:1`, `settle:${id}:redirect:2`])
    expect(authorizationNonce(once)).toBe(authorizationNonce(first))
    expect(authorizationNonce(twice)).toBe(authorizationNonce(first))
    expect(authorizationNonce(`return:${id}:late_transfer:settle:${id}:redirect:1`)).not.toBe(
      authorizationNonce(first)
    )
    expect(authorizationNonce(`settle:${id}:redirect:x`)).not.toBe(authorizationNonce(first))
  })
})
