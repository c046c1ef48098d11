/**
 * The backfill's pool and the run's abort signal: its tasks each listen on the signal (their
 * requests do), and Node warns of a leak past 10 listeners unless the pool says to expect them.
 */
import { getMaxListeners, setMaxListeners } from "node:events";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inTurn, runPool } from "../src/sync/pool.js";

const warnings: Error[] = [];
const onWarning = (w: Error) => warnings.push(w);
beforeEach(() => {
  warnings.length = 0;
  process.on("warning", onWarning);
});
afterEach(() => {
  process.off("warning", onWarning);
});

/** A task that listens on `signal` until `release` resolves, as a request in flight does. */
function listening(signal: AbortSignal, release: Promise<void>) {
  return async () => {
    const onAbort = () => {};
    signal.addEventListener("abort", onAbort);
    await release;
    signal.removeEventListener("abort", onAbort);
  };
}

/** Node emits a warning on the next tick; a turn of the event loop lets it arrive. */
const warningsSettled = () => new Promise((resolve) => setImmediate(resolve));

function gate(): { open: () => void; opened: Promise<void> } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

describe("runPool and the signal its tasks listen on", () => {
  it("lets 32 tasks listen at once without a leak warning, and puts the limit back", async () => {
    const { signal } = new AbortController();
    const g = gate();
    let started = 0;
    const done = runPool(
      Array.from({ length: 32 }, (_, i) => i).values(),
      32,
      async () => {
        started++;
        if (started === 32) g.open();
        await listening(signal, g.opened)();
      },
      signal,
    );
    await done;
    await warningsSettled();
    expect(warnings.map((w) => w.name)).toEqual([]);
    expect(getMaxListeners(signal)).toBe(10);
  });

  it("leaves each of two overlapping pools' shares in place until that pool ends", async () => {
    const { signal } = new AbortController();
    const first = gate();
    const second = gate();
    const a = runPool([1, 2, 3].values(), 3, listening(signal, first.opened), signal);
    const b = runPool([1, 2, 3, 4].values(), 4, listening(signal, second.opened), signal);
    // Node's 10, and room for 2 listeners a task: 3 of a's and 4 of b's.
    expect(getMaxListeners(signal)).toBe(24);
    first.open();
    await a;
    // b's tasks still listen: its share stays.
    expect(getMaxListeners(signal)).toBe(18);
    second.open();
    await b;
    expect(getMaxListeners(signal)).toBe(10);
  });

  it("runs with a signal that has no limit, and leaves it so", async () => {
    const { signal } = new AbortController();
    setMaxListeners(0, signal);
    const g = gate();
    g.open();
    await expect(runPool([1, 2].values(), 2, listening(signal, g.opened), signal)).resolves.toBeUndefined();
    // Still no limit: 11 listeners raise no warning.
    for (let i = 0; i < 11; i++) signal.addEventListener("abort", () => {});
    await warningsSettled();
    expect(warnings.map((w) => w.name)).toEqual([]);
  });
});

describe("inTurn: the backfill's saves, one at a time in arrival order", () => {
  it("starts a task only when the one before it settled, even one that failed", async () => {
    const turn = inTurn();
    const log: string[] = [];
    let releaseFirst = () => {};
    const first = turn(async () => {
      log.push("first starts");
      await new Promise<void>((r) => {
        releaseFirst = r;
      });
      log.push("first ends");
      throw new Error("first failed");
    });
    const second = turn(async () => {
      log.push("second runs");
      return 2;
    });
    await Promise.resolve();
    expect(log).toEqual(["first starts"]);
    releaseFirst();
    await expect(first).rejects.toThrow("first failed");
    await expect(second).resolves.toBe(2);
    expect(log).toEqual(["first starts", "first ends", "second runs"]);
  });
});
