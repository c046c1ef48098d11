/** `--concurrency` is SYNC_CONCURRENCY's flag on every command that reads the API at once: checked before any work. */
import { describe, expect, it } from "vitest";
import { runCli } from "./support/harness.js";

const env = { ...process.env, BOOKING_API_BASE_URL: "http://127.0.0.1:9/api/v2", BOOKING_API_TOKEN: "t" };

describe("--concurrency", () => {
  it.each(["sync", "run", "backfill"])(
    "%s takes it, and exits 2 naming it when out of range",
    async (command) => {
      const r = await runCli([command, "--concurrency", "33"], env);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('--concurrency = "33" is not valid: expected a whole number from 1 to 32');
    },
  );

  it("two variables that disagree exit 2 naming both", async () => {
    const r = await runCli(["sync"], { ...env, SYNC_CONCURRENCY: "8", BACKFILL_CONCURRENCY: "4" });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('SYNC_CONCURRENCY = "8" and BACKFILL_CONCURRENCY = "4" disagree');
  });
});
