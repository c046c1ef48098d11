/**
 * The `run` daemon's composition and the one stop sequence its parts share: quiet while healthy,
 * specific when not, safe to kill at any moment.
 */
import type { App } from "../app.js";
import { type Config, syncSettings } from "../config/config.js";
import { streamName } from "../sync/feed/walk.js";
import { errorText } from "./error-text.js";
import { createEventSink } from "./event-sink.js";
import { eventsRefusal } from "./events-http.js";
import { createHealth, fillReadiness } from "./health.js";
import { startHttpServer, triggerGuard, triggerRefusal } from "./http.js";
import { tokenGuard } from "./http-common.js";
import { createRunner } from "./runner.js";
import { createScheduler, schedulePeriodSeconds } from "./scheduler.js";
import { installShutdown } from "./shutdown.js";
import { withheldView } from "./withheld.js";

/** The daemon's world: the API client, the mirror to write and the metrics (`openApp`). */
export type DaemonApp = App<{ api: true; metrics: true }>;

export interface Daemon {
  /** Base URL of the HTTP endpoint, e.g. "http://127.0.0.1:8080"; undefined when HTTP_PORT=0. */
  url: string | undefined;
  /** Stops gracefully, logging `why`; idempotent (every call returns the same promise). */
  stop(why: string): Promise<void>;
  /** Settles once stopped: resolves after `stop` or a signal, rejects when it stopped by itself. */
  finished: Promise<void>;
}

type Parts = Awaited<ReturnType<typeof assemble>>;

/**
 * Starts the daemon on `app`, syncing at once and then on schedule; rejects on an unbindable port.
 * It takes the writer lease run by run, and closes `app` when it stops.
 */
export async function startDaemon(app: DaemonApp, config: Config): Promise<Daemon> {
  // The runner reports a fatal error before the stop sequence exists; `launch` fills this in.
  const fatal = { stop: (_error: Error): void => undefined };
  const parts = await assemble(config, app, (error) => fatal.stop(error));
  return launch(parts, fatal);
}

/** Builds everything that does not run yet: readiness, runner, scheduler, the HTTP endpoint. */
async function assemble(config: Config, app: DaemonApp, onFatal: (error: Error) => void) {
  const { metrics } = app;
  const readyMaxAgeSeconds = config.readyMaxAgeSeconds ?? 3 * schedulePeriodSeconds(config.schedule);
  const health = createHealth({ readyMaxAgeSeconds });
  const sink = createEventSink(config, app);
  const runner = createRunner({
    app,
    health,
    metrics,
    sync: syncSettings(config),
    reconcilePageSize: config.pageSize,
    reconcileMaxMissingPercent: config.reconcileMaxMissingPercent,
    // A token the API rejected on three runs in a row will not work on the fourth.
    maxAuthRejects: 3,
    onFatal,
    retry: () => scheduler.trigger(),
    onLease: sink.leased,
    afterRun: sink.prune,
  });
  const withheld = withheldView(app.store, app.logger);
  await withheld.refresh();
  const scheduler = createScheduler({
    schedule: config.schedule,
    reconcileSchedule: config.reconcileSchedule,
    runOnce: withheld.after(runner.runOnce),
    logger: app.logger,
    onSkip: () => metrics.recordSkippedTick(),
  });
  const http =
    config.httpPort === 0
      ? undefined
      : await startHttpServer({
          host: config.httpHost,
          port: config.httpPort,
          health: {
            status: fillReadiness(
              (now) => withheld.annotate(runner.status(health.status(now))),
              (now) => app.store.readFill(streamName(config.bookingType), now),
              app.logger,
            ),
          },
          registry: metrics.registry,
          trigger: () => scheduler.trigger(),
          statusPage: () => app.store.readStatusPage(app.clock.now()),
          triggerToken: config.triggerToken,
          events: {
            store: app.store.events,
            token: config.eventsToken,
            notifier: app.events,
            clock: app.clock,
          },
          clock: app.clock,
          logger: app.logger,
        });
  return { config, app, health, metrics, runner, scheduler, http, sink };
}

/** Wires the stop sequence to signals and to fatal errors, then starts the schedule. */
function launch(parts: Parts, fatal: { stop: (error: Error) => void }): Daemon {
  const { app, scheduler, http } = parts;
  let settle: { resolve: () => void; reject: (err: Error) => void } | undefined;
  const finished = new Promise<void>((resolve, reject) => {
    settle = { resolve, reject };
  });
  // A caller that never awaits `finished` (a signal exits the process first) must not see it as unhandled.
  finished.catch(() => undefined);
  let stopping: Promise<void> | undefined;
  const stop = (why: string, error?: Error): Promise<void> => {
    stopping ??= stopAll(parts, why, error).then(
      () => {
        process.stderr.off("error", logsLost);
        if (!shutdown.shuttingDown()) shutdown.dispose();
        if (error) settle?.reject(error);
        else settle?.resolve();
      },
      (err: unknown) => {
        settle?.reject(err instanceof Error ? err : new Error(errorText(err)));
        throw err;
      },
    );
    return stopping;
  };
  fatal.stop = (error) => {
    // `finished` carries the outcome; this promise is only for a signal handler to await.
    stop(error.message, error).catch(() => undefined);
  };
  const shutdown = installShutdown({
    onShutdown: (signal) => stop(`received ${signal}`),
    logger: app.logger,
  });
  // With its log output gone (the reader of standard error left: EPIPE) a daemon would sync on
  // unseen for days: it stops as on a fatal error, exit 1, so its supervisor restarts it with its
  // logs. A one-shot command finishes its work instead (cli.ts).
  const logsLost = (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") fatal.stop(new Error("its log output is gone: standard error's reader left"));
  };
  process.stderr.on("error", logsLost);
  logStart(parts);
  scheduler.start();
  return { url: http?.url, stop: (why) => stop(why), finished };
}

/** One line that says how the daemon runs; never the config object itself, which holds the token. */
function logStart({ config, app, health, http }: Parts): void {
  const trigger = http ? triggerGuard(config.httpHost, config.triggerToken) : "off";
  if (trigger === "refused") app.logger.warn({ host: config.httpHost }, triggerRefusal(config.httpHost));
  const pull = http ? tokenGuard(config.httpHost, config.eventsToken) : "off";
  if (pull === "refused") app.logger.warn({ host: config.httpHost }, eventsRefusal(config.httpHost));
  app.logger.info(
    {
      schedule: config.schedule,
      reconcileSchedule: config.reconcileSchedule ?? "off",
      http: http?.url ?? "off",
      trigger,
      events: pull,
      readyMaxAgeSeconds: health.status(app.clock.now()).maxAgeSeconds,
      details: config.details,
      db: app.store.location,
    },
    "booking-sync run: syncing on a schedule until SIGTERM",
  );
}

/** The stop sequence: abort the run in flight, wait for it, stop serving, release, close. */
async function stopAll(parts: Parts, why: string, fatal: Error | undefined): Promise<void> {
  const { app, runner, scheduler, http, sink } = parts;
  if (fatal) app.logger.error({ why }, `stopping: ${why}`);
  else app.logger.info({ why }, `stopping: ${why}`);
  runner.abort(why);
  try {
    await scheduler.stop();
    await http?.close();
  } finally {
    await sink.stop();
    await runner
      .releaseLease()
      .catch((err) => app.logger.warn({ err }, "could not release the writer lease"));
    await app.close();
  }
  app.logger.info({}, "stopped: the schedule, the HTTP endpoint and the database are closed");
}
