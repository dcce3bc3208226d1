import { api, say, saying, state, status } from "./page"
import type { PayerRead } from "./read"
import { render } from "./render"

/** Follows the request: a long poll per change, backing off after errors (a restarted server included). */
export const follow = async () => {
  let delay = 500
  const pause = async () => {
    await new Promise((r) => setTimeout(r, delay))
    delay = Math.min(delay * 2, 10_000)
  }
  for (;;) {
    const version = state.current?.version
    const asked = Date.now()
    try {
      const res = await fetch(
        version === undefined
          ? api
          : `${api}?wait_for=change&version=${encodeURIComponent(version)}&timeout=25`
      )
      if (!res.ok) throw new Error(`HTTP ${res.status}`)
      const read = (await res.json()) as PayerRead
      render(read)
      // A poll answered at once with nothing new (the server is closing, or holds too many polls from here) is
      // asked again only after a pause: polling again at once would be a busy loop against a struggling server.
      if (read.version === version && Date.now() - asked < 1_000) await pause()
      else delay = 500
    } catch {
      say({ id: "status.reconnecting" })
      await pause()
      continue
    }
    if (status.dataset.tone !== "error" && saying("status.reconnecting")) say("")
  }
}
