import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort } from "./Process"

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

/**
 * A private NATS server with JetStream on its own port and store (Debian's nats-server, as on the machines), so a
 * test can kill it, wipe its store and start it again on the same address.
 */
export const privateNats = async () => {
  const port = await freePort()
  const storeDir = mkdtempSync(join(tmpdir(), "nats-store-"))
  let child: ChildProcess | undefined
  const start = async () => {
    child = spawn("nats-server", ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", storeDir], {
      stdio: "ignore"
    })
    const until = Date.now() + 10_000
    while (Date.now() < until && !(await portOpen(port))) await new Promise((r) => setTimeout(r, 50))
    if (!(await portOpen(port))) throw new Error(`nats-server did not start on ${port}`)
  }
  const kill = async () => {
    const running = child
    if (running === undefined || running.exitCode !== null) return
    const exited = new Promise((r) => running.once("exit", r))
    running.kill("SIGKILL")
    await exited
  }
  await start()
  return {
    url: `nats://127.0.0.1:${port}`,
    start,
    /** SIGKILL, then the store is deleted: the server comes back empty. */
    killAndWipe: async () => {
      await kill()
      rmSync(storeDir, { recursive: true, force: true })
    },
    stop: async () => {
      await kill()
      rmSync(storeDir, { recursive: true, force: true })
    }
  }
}
