import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { type Address, parseAbiItem, toHex } from "viem"
import { anvilDevAccount } from "../../../infra/chain/Anvil"
import { TRANSFER_TOPIC } from "../../../services/chain/TransferLog"
import type { ChainService } from "../../support/ChainService"
import { chainAccessOf, type LocalChain } from "../../support/LocalChain"
import { readyRequest } from "../../support/Payer"
import { type Fault, type RpcFaultProxy, startRpcFaultProxy } from "../../support/RpcFaultProxy"
import { scopedChainService, scopedLocalChain } from "../../support/scopedChainService"

/**
 * Issue 16, item 4: the service reads the chain through three endpoints of our own fault-injecting proxy in front
 * of anvil, which drop connections, answer 429, stall past the time-out, trail the head and answer `eth_getLogs`
 * with nothing for blocks they have not reached, and flap. Payments made meanwhile are each credited once, settled
 * once and their excess returned once, and the watcher catches up once the faults stop.
 */
class FaultyChain extends Context.Tag("test/FaultyChain")<
  FaultyChain,
  {
    readonly local: LocalChain
    readonly proxies: ReadonlyArray<RpcFaultProxy>
    readonly running: ChainService
  }
>() {}

const FaultyChainLive = Layer.scoped(
  FaultyChain,
  Effect.gen(function* () {
    // Automine with `finalized` two blocks behind, and a block every 150 ms besides, so heads keep moving.
    const local = yield* scopedLocalChain()
    const proxies = yield* Effect.forEach(
      [1, 2, 3],
      () =>
        Effect.acquireRelease(
          Effect.promise(() => startRpcFaultProxy(local.node.rpcUrl)),
          (proxy) => Effect.promise(() => proxy.stop())
        ),
      { concurrency: "unbounded" }
    )
    const running = yield* scopedChainService(local, {
      config: {
        chainRpcUrl: Option.none(),
        chainRpcUrls: Option.some(proxies.map((p) => p.url).join(",")),
        chainRpcTimeoutMs: 400,
        chainRpcRetries: 2,
        chainRpcProbeMs: 200,
        chainRpcMaxLagBlocks: 5
      },
      mineWhileWaiting: true
    })
    yield* Effect.acquireRelease(
      Effect.sync(() => setInterval(() => void local.chain.mine({ blocks: 1 }).catch(() => undefined), 150)),
      (mining) => Effect.sync(() => clearInterval(mining))
    )
    return { local, proxies, running }
  })
)

const transferEvent = parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)")

const faults = (...each: ReadonlyArray<Fault>) =>
  Effect.flatMap(FaultyChain, ({ proxies }) =>
    Effect.sync(() => {
      for (const [i, fault] of each.entries()) proxies[i]?.set(fault)
    })
  )

const healthy = faults({ kind: "healthy" }, { kind: "healthy" }, { kind: "healthy" })

/** The first answer of `read` that is not undefined, asked every 100 ms; the test fails after `ms`. */
const waitFor = <A, R>(what: () => string, read: Effect.Effect<A | undefined, never, R>, ms = 40_000) =>
  Effect.gen(function* () {
    const until = Date.now() + ms
    while (Date.now() < until) {
      const value = yield* read
      if (value !== undefined) return value
      yield* Effect.sleep("100 millis")
    }
    return yield* Effect.dieMessage(`timed out waiting for ${what()}`)
  })

/** The row id of a public `dr_` id. */
const rowId = (id: string) => id.slice("dr_".length)

interface Paid {
  readonly id: string
  readonly address: Address
  readonly amount: bigint
  readonly paid: bigint
}

const payer = anvilDevAccount(6)

/** A request of 5 USDC paid `paid` base units straight on the node (the payer's wallet is not behind the proxy). */
const payRequest = (paid: bigint) =>
  Effect.flatMap(FaultyChain, ({ local, running }) =>
    Effect.promise(async (): Promise<Paid> => {
      const { id, address } = await readyRequest({ ...running, payer }, "5.000000")
      await local.mint(payer.address, paid)
      await local.pay(payer, address, paid)
      return { id, address, amount: 5_000_000n, paid }
    })
  )

/** Settled, with every transfer of the request final (the excess returned too). */
const finished = (r: Paid) =>
  Effect.flatMap(FaultyChain, ({ running }) => {
    let last = "unknown"
    return waitFor(
      () => `${r.id} settled (last seen: ${last})`,
      Effect.promise(async () => {
        const view = await running.api.call<{ status: string }>("GET", `/v1/deposit-requests/${r.id}`)
        last = view.body.status
        if (view.body.status !== "settled") return undefined
        const open = await running.db.query(
          "select 1 from transfers where deposit_request_id = $1 and state <> 'confirmed'",
          [rowId(r.id)]
        )
        const done = await running.db.query("select 1 from transfers where deposit_request_id = $1", [
          rowId(r.id)
        ])
        const expected = r.paid > r.amount ? 2 : 1
        last = `settled, ${done.rowCount} of ${expected} transfers recorded, ${open.rowCount} not final`
        return open.rowCount === 0 && done.rowCount === expected ? true : undefined
      })
    )
  })

/** What the chain and the books say about one request: credits, and transfers out of its address. */
const booksOf = (r: Paid) =>
  Effect.flatMap(FaultyChain, ({ local, running }) =>
    Effect.promise(async () => {
      const credits = await running.db.query<{ amount_base_units: string }>(
        "select amount_base_units::text from chain_credits where deposit_request_id = $1",
        [rowId(r.id)]
      )
      const out = await local.chain.getLogs({
        address: local.token,
        event: transferEvent,
        args: { from: r.address },
        fromBlock: 0n
      })
      return {
        credits: credits.rows.map((c) => BigInt(c.amount_base_units)),
        out: out.map((log) => log.args.value ?? 0n).sort((a, b) => (a < b ? -1 : 1)),
        left: await local.balanceOf(r.address)
      }
    })
  )

/** Credits whose block was taken for one reorganised away. */
const reorgedCredits = Effect.flatMap(FaultyChain, ({ running }) =>
  Effect.promise(() => running.db.query("select 1 from chain_credits where reorged_at is not null"))
)

// Real time throughout: the service, the proxies and the chain run on the wall clock, so the tests do too.
layer(FaultyChainLive, { timeout: 60_000, excludeTestServices: true })(
  "chain access through several faulty endpoints",
  (it) => {
    it.effect(
      "answers a range only from an endpoint that has reached it: a lagging one's empty logs do not count",
      () =>
        Effect.gen(function* () {
          const { local, proxies } = yield* FaultyChain
          const [behind, healthyOne] = proxies as [RpcFaultProxy, RpcFaultProxy]
          yield* faults({ kind: "behind", blocks: 50 }, { kind: "healthy" })
          yield* Effect.gen(function* () {
            yield* Effect.promise(() => local.mint(payer.address, 1_000_000n))
            yield* Effect.promise(() => local.chain.mine({ blocks: 60 }))
            const head = yield* Effect.promise(() => local.chain.getBlockNumber())
            const range = (to: bigint) => [
              {
                method: "eth_getLogs",
                params: [
                  { address: local.token, topics: [TRANSFER_TOPIC], fromBlock: toHex(0n), toBlock: toHex(to) }
                ]
              },
              { method: "eth_getBlockByNumber", params: [toHex(to), false] }
            ]
            const accept = ([, block]: readonly [unknown, unknown]) => block !== null
            // The lagging endpoint alone: the read is refused, not answered with nothing.
            const refused = yield* Effect.flip(
              Effect.tryPromise(() =>
                chainAccessOf(behind.url).together(range(head), accept, `block ${head}`)
              )
            )
            assert.strictEqual(refused._tag, "UnknownException")
            assert.match((refused.error as Error).message, /has not reached/)
            // Preferred but lagging, then a healthy one: the healthy one answers, with the mints' logs.
            const both = chainAccessOf(behind.url, healthyOne.url)
            const [logs] = yield* Effect.promise(() =>
              both.together<readonly [ReadonlyArray<unknown>, unknown]>(range(head), accept, `block ${head}`)
            )
            assert.isAbove(logs.length, 0)
            assert.strictEqual(both.health()[0]?.lagging, true)
          }).pipe(Effect.ensuring(healthy))
        }),
      30_000
    )

    it.effect(
      "credits, settles and returns each payment exactly once through drops, 429s, stalls, lag and flapping",
      () =>
        Effect.gen(function* () {
          const { local, proxies, running } = yield* FaultyChain
          const phases: ReadonlyArray<ReadonlyArray<Fault>> = [
            // The preferred endpoint reports the current head but its logs trail it by 4 blocks (its probe looks
            // healthy, so it stays first): logs read up to that head would skip payments. The second flaps.
            [{ kind: "logs-behind", blocks: 4 }, { kind: "flap" }, { kind: "healthy" }],
            // The preferred endpoint trails the head by 8 blocks and answers empty logs; the second flaps.
            [{ kind: "behind", blocks: 8 }, { kind: "flap" }, { kind: "healthy" }],
            // Two endpoints refuse (connection cut, rate limited); the third trails within the allowed lag.
            [{ kind: "drop" }, { kind: "rate-limit" }, { kind: "behind", blocks: 2 }],
            // The preferred one stalls past the time-out, the second trails far behind, the third flaps.
            [{ kind: "stall", stallMs: 2_000 }, { kind: "behind", blocks: 8 }, { kind: "flap" }]
          ]
          const paid: Array<Paid> = []
          for (const phase of phases) {
            yield* faults(...phase)
            const exact = yield* payRequest(5_000_000n)
            const over = yield* payRequest(7_250_000n)
            yield* Effect.all([finished(exact), finished(over)], { concurrency: "unbounded" })
            paid.push(exact, over)
          }

          // The faults stop: the watcher's cursor reaches the final block again.
          yield* healthy
          const healedAt = Date.now()
          yield* waitFor(
            () => "the watcher to catch up",
            Effect.promise(async () => {
              const finalized = (await local.chain.getBlock({ blockTag: "finalized" })).number
              const cursor = await running.db.query<{ last_block: string }>(
                "select last_block::text from chain_cursors"
              )
              return BigInt(cursor.rows[0]?.last_block ?? "0") >= finalized - 1n ? true : undefined
            })
          )
          const caughtUpMs = Date.now() - healedAt
          // No reorganisation happened: an endpoint trailing the head never passes for one.
          assert.strictEqual((yield* reorgedCredits).rowCount, 0)

          for (const r of paid) {
            const books = yield* booksOf(r)
            // One credit per payment, of the amount paid: none missed, none counted twice.
            assert.deepStrictEqual(books.credits, [r.paid])
            // One settlement of the amount, one return of the excess: no payout twice.
            const excess = r.paid - r.amount
            assert.deepStrictEqual(
              books.out,
              excess > 0n ? [excess, r.amount].sort((a, b) => (a < b ? -1 : 1)) : [r.amount]
            )
            assert.strictEqual(books.left, 0n)
          }
          const injected = new Map<string, number>()
          for (const p of proxies)
            for (const [kind, n] of p.injected) injected.set(kind, (injected.get(kind) ?? 0) + n)
          for (const kind of ["drop", "rate-limit", "stall", "behind", "flap"])
            assert.isAbove(injected.get(kind) ?? 0, 0, `faults of kind ${kind} injected`)
          const total = [...injected.values()].reduce((a, b) => a + b, 0)
          console.log(
            `rpc faults injected: ${total} (${[...injected].map(([k, n]) => `${k} ${n}`).join(", ")}); ` +
              `${paid.length} payments, credits missed 0, doubled 0, payouts doubled 0; watcher caught up ${caughtUpMs} ms after the faults stopped`
          )
        }),
      150_000
    )

    it.effect(
      "does not take a final block that endpoints have not reached for one reorganised away",
      () =>
        Effect.gen(function* () {
          const { running } = yield* FaultyChain
          yield* healthy
          const r = yield* payRequest(5_000_000n)
          yield* waitFor(
            () => "the credit to be recorded",
            Effect.promise(async () => {
              const rows = await running.db.query(
                "select 1 from chain_credits where deposit_request_id = $1",
                [rowId(r.id)]
              )
              return rows.rowCount === 1 ? true : undefined
            })
          )
          // Every endpoint now answers as a node 50 blocks behind: the credit's block "does not exist" on any of
          // them while the watcher re-reads it each second.
          yield* faults(
            { kind: "behind", blocks: 50 },
            { kind: "behind", blocks: 50 },
            { kind: "behind", blocks: 50 }
          )
          yield* Effect.sleep("3500 millis")
          yield* healthy
          assert.strictEqual((yield* reorgedCredits).rowCount, 0)
          yield* finished(r)
          const books = yield* booksOf(r)
          assert.deepStrictEqual(books.credits, [r.paid])
          assert.deepStrictEqual(books.out, [r.amount])
        }),
      90_000
    )
  }
)
