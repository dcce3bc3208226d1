import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: [
      "test/unit/**/*.test.ts",
      "test/integration/**/*.test.ts",
      "test/e2e/**/*.test.ts",
      "test/fuzz/**/*.test.ts",
      "test/chaos/**/*.test.ts"
    ],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    reporters: ["default"]
  }
})
