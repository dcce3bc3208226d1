import { Effect } from "effect"

type EffectMethod = (...args: never[]) => Effect.Effect<unknown, unknown, unknown>

/**
 * The named methods of a service's shape, each as `Effect.fn("Service.method")` of itself, so spans and outlines
 * see them. For ports whose implementations are built apart from their tag (one layer per implementation): the
 * tag's layers trace whichever implementation they build, the same way.
 */
export const withMethodSpans = <S extends object, K extends keyof S>(
  service: string,
  shape: S,
  methods: ReadonlyArray<K & { [P in K]: S[P] extends EffectMethod ? P : never }[K]>
): S => {
  const traced = { ...shape } as Record<PropertyKey, unknown>
  for (const method of methods)
    traced[method as PropertyKey] = Effect.fn(`${service}.${String(method)}`)(shape[method] as EffectMethod)
  return traced as S
}
