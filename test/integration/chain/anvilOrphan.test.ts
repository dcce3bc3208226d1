import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const parentScript = fileURLToPath(new URL("../../support/anvilParent.ts", import.meta.url))
const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe.runIf(process.platform === "linux")("a local node whose parent is killed", () => {
  it("stops too, instead of serving on as an orphan", async () => {
    const parent = spawn(process.execPath, ["--import", "tsx", parentScript], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    const pid = await new Promise<number>((resolve, reject) => {
      let out = ""
      parent.stdout.on("data", (d) => {
        out += d
        const match = /ANVIL (\d+)/.exec(out)
        if (match) resolve(Number(match[1]))
      })
      parent.once("exit", () => reject(new Error(`parent exited first: ${out}`)))
    })
    expect(alive(pid)).toBe(true)
    parent.kill("SIGKILL")
    const until = Date.now() + 10_000
    while (alive(pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 50))
    expect(alive(pid)).toBe(false)
  }, 30_000)
})
