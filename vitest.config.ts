import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Subprocess and HTTP tests share 2 cores on CI; generous limits, no fixed sleeps.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // vitest's default is one file at a time on 2 cores (cores - 1); most files wait on a subprocess,
    // HTTP or PostgreSQL part of the time, so two at once use the second core (docs/test-suite.md).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // One PostgreSQL server for the run (throwaway unless BOOKING_TEST_POSTGRES_URL names one).
    globalSetup: ["test/support/postgres-server.ts"],
  },
});
