import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Subprocess and HTTP tests share 2 cores on CI; generous limits, no fixed sleeps.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // One PostgreSQL server for the run (throwaway unless BOOKING_TEST_POSTGRES_URL names one).
    globalSetup: ["test/support/postgres-server.ts"],
  },
});
