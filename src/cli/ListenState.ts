import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { homedir } from "node:os"
import { dirname, join } from "node:path"

/**
 * What `deposits listen` keeps between runs on this machine (infra/decisions/0091-cli-developer-loop.md): per
 * service URL and account, the listener it opened and that listener's signing secret, so the next run reopens the
 * same listener and the developer's receiver keeps verifying with the same secret. A file readable by its owner
 * only (0600): it holds secrets, as `~/.config/stripe` does.
 */

export interface KeptListener {
  readonly listener_id: string
  readonly secret: string
}

type State = Record<string, KeptListener>

/** `$XDG_CONFIG_HOME/deposits/listen.json`, or `~/.config/deposits/listen.json`. */
export const stateFile = () => {
  const base = process.env.XDG_CONFIG_HOME
  return join(
    base !== undefined && base !== "" ? base : join(homedir(), ".config"),
    "deposits",
    "listen.json"
  )
}

const keyOf = (api: string, accountId: string) => `${api} ${accountId}`

const read = (file: string): State => {
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as unknown
    return typeof parsed === "object" && parsed !== null ? (parsed as State) : {}
  } catch {
    // None yet, or unreadable: the run opens a new listener and writes a fresh file.
    return {}
  }
}

export const keptListener = (api: string, accountId: string): KeptListener | undefined => {
  const kept = read(stateFile())[keyOf(api, accountId)]
  return kept !== undefined && typeof kept.listener_id === "string" && typeof kept.secret === "string"
    ? kept
    : undefined
}

/** Records the listener of this service and account; written whole to a temporary file and renamed. */
export const keepListener = (api: string, accountId: string, kept: KeptListener) => {
  const file = stateFile()
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
  const state = { ...read(file), [keyOf(api, accountId)]: kept }
  const temporary = `${file}.${process.pid}.tmp`
  writeFileSync(temporary, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 })
  chmodSync(temporary, 0o600)
  renameSync(temporary, file)
}
