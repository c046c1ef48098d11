/**
 * The daemon's scheduler: a run at start-up, one per cron tick, and runs triggered over HTTP, never
 * two at once. The in-flight guard lives here, not in node-cron, because it must cover every source.
 */
import { EventEmitter } from "node:events";
import { performance } from "node:perf_hooks";
import { type Logger as CronLogger, createTask, validate } from "node-cron";
import { ConfigError, isAbortError } from "../errors.js";
import type { Logger } from "../sync/ports.js";
import { errorText } from "./error-text.js";

/** Why a run started. `reconcile` only occurs when a reconcile schedule is configured. */
export type RunReason = "startup" | "schedule" | "reconcile" | "trigger";

/** What `run:end` reports. */
export interface RunEnd {
  reason: RunReason;
  /** 1 for the first run of this scheduler, then counting up. */
  seq: number;
  ok: boolean;
  /** Wall time of the run, milliseconds (monotonic clock). */
  durationMs: number;
  /** What `runOnce` resolved with, when it did. */
  result?: unknown;
  /** What `runOnce` threw, when it did. */
  error?: Error;
}

/** The scheduler's events; tests await them instead of sleeping. */
export interface SchedulerEvents {
  "run:start": [{ reason: RunReason; seq: number }];
  "run:end": [RunEnd];
  /** A schedule tick found a run in progress; `skipped` counts them since start. */
  "tick:skipped": [{ skipped: number }];
}

/** Calls `onTick` on the cron expression until stopped. Injectable so tests drive ticks by hand. */
export type Ticker = (expression: string, onTick: () => void) => { stop(): void };

/** A trigger is refused only once the scheduler is stopping. */
export type TriggerResult = { accepted: true; coalesced: boolean } | { accepted: false; reason: "stopping" };

export interface SchedulerOptions {
  /** Cron expression of the syncs (5 fields, or 6 with seconds first). */
  schedule: string;
  /** Cron expression of reconcile runs; none when undefined. */
  reconcileSchedule?: string | undefined;
  /** One run. May reject: the failure is logged with its cause and the next tick tries again. */
  runOnce: (reason: RunReason) => Promise<unknown>;
  logger: Logger;
  /** Called for each skipped tick (for a metric). */
  onSkip?: (info: { skipped: number }) => void;
  /** Source of ticks; default node-cron (`cronTicker`). */
  ticker?: Ticker;
}

/** The daemon's one source of runs. */
export type Scheduler = ReturnType<typeof createScheduler>;

/** Throws ConfigError unless node-cron accepts the expression. */
export function assertCron(name: string, expression: string): void {
  if (!validate(expression)) {
    throw new ConfigError(`${name} is not a valid cron expression: "${expression}"`, {
      hint: "Try: '* * * * *' (every minute) or '*/5 * * * *' (every 5 minutes)",
    });
  }
}

/** Creates a scheduler; nothing runs until `start()`. Throws ConfigError on a bad cron expression. */
export function createScheduler(options: SchedulerOptions) {
  const { logger, onSkip } = options;
  assertCron("schedule", options.schedule);
  if (options.reconcileSchedule !== undefined) assertCron("reconcile schedule", options.reconcileSchedule);
  const ticker = options.ticker ?? cronTicker(logger);
  const events = new EventEmitter<SchedulerEvents>();
  // Runs asked for while another was in flight, in arrival order; a Set so repeats coalesce.
  const queued = new Set<"trigger" | "reconcile">();
  const tickers: Array<{ stop(): void }> = [];
  let state: "new" | "started" | "stopped" = "new";
  let inFlight: Promise<void> | null = null;
  let seq = 0;
  let skipped = 0;

  // A throwing listener must not break the run loop.
  const emit = <K extends keyof SchedulerEvents>(name: K, ...args: SchedulerEvents[K]) =>
    guarded(logger, `"${name}" listener`, () =>
      (events.emit as (n: K, ...a: SchedulerEvents[K]) => boolean)(name, ...args),
    );

  const launch = (reason: RunReason): void => {
    const id = ++seq;
    emit("run:start", { reason, seq: id });
    inFlight = execute(options, reason, id).then((end) => {
      inFlight = null;
      emit("run:end", end);
      drainQueue();
    });
  };

  const drainQueue = (): void => {
    if (state === "stopped" || inFlight !== null) return;
    const next = queued.values().next();
    if (next.done) return;
    queued.delete(next.value);
    launch(next.value);
  };

  const onTick = (source: "schedule" | "reconcile"): void => {
    if (state !== "started") return;
    if (inFlight === null) {
      launch(source);
      return;
    }
    if (source === "reconcile") {
      // Reconcile ticks are rare (daily, say) and often coincide with a sync tick: defer, don't drop.
      queued.add("reconcile");
      logger.info({}, "reconcile deferred until the run in progress ends");
      return;
    }
    skipped++;
    logger.info({ skipped }, "schedule tick skipped: the previous run is still in progress");
    emit("tick:skipped", { skipped });
    if (onSkip) guarded(logger, "onSkip hook", () => onSkip({ skipped }));
  };

  return {
    events,
    /** Starts the ticks and runs once now (unless a triggered run is already going). */
    start(): void {
      if (state !== "new") return;
      state = "started";
      tickers.push(ticker(options.schedule, () => onTick("schedule")));
      if (options.reconcileSchedule !== undefined) {
        tickers.push(ticker(options.reconcileSchedule, () => onTick("reconcile")));
      }
      if (inFlight === null) launch("startup");
    },
    /** A run now, or one follow-up run after the one in flight (however many triggers arrive). */
    trigger(): TriggerResult {
      if (state === "stopped") return { accepted: false, reason: "stopping" };
      if (inFlight === null) {
        launch("trigger");
        return { accepted: true, coalesced: false };
      }
      queued.add("trigger");
      return { accepted: true, coalesced: true };
    },
    /** Stops the ticks, drops queued runs and waits for the run in flight. Idempotent. */
    async stop(): Promise<void> {
      if (state !== "stopped") {
        state = "stopped";
        for (const t of tickers.splice(0)) t.stop();
        queued.clear();
      }
      await inFlight;
    },
    /** Whether a run is in flight. */
    running: () => inFlight !== null,
    /** Schedule ticks skipped because a run was in flight, since creation. */
    skippedTicks: () => skipped,
  };
}

/** One run: never rejects; a failure is logged with its cause and reported in the result. */
async function execute({ runOnce, logger }: SchedulerOptions, reason: RunReason, seq: number) {
  const t0 = performance.now();
  try {
    const result = await runOnce(reason);
    return { reason, seq, ok: true, durationMs: performance.now() - t0, result };
  } catch (thrown) {
    const error = thrown instanceof Error ? thrown : new Error(errorText(thrown), { cause: thrown });
    if (isAbortError(error)) logger.info({ reason, seq }, "run aborted");
    else {
      logger.error({ reason, seq, error: errorText(error) }, "run failed; the next tick tries again");
      logger.debug({ reason, seq, err: error }, "run failure details");
    }
    return { reason, seq, ok: false, durationMs: performance.now() - t0, error };
  }
}

function guarded(logger: Logger, what: string, fn: () => void): void {
  try {
    fn();
  } catch (err) {
    logger.error({ error: errorText(err) }, `${what} failed`);
  }
}

/** The default ticker: a node-cron task per expression, its own log lines routed to our logger. */
export function cronTicker(logger: Logger): Ticker {
  const cronLogger: CronLogger = {
    info: (message) => logger.info({ source: "node-cron" }, message),
    warn: (message) => logger.warn({ source: "node-cron" }, message),
    error: (message, err) =>
      logger.error({ source: "node-cron", error: errorText(err ?? message) }, "cron error"),
    debug: (message) => logger.debug({ source: "node-cron" }, String(message)),
  };
  return (expression, onTick) => {
    const task = createTask(expression, () => onTick(), { logger: cronLogger });
    // A tick missed because the event loop was busy is harmless here; keep it out of healthy logs.
    task.on("execution:missed", (ctx) => {
      logger.debug({ at: ctx.date.toISOString() }, "cron tick missed (event loop busy)");
    });
    task.start();
    return {
      stop() {
        Promise.resolve(task.destroy()).catch((err: unknown) => {
          logger.warn({ error: errorText(err) }, "stopping a cron task failed");
        });
      },
    };
  };
}

/** The longest gap between the expression's next `count` runs, in seconds: the schedule's period. */
export function schedulePeriodSeconds(expression: string, count = 25): number {
  assertCron("schedule", expression);
  const task = createTask(expression, () => undefined);
  try {
    const runs = task.getNextRuns(count).map((d) => d.getTime());
    const gaps = runs.slice(1).map((at, i) => at - (runs[i] ?? at));
    return Math.round(Math.max(0, ...gaps) / 1000);
  } finally {
    void task.destroy();
  }
}
