/** The composition root: the one place that constructs the real adapters, each command's as it needs them. */
import type { pino } from "pino";
import { createApiClient } from "./api/client.js";
import { systemClock } from "./clock.js";
import { type Config, requireApi } from "./config/config.js";
import { apiUrlProblem } from "./config/transport.js";
import type { Metrics } from "./daemon/metrics.js";
import { ConfigError } from "./errors.js";
import { createEventNotifier, type EventWake } from "./events/notifier.js";
import { createLogger } from "./logger.js";
import { type Mirror, openMirror, type Store } from "./store/index.js";
import { personalDataPolicy } from "./store/personal-data.js";
import { streamName } from "./sync/feed/walk.js";
import type { PartnerApi, TimerClock } from "./sync/ports.js";
import { guardSource } from "./sync/source-guard.js";

export { systemClock };

/** What a command needs built; nothing else is. */
export interface Needs {
  /** The mirror to write (created and migrated if need be), or to read: it must exist, nothing changes. */
  mirror: "writer" | "reader";
  /** The partner API client, checked against the mirror's source; the API settings are then required. */
  api?: true;
  /** The daemon's metrics: every HTTP attempt counted, the checkpoint's lag read at scrape time. */
  metrics?: true;
  /** A command that reads the file with SQL: a PostgreSQL mirror is refused before anything opens. */
  sqlite?: { command: string; instead: string };
}

/** A command's world: the core's ports as `N` asks for them (what it did not ask for may be undefined). */
export interface App<N extends Omit<Needs, "mirror"> = { api: true }> {
  api: N extends { api: true } ? PartnerApi : PartnerApi | undefined;
  store: N extends { sqlite: object } ? Store : Mirror;
  metrics: N extends { metrics: true } ? Metrics : Metrics | undefined;
  clock: TimerClock;
  logger: pino.Logger;
  /** Woken after each commit of this process's pages: the events stream may have news. */
  events: EventWake;
  /** Closes the mirror; a second call does nothing. */
  close(): Promise<void>;
}

/** Builds what `needs` names; errors (a missing API setting, a mirror that cannot open) come before any use. */
export async function openApp<N extends Omit<Needs, "mirror">>(
  config: Config,
  { needs }: { needs: N & Pick<Needs, "mirror"> },
): Promise<App<N>> {
  if (needs.sqlite && config.database.kind !== "sqlite") {
    throw new ConfigError(
      `\`booking-sync ${needs.sqlite.command}\` reads a SQLite mirror, and this one is in PostgreSQL`,
      { hint: needs.sqlite.instead },
    );
  }
  const source = needs.api ? requireApi(config) : undefined;
  const logger = createLogger({ level: config.logLevel });
  if (source) warnAboutSource(source, logger);
  const events = createEventNotifier();
  const store = await openMirror(
    config.database,
    needs.mirror === "reader"
      ? { readonly: true }
      : {
          logger,
          clock: systemClock,
          personalData: personalDataPolicy(config.personalData, config.personalDataKey),
          mode: config.dbMode,
          events: config.eventsRetentionDays > 0,
          onCommit: events.notify,
        },
  );
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= Promise.resolve(store.close());
    return closing;
  };
  try {
    const metrics = needs.metrics ? await daemonMetrics(config, store) : undefined;
    const api =
      source &&
      guardSource(
        createApiClient({
          baseUrl: source.apiBaseUrl,
          token: source.apiToken,
          timeoutMs: config.timeoutMs,
          maxRetries: config.maxRetries,
          maxBodyBytes: config.maxResponseMb * 1024 * 1024,
          // One bound for the whole run: a fill's slices and pages, a backfill's pages, share the client.
          maxInFlight: config.concurrency,
          logger,
          onRequest: metrics?.onRequest,
        }),
        // Every command that reads the API goes through here: none writes another source's bookings.
        { store, baseUrl: source.apiBaseUrl, clock: systemClock, logger },
      );
    return { api, store, metrics, clock: systemClock, logger, events: events as EventWake, close } as App<N>;
  } catch (err) {
    await close();
    throw err;
  }
}

/** Says what the settings risk: a token over plain http, hashes anyone can reverse. */
function warnAboutSource(config: Config & { apiBaseUrl: string }, logger: pino.Logger): void {
  if (config.apiAllowInsecure && apiUrlProblem(config.apiBaseUrl, false))
    logger.warn(
      { baseUrl: config.apiBaseUrl },
      "BOOKING_API_ALLOW_INSECURE=true: the token is sent over plain http",
    );
  if (config.personalData === "hash" && config.personalDataKey === undefined)
    logger.warn(
      "SYNC_PERSONAL_DATA=hash without SYNC_PERSONAL_DATA_KEY: a phone number's hash can be reversed by hashing every number",
    );
}

/** The daemon's metrics; prom-client is loaded for the daemon alone. */
async function daemonMetrics(config: Config, store: Mirror): Promise<Metrics> {
  const { createMetrics } = await import("./daemon/metrics.js");
  const stream = streamName(config.bookingType);
  // Committed checkpoints, on the readers' connection: a scrape never waits behind a batch.
  const readCheckpoints = async () => ({ [stream]: (await store.readCheckpoints())[stream] ?? null });
  const readEvents = () => store.readEventsStatus(systemClock.now());
  return createMetrics({ clock: systemClock, readCheckpoints, readEvents });
}
