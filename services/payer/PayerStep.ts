import { type Context, Effect } from "effect"
import type { ActorHost, DepositRequestMissing, SnapshotVersionError } from "../actors/ActorHost"

/**
 * Steps a request with a payer's event through the actor host. A missing row or an unrestorable snapshot is a
 * defect here: the row was read a moment ago.
 */
export const payerStep =
  (host: Context.Tag.Service<typeof ActorHost>) =>
  <E extends { readonly _tag: string } = never, R = never>(...args: Parameters<typeof host.apply<E, R>>) =>
    host
      .apply<E, R>(...args)
      .pipe(
        Effect.catchIf(
          (e): e is DepositRequestMissing | SnapshotVersionError =>
            e._tag === "DepositRequestMissing" || e._tag === "SnapshotVersionError",
          Effect.die
        )
      )
