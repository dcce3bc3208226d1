import { Config, Option, Redacted } from "effect"
import type { ServiceEnv } from "../domain/Environment"

/**
 * How settings are read: each service declares the settings it needs beside its layer and reads them there
 * through Effect `Config`; the composition root only picks the `ConfigProvider` (the environment, or a map in
 * tests). Settings several services share are declared here once.
 */

/** An optional setting: unset or empty means "use the embedded default"; anything else must be valid. */
export const optionalSetting = (name: string, message: string, validation: (value: string) => boolean) =>
  Config.option(Config.string(name)).pipe(
    Config.map(Option.filter((value) => value.trim() !== "")),
    Config.validate({
      message: `${name}: ${message}`,
      validation: (value) => Option.match(value, { onNone: () => true, onSome: validation })
    })
  )

export const positiveInteger = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name}: must be at least 1`, validation: (n) => n >= 1 })
  )

/** `SERVICE_ENV`: sandbox (test keys, chain 10143) or production (live keys, chain 143). */
export const serviceEnv: Config.Config<ServiceEnv> = Config.literal(
  "sandbox",
  "production"
)("SERVICE_ENV").pipe(Config.withDefault("sandbox" as const))

/**
 * The name a browser on this machine uses for a listening address: `localhost` for IPv4 loopback and the wildcard
 * binds, because a passkey's relying party must be a domain and browsers treat `localhost` as secure over plain
 * HTTP (127.0.0.1 works for everything but passkeys); any other address as it is.
 */
export const browserHostOf = (host: string): string =>
  host === "127.0.0.1" || host === "0.0.0.0" || host === "::" || host === "" || host === "localhost"
    ? "localhost"
    : host.includes(":")
      ? `[${host}]`
      : host

/**
 * `PUBLIC_BASE_URL`: the origin payers and merchants reach this service at, for the links it hands out (the hosted
 * checkout, uploads to the embedded store, attachment downloads). Unset: `http://localhost:PORT` when bound to
 * loopback or every interface, else `http://HOST:PORT`, right for the sandbox; set it behind a proxy or a load
 * balancer.
 */
export const publicBaseUrlSetting = optionalSetting(
  "PUBLIC_BASE_URL",
  "must be an http(s) origin such as https://pay.example.com",
  (url) => /^https?:\/\/[^/\s]+\/?$/.test(url)
)
export const publicBaseUrl: Config.Config<string> = Config.all({
  url: publicBaseUrlSetting,
  host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1")),
  port: Config.integer("PORT").pipe(Config.withDefault(8080))
}).pipe(
  Config.map(({ url, host, port }) =>
    Option.getOrElse(
      Option.map(url, (u) => u.replace(/\/+$/, "")),
      () => `http://${browserHostOf(host)}:${port}`
    )
  )
)

/** `DATABASE_URL`: absent, the embedded PostgreSQL (PGlite) under `DATA_DIR`. */
export const databaseUrl = optionalSetting(
  "DATABASE_URL",
  "must be a postgres:// or postgresql:// URL",
  (url) => /^postgres(ql)?:\/\//.test(url)
).pipe(Config.map(Option.map(Redacted.make)))

/** `DATA_DIR`: where the embedded database and chain keep their files. */
export const dataDir = Config.string("DATA_DIR").pipe(Config.withDefault(".data"))
