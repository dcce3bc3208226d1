import { assert, describe, it } from "@effect/vitest"
import { MACHINE_VERSION } from "../../../machines/DepositRequest"
import { type LifecycleEvent, start, step } from "../../../machines/step"
import { SnapshotVersionError } from "../../../services/actors/ActorErrors"
import { makeActorMemory } from "../../../services/actors/ActorMemory"
import { type DepositRequestRow, firstRow, nextRow, snapshotOf } from "../../../services/actors/ActorRow"
import { type Member, planCommit } from "../../../services/actors/CommitPlan"
import type { LifecycleBodiesShape } from "../../../services/actors/LifecycleBodies"

/** The phases of an actor commit, each alone: the rows, the memory, the plan. No database. */
const created = new Date("2026-11-25T12:00:00Z")
const at = new Date("2026-11-25T12:01:00Z")
const ID = "0193a0c0-0000-7000-8000-000000000001"
const WALLET = "0x1111111111111111111111111111111111111111"
const ADDRESS = "0x2222222222222222222222222222222222222222"

const first = (): DepositRequestRow =>
  firstRow(
    {
      id: ID,
      account_id: "0193a0c0-0000-7000-8000-0000000000aa",
      amount_base_units: "1000000",
      heading: "",
      reference: "",
      metadata: {},
      customer_id: null,
      issuer_id: "0193a0c0-0000-7000-8000-0000000000bb",
      payout_address_id: "0193a0c0-0000-7000-8000-0000000000cc",
      payer_policy_mode: "none",
      expected_email: null,
      payer_reference: null,
      return_url: null,
      deposit_index: null,
      deposit_address: null,
      expires_at: new Date("2026-11-26T12:00:00Z"),
      created_at: created
    },
    start({
      id: `dr_${ID}`,
      amount_base_units: "1000000",
      payout_address: "0x52908400098527886E0F7030069857D2E4169EE7",
      payer_policy_mode: "none",
      expires_at: "2026-11-26T12:00:00.000Z",
      created_at: created.toISOString()
    })
  )

const attest = {
  type: "payer.wallet_attested",
  at: at.toISOString(),
  wallet: WALLET,
  address: ADDRESS
} as const
const credit = (n: number) =>
  ({
    type: "deposit.credited",
    at: at.toISOString(),
    credit_id: `c${n}`,
    amount_base_units: "1000000",
    from: WALLET
  }) as const

/** A bodies port that says which step and event it rendered. */
const bodies: LifecycleBodiesShape = {
  forStep: (row, s) => (eventId: string, event: LifecycleEvent, when: Date) =>
    JSON.stringify({
      eventId,
      type: event.type,
      version: row.version,
      status: s.status,
      at: when.toISOString()
    })
}

const member = (items: Member["items"]): Member => ({
  items,
  also: undefined,
  traceParent: null,
  span: undefined
})

const inputs = {
  now: at,
  bodies,
  step: (before: DepositRequestRow, item: Member["items"][number]) => step(before.snapshot, item.event),
  history: false,
  instance: "test"
}

describe("actor rows", () => {
  it("stores a first step at version 1 of this machine, and reads its snapshot back", () => {
    const row = first()
    assert.strictEqual(row.version, "1")
    assert.strictEqual(row.machine_version, MACHINE_VERSION)
    assert.strictEqual(row.status, "awaiting_payer")
    assert.strictEqual(row.received_base_units, "0")
    assert.strictEqual(row.updated_at, created)
    const view = snapshotOf(row)
    assert.strictEqual(view.status, "awaiting_payer")
    assert.strictEqual(view.context.amount_base_units, "1000000")
  })

  it("moves one version on per step, mirroring the machine's facts and keeping the merchant's", () => {
    const before = first()
    const s = step(before.snapshot, attest)
    const after = nextRow(before, s, at)
    assert.strictEqual(after.version, "2")
    assert.strictEqual(after.status, s.status)
    assert.strictEqual(after.deposit_address, ADDRESS)
    assert.strictEqual(after.updated_at, at)
    assert.strictEqual(after.created_at, before.created_at)
    assert.strictEqual(after.payout_address_id, before.payout_address_id)
    const funded = nextRow(after, step(after.snapshot, credit(1)), at)
    assert.strictEqual(funded.received_base_units, "1000000")
    assert.strictEqual(funded.deposit_address, ADDRESS)
  })
})

describe("actor memory", () => {
  it("keeps the newest version of a row and forgets the least recently used past its capacity", () => {
    const memory = makeActorMemory(2)
    const row = first()
    const newer = { ...row, version: "3" }
    memory.remember(newer)
    memory.remember(row)
    assert.strictEqual(memory.get(ID)?.version, "3")
    memory.remember({ ...row, id: "b" })
    memory.remember({ ...row, id: "c" })
    assert.isUndefined(memory.get(ID))
    assert.isDefined(memory.get("c"))
    memory.forget("c")
    assert.isUndefined(memory.get("c"))
  })
})

describe("commit plan", () => {
  it("steps each new event once, in order, and writes the last row of each request", () => {
    const before = first()
    const plan = planCommit(
      [
        member([{ depositRequestId: ID, eventId: "a", event: attest }]),
        member([
          { depositRequestId: ID, eventId: "a", event: attest },
          { depositRequestId: ID, eventId: "c1", event: credit(1) }
        ])
      ],
      new Map([[ID, before]]),
      new Set(),
      inputs
    )
    if (plan instanceof SnapshotVersionError) return assert.fail("planned")
    assert.isDefined(plan.outcomes[0]![0])
    // The same event twice in one commit has no second effect.
    assert.isUndefined(plan.outcomes[1]![0])
    assert.strictEqual(plan.outcomes[1]![1]!.row.version, "3")
    assert.strictEqual(plan.finals.get(ID)!.version, "3")
    assert.deepStrictEqual(
      plan.stepped.map((s) => s.event.type),
      ["payer.wallet_attested", "deposit.credited"]
    )
    const statement = JSON.parse(plan.statement!)
    assert.deepStrictEqual(
      statement.requests.map((r: { expected_version: string; version: string }) => [
        r.expected_version,
        r.version
      ]),
      [["1", "3"]]
    )
    assert.deepStrictEqual(statement.events, [
      { deposit_request_id: ID, event_id: "a" },
      { deposit_request_id: ID, event_id: "c1" }
    ])
    // The funding credit emitted lifecycle events: their bodies came through the port, from the row they describe.
    assert.isAbove(statement.lifecycle.length, 0)
    const statusAt = new Map([
      ["2", plan.outcomes[0]![0]!.row.status],
      ["3", plan.outcomes[1]![1]!.row.status]
    ])
    for (const record of statement.lifecycle) {
      const body = JSON.parse(record.body)
      assert.strictEqual(body.eventId, record.id)
      assert.strictEqual(body.type, record.type)
      assert.strictEqual(body.status, statusAt.get(body.version))
      assert.strictEqual(body.at, at.toISOString())
    }
  })

  it("adds each event's history record, with its snapshot only when a later step of the commit moved the row on", () => {
    const plan = planCommit(
      [
        member([
          { depositRequestId: ID, eventId: "a", event: attest },
          { depositRequestId: ID, eventId: "c1", event: credit(1) }
        ])
      ],
      new Map([[ID, first()]]),
      new Set(),
      { ...inputs, history: true, instance: "host-a" }
    )
    if (plan instanceof SnapshotVersionError) return assert.fail("planned")
    const statement = JSON.parse(plan.statement!)
    assert.strictEqual(statement.instance, "host-a")
    const [attested, credited] = statement.events
    assert.strictEqual(attested.version, "2")
    assert.deepStrictEqual(attested.event, attest)
    assert.deepStrictEqual(attested.snapshot, JSON.parse(JSON.stringify(plan.outcomes[0]![0]!.row.snapshot)))
    assert.strictEqual(attested.status, "ready")
    assert.strictEqual(credited.version, "3")
    assert.deepStrictEqual(credited.event, credit(1))
    // The request's last step of the commit: its snapshot is the request's row, sent once.
    assert.isUndefined(credited.snapshot)
    assert.isUndefined(credited.status)
  })

  it("writes nothing when every event was seen", () => {
    const plan = planCommit(
      [member([{ depositRequestId: ID, eventId: "a", event: attest }])],
      new Map([[ID, first()]]),
      new Set([`${ID} a`]),
      inputs
    )
    if (plan instanceof SnapshotVersionError) return assert.fail("planned")
    assert.isUndefined(plan.statement)
    assert.strictEqual(plan.finals.size, 0)
  })

  it("refuses a snapshot of another machine version", () => {
    const plan = planCommit(
      [member([{ depositRequestId: ID, eventId: "a", event: attest }])],
      new Map([[ID, { ...first(), machine_version: MACHINE_VERSION + 1 }]]),
      new Set(),
      inputs
    )
    assert.instanceOf(plan, SnapshotVersionError)
  })
})
