import { Data } from "effect"

/** A snapshot this code cannot restore: the row names a machine version with no migration to the current one. */
export class SnapshotVersionError extends Data.TaggedError("SnapshotVersionError")<{
  readonly depositRequestId: string
  readonly found: number
  readonly expected: number
}> {
  override get message() {
    return `deposit request ${this.depositRequestId} has a snapshot of machine version ${this.found}, this build runs ${this.expected}; deploy the SQL migration that rewrites version ${this.found} snapshots to ${this.expected} (infra/migrations) before this build, see infra/decisions/0021`
  }
}

export class DepositRequestMissing extends Data.TaggedError("DepositRequestMissing")<{
  readonly id: string
}> {}
