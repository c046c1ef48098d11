/** The composition root: the one place that constructs the real adapters from the config. */
import type { pino } from "pino";
import { createApiClient, type RequestEvent } from "./api/client.js";
import type { Config } from "./config/config.js";
import { requireApi } from "./config/config.js";
import { apiUrlProblem } from "./config/transport.js";
import { createLogger } from "./logger.js";
import { type Mirror, openMirror } from "./store/index.js";
import { personalDataPolicy } from "./store/personal-data.js";
import type { Clock, PartnerApi } from "./sync/ports.js";
import { guardSource } from "./sync/source-guard.js";

export const systemClock: Clock = { now: () => new Date() };

export interface App {
  api: PartnerApi;
  store: Mirror;
  clock: Clock;
  logger: pino.Logger;
  close(): Promise<void>;
}

export interface AppOptions {
  logger?: pino.Logger;
  /** Observes every HTTP attempt (metrics). */
  onRequest?: (event: RequestEvent) => void;
}

/** Opens the database (applying migrations) and builds the API client, checked against the mirror's source. */
export async function openApp(config: Config, options: AppOptions = {}): Promise<App> {
  const { apiBaseUrl, apiToken } = requireApi(config);
  const logger = options.logger ?? createLogger({ level: config.logLevel });
  if (config.apiAllowInsecure && apiUrlProblem(apiBaseUrl, false))
    logger.warn(
      { baseUrl: apiBaseUrl },
      "BOOKING_API_ALLOW_INSECURE=true: the token is sent over plain http",
    );
  const personalData = personalDataPolicy(config.personalData, config.personalDataKey);
  if (personalData?.mode === "hash" && config.personalDataKey === undefined)
    logger.warn(
      "SYNC_PERSONAL_DATA=hash without SYNC_PERSONAL_DATA_KEY: a phone number's hash can be reversed by hashing every number",
    );
  const store = await openMirror(config.database, {
    logger,
    personalData,
    mode: Number.parseInt(config.dbMode, 8),
  });
  const client = createApiClient({
    baseUrl: apiBaseUrl,
    token: apiToken,
    timeoutMs: config.timeoutMs,
    maxRetries: config.maxRetries,
    maxBodyBytes: config.maxResponseMb * 1024 * 1024,
    // One bound for the whole run: a fill's slices and pages, a backfill's pages, share the client.
    maxInFlight: config.concurrency,
    logger,
    onRequest: options.onRequest,
  });
  // Every command that reads the API goes through here: none writes another source's bookings.
  const api = guardSource(client, { store, baseUrl: apiBaseUrl, clock: systemClock, logger });
  return { api, store, clock: systemClock, logger, close: async () => store.close() };
}
