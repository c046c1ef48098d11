import { type EventEmitter, once } from "node:events";
import { getTasks } from "node-cron";
import { describe, expect, it, vi } from "vitest";
import {
  createScheduler,
  type RunReason,
  type Scheduler,
  type SchedulerEvents,
  type SchedulerOptions,
  schedulePeriodSeconds,
  type Ticker,
} from "../src/daemon/scheduler.js";
import { ConfigError, wrapError } from "../src/errors.js";
import type { Logger } from "../src/sync/ports.js";

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
  reject(err: unknown): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

type Entry = { level: string; obj: object; msg: string | undefined };

function memoryLogger(): Logger & { entries: Entry[] } {
  const entries: Entry[] = [];
  const at = (level: string) => (obj: object, msg?: string) => entries.push({ level, obj, msg });
  return { entries, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

/** A ticker the test fires by hand: `tick(expression)` calls that expression's callback. */
function manualTicker() {
  const active = new Map<string, () => void>();
  const ticker: Ticker = (expression, onTick) => {
    active.set(expression, onTick);
    return { stop: () => active.delete(expression) };
  };
  const tick = (expression = "* * * * *") => active.get(expression)?.();
  return { ticker, tick, active };
}

/**
 * A scheduler whose runs each wait for the test to release them, recording reasons and the
 * highest number of runs ever in flight at once.
 */
function harness(options: Partial<SchedulerOptions> = {}) {
  const { ticker, tick, active } = manualTicker();
  const logger = memoryLogger();
  const reasons: RunReason[] = [];
  const gates: Deferred[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const scheduler = createScheduler({
    schedule: "* * * * *",
    logger,
    ticker,
    runOnce: async (reason) => {
      reasons.push(reason);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const gate = deferred();
      gates.push(gate);
      try {
        await gate.promise;
      } finally {
        inFlight--;
      }
      return reason;
    },
    ...options,
  });
  /** Releases the run in flight and waits until it ended. */
  const finish = async (how: "ok" | Error = "ok") => {
    const ended = nextEvent(scheduler, "run:end");
    const gate = gates.at(-1);
    if (how === "ok") gate?.resolve();
    else gate?.reject(how);
    return ended;
  };
  return { scheduler, tick, active, logger, reasons, finish, maxInFlight: () => maxInFlight };
}

async function nextEvent<K extends keyof SchedulerEvents>(
  scheduler: Scheduler,
  name: K,
): Promise<SchedulerEvents[K][0]> {
  const args = (await once(scheduler.events as EventEmitter, name)) as SchedulerEvents[K];
  return args[0];
}

describe("scheduler", () => {
  it("runs once at start-up, then on each tick, never two at once", async () => {
    const skips: number[] = [];
    const h = harness({ onSkip: ({ skipped }) => skips.push(skipped) });
    const started = nextEvent(h.scheduler, "run:start");
    h.scheduler.start();
    expect(await started).toEqual({ reason: "startup", seq: 1 });
    expect(h.scheduler.running()).toBe(true);

    h.tick();
    h.tick();
    h.tick();
    expect(h.reasons).toEqual(["startup"]);
    expect(h.scheduler.skippedTicks()).toBe(3);
    expect(skips).toEqual([1, 2, 3]);

    const end = await h.finish();
    expect(end).toMatchObject({ reason: "startup", seq: 1, ok: true, result: "startup" });
    expect(h.scheduler.running()).toBe(false);

    h.tick();
    expect(h.reasons).toEqual(["startup", "schedule"]);
    await h.finish();
    expect(h.maxInFlight()).toBe(1);
    await h.scheduler.stop();
  });

  it("announces each skipped tick as an event", async () => {
    const h = harness();
    h.scheduler.start();
    const skipped = nextEvent(h.scheduler, "tick:skipped");
    h.tick();
    expect(await skipped).toEqual({ skipped: 1 });
    await h.finish();
    await h.scheduler.stop();
  });

  it("coalesces triggers during a run into exactly one follow-up run", async () => {
    const h = harness();
    h.scheduler.start();
    const results = [1, 2, 3, 4, 5].map(() => h.scheduler.trigger());
    expect(results).toEqual(Array(5).fill({ accepted: true, coalesced: true }));
    h.tick(); // a tick meanwhile is skipped, not queued
    const followUp = nextEvent(h.scheduler, "run:start");
    await h.finish();
    expect(await followUp).toEqual({ reason: "trigger", seq: 2 });
    await h.finish();
    expect(h.reasons).toEqual(["startup", "trigger"]);
    expect(h.scheduler.running()).toBe(false);

    // Idle: a trigger runs at once.
    expect(h.scheduler.trigger()).toEqual({ accepted: true, coalesced: false });
    expect(h.reasons).toEqual(["startup", "trigger", "trigger"]);
    await h.finish();
    expect(h.maxInFlight()).toBe(1);
    await h.scheduler.stop();
  });

  it("logs a failed run with its cause and keeps scheduling", async () => {
    const h = harness();
    h.scheduler.start();
    const cause = new Error("HTTP 503 from fetch-recent-bookings");
    const end = await h.finish(wrapError("sync stream all", cause));
    expect(end.ok).toBe(false);
    expect(end.error?.message).toContain("HTTP 503");
    const errors = h.logger.entries.filter((e) => e.level === "error");
    expect(errors).toHaveLength(1);
    expect(errors[0]?.obj).toMatchObject({
      reason: "startup",
      error: "sync stream all: HTTP 503 from fetch-recent-bookings",
    });

    h.tick();
    expect(h.reasons).toEqual(["startup", "schedule"]);
    expect((await h.finish()).ok).toBe(true);
    await h.scheduler.stop();
  });

  it("survives a runOnce that throws synchronously or rejects with a non-error", async () => {
    const logger = memoryLogger();
    const { ticker, tick } = manualTicker();
    let calls = 0;
    const scheduler = createScheduler({
      schedule: "* * * * *",
      logger,
      ticker,
      runOnce: (() => {
        calls++;
        if (calls === 1) throw new Error("boom before any await");
        return Promise.reject("a plain string");
      }) as SchedulerOptions["runOnce"],
    });
    const first = nextEvent(scheduler, "run:end");
    scheduler.start();
    expect((await first).error?.message).toBe("boom before any await");
    const second = nextEvent(scheduler, "run:end");
    tick();
    expect((await second).error?.message).toBe("a plain string");
    expect(logger.entries.filter((e) => e.level === "error")).toHaveLength(2);
    await scheduler.stop();
  });

  it("logs an aborted run quietly, not as an error", async () => {
    const h = harness();
    h.scheduler.start();
    const abort = new Error("The operation was aborted");
    abort.name = "AbortError";
    await h.finish(wrapError("sync stream all", abort));
    expect(h.logger.entries.filter((e) => e.level === "error")).toEqual([]);
    expect(h.logger.entries.some((e) => e.msg === "run aborted")).toBe(true);
    await h.scheduler.stop();
  });

  it("stop() waits for the run in flight, drops queued runs and refuses triggers", async () => {
    const h = harness();
    h.scheduler.start();
    h.scheduler.trigger(); // queued behind the start-up run
    let stopped = false;
    const stopping = h.scheduler.stop().then(() => {
      stopped = true;
    });
    await Promise.resolve();
    expect(stopped).toBe(false);
    expect(h.active.size).toBe(0);
    expect(h.scheduler.trigger()).toEqual({ accepted: false, reason: "stopping" });
    await h.finish();
    await stopping;
    expect(stopped).toBe(true);
    expect(h.reasons).toEqual(["startup"]);
    await h.scheduler.stop(); // idempotent
  });

  it("defers a reconcile tick that meets a run in progress instead of dropping it", async () => {
    const h = harness({ reconcileSchedule: "0 3 * * *" });
    h.scheduler.start();
    h.tick("0 3 * * *");
    expect(h.scheduler.skippedTicks()).toBe(0);
    const next = nextEvent(h.scheduler, "run:start");
    await h.finish();
    expect((await next).reason).toBe("reconcile");
    await h.finish();
    h.tick("0 3 * * *");
    expect(h.reasons).toEqual(["startup", "reconcile", "reconcile"]);
    await h.finish();
    await h.scheduler.stop();
  });

  it("rejects an invalid cron expression with a ConfigError that names it", () => {
    const make = (schedule: string, reconcileSchedule?: string) =>
      createScheduler({
        schedule,
        reconcileSchedule,
        logger: memoryLogger(),
        runOnce: async () => undefined,
      });
    expect(() => make("every minute")).toThrow(ConfigError);
    expect(() => make("61 * * * *")).toThrow(/"61 \* \* \* \*"/);
    expect(() => make("* * * * *", "nope")).toThrow(/reconcile schedule/);
  });

  it("ticks on node-cron's schedule as time passes, and stops its task", async () => {
    // node-cron reads the global clock, so vitest's fake timers move it: minutes pass at once.
    vi.useFakeTimers({
      now: Date.parse("2026-01-01T00:00:30.000Z"),
      toFake: ["setTimeout", "clearTimeout", "Date"],
    });
    try {
      const tasksBefore = getTasks().size;
      const reasons: RunReason[] = [];
      const scheduler = createScheduler({
        schedule: "* * * * *",
        logger: memoryLogger(),
        runOnce: async (reason) => void reasons.push(reason),
      });
      scheduler.start();
      expect(getTasks().size).toBe(tasksBefore + 1);
      await vi.advanceTimersByTimeAsync(29_000);
      expect(reasons).toEqual(["startup"]);
      await vi.advanceTimersByTimeAsync(1_000);
      expect(reasons).toEqual(["startup", "schedule"]);
      await vi.advanceTimersByTimeAsync(120_000);
      expect(reasons).toEqual(["startup", "schedule", "schedule", "schedule"]);
      await scheduler.stop();
      expect(getTasks().size).toBe(tasksBefore);
      await vi.advanceTimersByTimeAsync(120_000);
      expect(reasons).toHaveLength(4);
    } finally {
      vi.useRealTimers();
    }
  });

  it("derives a schedule's period in seconds", () => {
    expect(schedulePeriodSeconds("* * * * * *")).toBe(1);
    expect(schedulePeriodSeconds("* * * * *")).toBe(60);
    expect(schedulePeriodSeconds("*/5 * * * *")).toBe(300);
    // A daylight-saving change in the local zone may stretch one day by an hour.
    expect(schedulePeriodSeconds("0 3 * * *")).toBeGreaterThanOrEqual(86_400);
    expect(schedulePeriodSeconds("0 3 * * *")).toBeLessThanOrEqual(90_000);
  });
});
