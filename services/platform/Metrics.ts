import { Effect } from "effect"
import { Counter, Gauge, Histogram, Registry } from "prom-client"

/**
 * The service's Prometheus metrics, one registry per instance (prom-client). Services record what they do; the
 * operator endpoint (`src/app/MetricsServer.ts`) renders them, reading the backlogs from PostgreSQL at each scrape.
 */
const make = () => {
  const registry = new Registry()
  const registers = [registry]
  return {
    registry,
    http: new Histogram({
      name: "deposits_http_request_duration_seconds",
      help: "HTTP answers by method, route template and status",
      labelNames: ["method", "route", "status"] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers
    }),
    actorSteps: new Counter({
      name: "deposits_actor_steps_total",
      help: "Events applied to deposit request actors, by event type",
      labelNames: ["event"] as const,
      registers
    }),
    webhookAttempts: new Counter({
      name: "deposits_webhook_attempts_total",
      help: "Webhook delivery attempts, by endpoint (wh_ id) and outcome (succeeded, retrying, failed)",
      labelNames: ["endpoint", "outcome"] as const,
      registers
    }),
    watcherLag: new Gauge({
      name: "deposits_chain_watcher_lag_blocks",
      help: "Final head minus the watcher's cursor, after its last step",
      registers
    }),
    treasuryGas: new Gauge({
      name: "deposits_treasury_gas_gwei",
      help: "The treasury account's native balance (gas), in gwei",
      registers
    }),
    chainReady: new Gauge({
      name: "deposits_chain_ready",
      help: "1 once the chain's RPC answered the start-up checks, 0 while the instance waits for it (unready)",
      registers
    }),
    treasuryGasWarn: new Gauge({
      name: "deposits_treasury_gas_warn_gwei",
      help: "TREASURY_GAS_WARN_GWEI, set beside the balance by the instance that checks it (0 elsewhere)",
      registers
    }),
    needingAttention: new Gauge({
      name: "deposits_requests_needing_attention",
      help: "Deposit requests paused in needs_attention, every account, by attention code",
      labelNames: ["code"] as const,
      registers
    }),
    rpcEndpointUp: new Gauge({
      name: "deposits_chain_rpc_endpoint_up",
      help: "1 while a chain RPC endpoint answers and keeps up, 0 while it cools down after faults or lags; by its place in CHAIN_RPC_URLS and its host",
      labelNames: ["endpoint", "host"] as const,
      registers
    }),
    rpcEndpointFailures: new Gauge({
      name: "deposits_chain_rpc_endpoint_failures",
      help: "Faults in a row of a chain RPC endpoint (0 once it answers again)",
      labelNames: ["endpoint", "host"] as const,
      registers
    }),
    outboxBacklog: new Gauge({
      name: "deposits_outbox_backlog",
      help: "Outbox rows not yet published, by topic",
      labelNames: ["topic"] as const,
      registers
    }),
    webhookBacklog: new Gauge({
      name: "deposits_webhook_jobs_pending",
      help: "Webhook delivery jobs waiting for an attempt",
      registers
    }),
    pendingTransfers: new Gauge({
      name: "deposits_transfers_pending",
      help: "Settlements and returns signed and not yet final",
      registers
    }),
    tokenPaused: new Gauge({
      name: "deposits_token_paused",
      help: "1 while the USDC token is paused (every settlement and return waits), as the treasury last read it",
      registers
    }),
    transfersHeld: new Counter({
      name: "deposits_transfers_held_total",
      help: "Settlements and returns held instead of sent (a blacklisted party, or a simulation that kept reverting), by code",
      labelNames: ["code"] as const,
      registers
    }),
    transfersReverted: new Counter({
      name: "deposits_transfers_reverted_total",
      help: "Settlements and returns mined reverted, by the cause read from the token afterwards",
      labelNames: ["cause"] as const,
      registers
    }),
    transfersFoundOnChain: new Counter({
      name: "deposits_transfers_found_on_chain_total",
      help: "Settlements and returns whose authorization the token had already executed (the database was restored from an older backup, say): recognised from the chain (outcome found), or not recoverable from it (outcome unrecoverable)",
      labelNames: ["outcome"] as const,
      registers
    }),
    oldestPendingTransfer: new Gauge({
      name: "deposits_transfers_oldest_pending_seconds",
      help: "Age of the oldest signed transfer not yet final (0 when none)",
      registers
    })
  }
}
export type MetricsShape = ReturnType<typeof make>

export class Metrics extends Effect.Service<Metrics>()("deposits/Metrics", { sync: make }) {}
