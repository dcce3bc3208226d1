import { Agent, request } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningService, startService } from "../../support/Service"

/**
 * Issue 39: a client (a proxy, a load balancer) that keeps an idle connection for longer than Node's 5 s default
 * must find it still open: a black-box client saw `other side closed` on connections reused after ~6 s idle.
 */
let service: RunningService
beforeAll(async () => {
  service = await startService()
}, 60_000)
afterAll(() => service?.stop())

const get = (agent: Agent, path: string) =>
  new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
    const req = request(`${service.baseUrl}${path}`, { agent }, (res) => {
      res.resume()
      res.on("end", () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }))
    })
    req.on("error", reject)
    req.end()
  })

describe("kept-alive connections", () => {
  it("stay open through an idle gap longer than Node's default, so a proxy's reuse is answered", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    try {
      const first = await get(agent, "/v1/health")
      expect(first).toEqual({ status: 200, reused: false })
      await new Promise((r) => setTimeout(r, 6_500))
      // The same socket, still open: the service did not close it after 5 s.
      expect(await get(agent, "/v1/health")).toEqual({ status: 200, reused: true })
    } finally {
      agent.destroy()
    }
  }, 30_000)
})
