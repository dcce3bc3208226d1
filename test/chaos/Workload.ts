import { randomUUID } from "node:crypto"
import pg from "pg"
import { getAddress } from "viem"
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts"
import { typedData } from "../../services/payer/WalletAttestation"
import { createMerchant, type Merchant } from "../support/Merchant"
import {
  type Call,
  type History,
  PAY_MODES,
  type PayMode,
  type Prng,
  prng,
  type ReceiverKind,
  type RequestRecord
} from "./History"
import type { Instance, Parts } from "./Parts"

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export interface Answer {
  readonly status: number
  readonly headers: Headers
  // biome-ignore lint/suspicious/noExplicitAny: the JSON of many routes, read field by field as a client would
  readonly body: any
}

export interface ChaosMerchant extends Merchant {
  readonly index: number
  issuerId: string
}

const TERMINAL = new Set(["settled", "expired", "returned"])
export const isTerminal = (status: string | undefined) => status !== undefined && TERMINAL.has(status)

/**
 * The clients of a run: every call goes to an instance that is up (as a load balancer would send it), is recorded
 * with its answer or its failure, and a retried call is a new call.
 */
export const makeClient = (history: History, fleet: ReadonlyArray<Instance>, seed: number) => {
  const rng = prng(seed ^ 0x5eed)
  const call = async (
    op: string,
    auth: { merchant: Merchant; via?: "api_key" | "session" } | undefined,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
    timeoutMs = 30_000
  ): Promise<Answer | undefined> => {
    const up = fleet.filter((i) => !i.down)
    const instance = rng.pick(up.length > 0 ? up : fleet)
    const record: Call = {
      op,
      instance: instance.index,
      version: instance.build.version,
      method,
      path,
      startedAt: Date.now(),
      ms: 0
    }
    history.calls.push(record)
    try {
      const res = await fetch(`${instance.baseUrl}${path}`, {
        method,
        headers: {
          ...(auth === undefined ? {} : auth.merchant.headers(auth.via ?? "api_key")),
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...headers
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(timeoutMs)
      })
      const text = await res.text()
      record.status = res.status
      record.ms = Date.now() - record.startedAt
      if (res.status >= 500) record.body = text.slice(0, 300)
      let parsed: unknown = null
      try {
        parsed = text === "" ? null : JSON.parse(text)
      } catch {
        parsed = text
      }
      return { status: res.status, headers: res.headers, body: parsed }
    } catch (error) {
      record.ms = Date.now() - record.startedAt
      const cause = (error as { cause?: { code?: string } }).cause
      record.error = cause?.code ?? (error as Error).name ?? String(error)
      return undefined
    }
  }
  /** A call repeated (after a pause) while it gets no answer, 503 or 429, up to `withinMs`: what a client does. */
  const persist = async (
    attempt: () => Promise<Answer | undefined>,
    withinMs = 120_000
  ): Promise<Answer | undefined> => {
    const until = Date.now() + withinMs
    for (;;) {
      const answer = await attempt()
      if (answer !== undefined && answer.status !== 503 && answer.status !== 429) return answer
      if (Date.now() > until) return answer
      await sleep(300 + rng.int(0, 700))
    }
  }
  return { call, persist }
}
export type Client = ReturnType<typeof makeClient>

/** The runner's own connection to the run's PostgreSQL, reconnecting across its restarts. */
export const makeDb = (url: string) => {
  const pool = new pg.Pool({ connectionString: url, max: 4, connectionTimeoutMillis: 3_000 })
  pool.on("error", () => undefined)
  const query = async <R extends pg.QueryResultRow>(
    text: string,
    values: ReadonlyArray<unknown> = [],
    withinMs = 60_000
  ) => {
    const until = Date.now() + withinMs
    for (;;) {
      try {
        return await pool.query<R>(text, values as Array<unknown>)
      } catch (error) {
        if (Date.now() > until) throw error
        await sleep(500)
      }
    }
  }
  return { query, end: () => pool.end() }
}
export type Db = ReturnType<typeof makeDb>

/** One sender at a time from the faucet (dev account 0): its nonces are taken in order. */
const serialised = () => {
  let tail: Promise<unknown> = Promise.resolve()
  return <A>(f: () => Promise<A>): Promise<A> => {
    const run = tail.then(f, f)
    tail = run.catch(() => undefined)
    return run
  }
}

export interface WorkloadContext {
  readonly history: History
  readonly parts: Parts
  readonly client: Client
  readonly db: Db
  readonly merchants: ReadonlyArray<ChaosMerchant>
  readonly seed: number
  /** When the workload stops starting new things (a rolling upgrade may push it back until both versions served). */
  stopAt: number
  /** Held (shared) by payments while they are sent; the reorganisation takes it alone. */
  readonly chainGate: { readers: number; writer: Promise<void> | undefined; waiting: number }
}

export const makeMerchants = async (parts: Parts, client: Client, count: number) => {
  const merchants: Array<ChaosMerchant> = []
  for (let index = 0; index < count; index++) {
    const merchant = await createMerchant(parts.pg.url)
    const issuer = await client.persist(() =>
      client.call("setup", { merchant }, "POST", "/v1/issuers", { display_name: `Chaos merchant ${index}` })
    )
    if (issuer?.status !== 201) throw new Error(`issuer not created: ${JSON.stringify(issuer?.body)}`)
    merchants.push({ ...merchant, index, issuerId: issuer.body.id as string })
  }
  return merchants
}

const requestPath = (id: string) => `/v1/deposit-requests/${id}`

const statusOf = async (ctx: WorkloadContext, merchant: Merchant, id: string) => {
  const answer = await ctx.client.persist(
    () => ctx.client.call("read", { merchant }, "GET", requestPath(id)),
    30_000
  )
  return answer?.status === 200 ? (answer.body.status as string) : undefined
}

const waitForStatus = async (
  ctx: WorkloadContext,
  merchant: Merchant,
  id: string,
  wanted: ReadonlyArray<string>,
  withinMs: number
) => {
  const until = Date.now() + withinMs
  while (Date.now() < until) {
    const status = await statusOf(ctx, merchant, id)
    if (status !== undefined && wanted.includes(status)) return status
    await sleep(500)
  }
  return undefined
}

const payMutex = serialised()

/**
 * A payment as a payer makes it: minted to `from` by the faucet, gas given, then a plain token transfer. The whole
 * of it holds the chain gate (shared with other payments), so a reorganisation never replaces a block while one of
 * these transactions is waiting to be mined.
 */
const pay = async (ctx: WorkloadContext, record: RequestRecord, from: PrivateKeyAccount, amount: bigint) => {
  const { chain } = ctx.parts
  while (ctx.chainGate.writer !== undefined) {
    ctx.chainGate.waiting++
    await ctx.chainGate.writer.finally(() => ctx.chainGate.waiting--)
  }
  ctx.chainGate.readers++
  try {
    await payMutex(async () => {
      const hash = await chain.mint(from.address, amount)
      await chain.chain.waitForTransactionReceipt({ hash, timeout: 60_000 })
    })
    await chain.chain.setBalance({ address: from.address, value: 10n ** 17n })
    const receipt = await chain.pay(from, record.address!, amount)
    record.payments.push({ from: from.address, amount, hash: receipt.transactionHash, at: Date.now() })
  } finally {
    ctx.chainGate.readers--
  }
}

/** The runner plays the clock: a deadline due now (the service's sweep finds it), rather than minutes of waiting. */
const pullDeadline = async (ctx: WorkloadContext, record: RequestRecord) => {
  await ctx.db.query("update deposit_requests set expires_at = now() where id = $1", [record.id.slice(3)])
  record.expiredAt = Date.now()
}

/** A long poll on one request until it ends or the run stops polling. */
const longPoll = async (ctx: WorkloadContext, merchant: Merchant, id: string) => {
  let version = "0"
  while (Date.now() < ctx.stopAt + 30_000) {
    const answer = await ctx.client.call(
      "long-poll",
      { merchant },
      "GET",
      `${requestPath(id)}?wait_for=change&version=${version}&timeout=10`,
      undefined,
      {},
      25_000
    )
    if (answer?.status === 200) {
      version = answer.body.version as string
      if (isTerminal(answer.body.status as string)) return
    } else await sleep(1_000)
  }
}

const amountText = (baseUnits: bigint) => {
  const s = baseUnits.toString().padStart(7, "0")
  return `${s.slice(0, -6)}.${s.slice(-6)}`
}

/** One request through its life as its mode says, from creation to the payer's last transfer. */
export const requestFlow = async (ctx: WorkloadContext, flow: number, mode: PayMode) => {
  const rng: Prng = prng(ctx.seed * 7919 + flow)
  const { client, history } = ctx
  const merchant = ctx.merchants[flow % ctx.merchants.length]!
  const auth = { merchant }
  const payout = privateKeyToAccount(generatePrivateKey()).address
  const pa = await client.persist(() =>
    client.call("payout-address", auth, "POST", "/v1/payout-addresses", { address: payout })
  )
  if (pa?.status !== 201) {
    history.anomalies.push(`flow ${flow}: payout address not created (${pa?.status ?? "no answer"})`)
    return
  }
  const amount = BigInt(rng.int(1, 40)) * 1_000_000n + BigInt(rng.int(0, 999_999))
  const key = randomUUID()
  const body = {
    amount: amountText(amount),
    issuer_id: merchant.issuerId,
    payout_address_id: pa.body.id as string
  }
  const create = (b: typeof body) =>
    client.persist(() =>
      client.call("create", auth, "POST", "/v1/deposit-requests", b, { "idempotency-key": key })
    )
  const made = await create(body)
  if (made?.status !== 201 && made?.status !== 200) {
    history.anomalies.push(`flow ${flow}: create answered ${made?.status ?? "nothing"}`)
    return
  }
  const id = made.body.id as string
  const record: RequestRecord = {
    id,
    merchant: merchant.index,
    mode,
    amount,
    payout,
    payments: [],
    done: false
  }
  history.requests.push(record)
  if (rng.chance(0.3)) {
    const again = await create(body)
    if (again?.status !== 200 || again.body.id !== id || again.headers.get("idempotency-replayed") !== "true")
      history.anomalies.push(
        `${id}: a replay of its create answered ${again?.status} ${JSON.stringify(again?.body).slice(0, 200)}`
      )
  }
  if (rng.chance(0.15)) {
    const other = await create({ ...body, amount: amountText(amount + 1n) })
    if (other?.status !== 409 || other.body?.error?.code !== "idempotency_conflict")
      history.anomalies.push(`${id}: a create with its key and another amount answered ${other?.status}`)
  }
  const polling = longPoll(ctx, merchant, id)

  const payer = privateKeyToAccount(generatePrivateKey())
  const expiresAt = Math.floor(Date.now() / 1000) + 600
  const signature = await payer.signTypedData(
    typedData({ depositRequest: id, wallet: payer.address, chainId: 10143, expiresAt })
  )
  const attested = await client.persist(() =>
    client.call("attest", undefined, "POST", `/v1/payer/deposit-requests/${id}/wallet`, {
      wallet: payer.address,
      chain_id: 10143,
      expires_at: expiresAt,
      signature
    })
  )
  if (attested === undefined || attested.status >= 300 || typeof attested.body?.address !== "string") {
    // A lost answer to an attestation that was committed: the read shows the address.
    const read = await client.persist(() => client.call("read", auth, "GET", requestPath(id)))
    if (typeof read?.body?.address !== "string") {
      history.anomalies.push(
        `${id}: attestation answered ${attested?.status} ${JSON.stringify(attested?.body).slice(0, 200)}`
      )
      record.done = true
      return
    }
    record.address = getAddress(read.body.address as string)
  } else record.address = getAddress(attested.body.address as string)
  record.wallet = payer.address

  try {
    switch (mode) {
      case "exact":
        await pay(ctx, record, payer, amount)
        break
      case "partial": {
        const half = amount / 2n
        await pay(ctx, record, payer, half)
        await waitForStatus(ctx, merchant, id, ["partially_deposited"], 90_000)
        await sleep(rng.int(0, 2_000))
        await pay(ctx, record, payer, amount - half)
        break
      }
      case "over":
        await pay(ctx, record, payer, amount + BigInt(rng.int(1, 3_000_000)))
        break
      case "stranger":
        await pay(ctx, record, privateKeyToAccount(generatePrivateKey()), amount)
        break
      case "late":
        await pullDeadline(ctx, record)
        if ((await waitForStatus(ctx, merchant, id, ["expired", "returned"], 90_000)) === undefined)
          history.anomalies.push(`${id}: did not expire within 90 s of its deadline`)
        await pay(ctx, record, payer, amount)
        break
      case "never":
        await pullDeadline(ctx, record)
        break
    }
  } catch (error) {
    history.anomalies.push(`${id}: the payer's transfer failed: ${String(error).slice(0, 300)}`)
  }
  record.done = true
  await polling
}

/** Flows started back to back, `concurrency` at a time, until the workload window ends; modes in rotation. */
export const runRequests = async (ctx: WorkloadContext, concurrency: number) => {
  let next = 0
  const order = [...PAY_MODES]
  const rng = prng(ctx.seed)
  for (let i = order.length - 1; i > 0; i--) {
    const j = rng.int(0, i)
    ;[order[i], order[j]] = [order[j]!, order[i]!]
  }
  const lane = async () => {
    while (Date.now() < ctx.stopAt) {
      const flow = next++
      await requestFlow(ctx, flow, order[flow % order.length]!).catch((error) =>
        ctx.history.anomalies.push(`flow ${flow} failed: ${String(error).slice(0, 300)}`)
      )
    }
  }
  await Promise.all(Array.from({ length: concurrency }, lane))
}

/** Registers an endpoint for a merchant at a receiver path; undefined when the service never answered. */
export const registerEndpoint = async (
  ctx: WorkloadContext,
  merchant: ChaosMerchant,
  receiver: ReceiverKind,
  path: string,
  stable: boolean
) => {
  const url = ctx.parts.receivers.urlOf(receiver, path)
  const made = await ctx.client.persist(() =>
    ctx.client.call("webhook-create", { merchant }, "POST", "/v1/webhooks", { url })
  )
  if (made?.status !== 201) {
    ctx.history.anomalies.push(
      `webhook ${url} not registered: ${made?.status} ${JSON.stringify(made?.body).slice(0, 200)}`
    )
    return undefined
  }
  const endpoint = {
    id: made.body.id as string,
    merchant: merchant.index,
    receiver,
    path,
    url,
    secret: made.body.secret as string,
    createdAt: Date.now(),
    stable
  }
  ctx.history.endpoints.push(endpoint)
  return endpoint
}

/** Endpoints come and go: new ones, disabled ones, re-enabled (registered again) and rotated ones, test sends. */
export const runEndpointChurn = async (ctx: WorkloadContext, merchant: ChaosMerchant) => {
  const rng = prng(ctx.seed * 31 + merchant.index)
  let n = 0
  while (Date.now() < ctx.stopAt) {
    await sleep(rng.int(2_000, 6_000))
    if (Date.now() >= ctx.stopAt) break
    const mine = ctx.history.endpoints.filter((e) => e.merchant === merchant.index && !e.stable)
    const active = mine.filter((e) => e.disabledAt === undefined)
    const disabled = mine.filter((e) => e.disabledAt !== undefined)
    const choice = rng.int(0, 4)
    const disable = async (id: string) => {
      const answer = await ctx.client.persist(() =>
        ctx.client.call("webhook-disable", { merchant }, "POST", `/v1/webhooks/${id}/disable`)
      )
      if (answer?.status === 204 || answer?.status === 200) {
        const e = ctx.history.endpoints.find((x) => x.id === id)
        if (e !== undefined) e.disabledAt = Date.now()
      } else ctx.history.anomalies.push(`webhook ${id}: disable answered ${answer?.status}`)
    }
    if (choice === 0 || active.length === 0) {
      await registerEndpoint(
        ctx,
        merchant,
        rng.pick(["ok", "slow", "fail"] as const),
        `/m${merchant.index}/churn${n++}`,
        false
      )
    } else if (choice === 1) {
      await disable(rng.pick(active).id)
    } else if (choice === 2 && disabled.length > 0) {
      // Re-enabled: the same URL registered again (a new endpoint and secret).
      const old = rng.pick(disabled)
      await registerEndpoint(ctx, merchant, old.receiver, old.path, false)
    } else if (choice === 3) {
      // Rotated: the same URL registered again, then the old endpoint disabled.
      const old = rng.pick(active)
      if ((await registerEndpoint(ctx, merchant, old.receiver, old.path, false)) !== undefined)
        await disable(old.id)
    } else {
      const target = rng.pick(
        ctx.history.endpoints.filter((e) => e.merchant === merchant.index && e.disabledAt === undefined)
      )
      const answer = await ctx.client.persist(() =>
        ctx.client.call("webhook-test", { merchant }, "POST", `/v1/webhooks/${target.id}/test`)
      )
      if (answer === undefined || answer.status >= 300)
        ctx.history.anomalies.push(`webhook ${target.id}: test answered ${answer?.status}`)
    }
  }
}
