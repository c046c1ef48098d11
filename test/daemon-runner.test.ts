/**
 * The runner on standby: while a live process holds the writer lease, a refused run asks for
 * another `LEASE_RETRY_MS` later on the app's clock, which the test moves instead of waiting.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { App } from "../src/app.js";
import { createRunner, LEASE_RETRY_MS } from "../src/daemon/runner.js";
import { createLogger } from "../src/logger.js";
import { acquireLease, openStore, type Store } from "../src/store/index.js";
import type { SyncOptions } from "../src/sync/run-sync.js";
import { fixedClock } from "./support/fakes.js";
import { tempDir } from "./support/store-fixtures.js";

let tmp: ReturnType<typeof tempDir> | undefined;
let store: Store | undefined;
afterEach(() => {
  store?.close();
  tmp?.cleanup();
  store = undefined;
  tmp = undefined;
});

describe("the runner on standby", () => {
  it("asks for a run again LEASE_RETRY_MS after each refusal, one retry pending at a time, none once released", async () => {
    tmp = tempDir();
    store = openStore(tmp.file());
    const clock = fixedClock(Date.parse("2026-01-01T00:00:00.000Z"));
    // Another live process on this host (our parent) holds it for an hour of the clock.
    const holder = { name: "writer", holder: "other", ttlMs: 3_600_000, now: clock.now(), pid: process.ppid };
    expect(acquireLease(store, holder).acquired).toBe(true);
    // The runner reads no more of the app before it holds the lease.
    const app: Pick<App, "store" | "clock" | "logger"> = {
      store,
      clock,
      logger: createLogger({ level: "silent" }),
    };
    let retries = 0;
    const runner = createRunner({
      app: app as App,
      health: { recordSuccess: () => {}, recordFailure: () => {} },
      metrics: {
        recordRun: () => {},
        recordDrift: () => {},
        recordRepair: () => {},
        recordDetails: () => {},
      },
      sync: {} as SyncOptions,
      reconcilePageSize: 100,
      maxAuthRejects: 3,
      onFatal: (err) => {
        throw err;
      },
      retry: () => retries++,
    });

    expect(await runner.runOnce("startup")).toMatchObject({
      kind: "waiting",
      reason: expect.stringContaining(`pid ${process.ppid}`),
    });
    clock.advance(LEASE_RETRY_MS - 1);
    expect(retries).toBe(0);
    clock.advance(1);
    expect(retries).toBe(1);

    // A refusal while a retry is pending starts its wait again.
    await runner.runOnce("trigger");
    clock.advance(LEASE_RETRY_MS / 2);
    await runner.runOnce("trigger");
    expect(clock.pending()).toBe(1);
    clock.advance(LEASE_RETRY_MS / 2);
    expect(retries).toBe(1);
    clock.advance(LEASE_RETRY_MS / 2);
    expect(retries).toBe(2);

    await runner.runOnce("trigger");
    await runner.releaseLease();
    expect(clock.pending()).toBe(0);
    clock.advance(10 * LEASE_RETRY_MS);
    expect(retries).toBe(2);
  });
});
