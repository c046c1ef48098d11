/**
 * The partner API adapter (`PartnerApi`): got without its retry, `withRetry` for the policy, and zod
 * per record so one malformed booking never sinks a page. Error messages are scrubbed of the token.
 */
import got, { RequestError } from "got";
import { maskUserinfo } from "../config/transport.js";
import { ApiError, ConfigError } from "../errors.js";
import type { FeedPage, FeedQuery, ListPage, ListQuery, PartnerApi } from "../sync/ports.js";
import { PACKAGE_VERSION } from "../version.js";
import { answer } from "./answer.js";
import { RequestGate } from "./gate.js";
import { type AttemptLogger, observe, type RequestEvent, reportFailure } from "./observe.js";
import { sameOriginOnly } from "./redirects.js";
import { type Endpoint, parseFeed, parseList, type Verdict } from "./response.js";
import { type RetryPolicy, withRetry } from "./retry.js";
import { BodyOverCap, feedInSmallerPages, listInSmallerPages } from "./smaller-pages.js";
import { feedStandIn, listStandIn, type StandInCtx } from "./stand-in.js";

export type { RequestEvent } from "./observe.js";

export interface ApiClientOptions {
  /** Base URL including /api/v2, e.g. https://host/api/v2 (a trailing slash is fine). */
  baseUrl: string;
  /** Bearer token; never logged, never in an error message. */
  token: string;
  /** Per-attempt timeout in ms (default 30_000). */
  timeoutMs?: number | undefined;
  /** Retries after the first attempt (default 5). */
  maxRetries?: number | undefined;
  /** Ceiling of the first backoff in ms (default 500), doubled each retry, with full jitter. */
  minBackoffMs?: number | undefined;
  /** Largest backoff ceiling in ms (default 30_000). */
  maxBackoffMs?: number | undefined;
  /** Longest Retry-After we honour, in ms (default 120_000); longer asks are capped. */
  maxRetryAfterMs?: number | undefined;
  /** Uniform random source in [0, 1) for the jitter (default Math.random); inject for tests. */
  random?: (() => number) | undefined;
  /** Called after every HTTP attempt, for metrics. */
  onRequest?: ((event: RequestEvent) => void) | undefined;
  /** Gets a `warn` line per retry and, when it has `trace`, one per attempt; never the token. */
  logger?: AttemptLogger | undefined;
  /**
   * Largest response body read, bytes (default `DEFAULT_MAX_BODY_BYTES`); a larger page is read again
   * in smaller pages, and a record larger on its own becomes a stand-in of its start and size.
   */
  maxBodyBytes?: number | undefined;
  /**
   * Most HTTP requests in flight at once, across every caller of this client (a whole number ≥ 1;
   * default: no bound). Callers beyond it wait their turn, first come first served.
   */
  maxInFlight?: number | undefined;
}

/** The default `maxBodyBytes`: 32 MiB, far above a page of 100 full records. */
export const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;

// Errors that no retry can fix: a bad URL or option is a bug or a config mistake, not a fault.
const PERMANENT_CODES = new Set([
  "ERR_INVALID_URL",
  "ERR_INVALID_ARG_TYPE",
  "ERR_INVALID_ARG_VALUE",
  "ERR_INVALID_CHAR",
  // A redirect loop within the API's own origin loops again on the next attempt.
  "ERR_TOO_MANY_REDIRECTS",
]);

/** Clamps to an integer in [min, max]; a non-number becomes `fallback`. */
function clampInt(value: number, min: number, max: number, fallback: number): number {
  if (!Number.isFinite(value)) return fallback;
  return Math.min(max, Math.max(min, Math.trunc(value)));
}

/** Query parameters with undefined ones left out, so the server applies its own defaults. */
function params(entries: Record<string, string | number | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(entries)) if (value !== undefined) out[key] = String(value);
  return out;
}

/** An abort we were asked for: `isAbortError()` is true and nothing retries it. */
function abortError(endpoint: Endpoint, reason: unknown): Error {
  const err = new Error(`${endpoint}: request aborted`, { cause: reason });
  err.name = "AbortError";
  return err;
}

/** What the per-request helpers share: built once by `createApiClient`. */
type Ctx = StandInCtx & { policy: RetryPolicy; options: ApiClientOptions };

/** One HTTP attempt: the response, or a transport failure thrown as an ApiError (or an abort). */
async function send(
  ctx: Ctx,
  endpoint: Endpoint,
  searchParams: Record<string, string>,
  signal?: AbortSignal,
) {
  // Bytes, so the body's size is counted in bytes as it streams (see `maxBodyBytes`).
  const request = ctx.http.get(`${ctx.base}/partner/booking/${endpoint}`, {
    searchParams,
    responseType: "buffer",
    ...(signal ? { signal } : {}),
  });
  // `total` is the Content-Length, known before the body; `transferred` counts the bytes as they
  // arrive, after decompression, so a body without Content-Length or outgrowing it is stopped too.
  let tooLarge = false;
  request.on("downloadProgress", ({ transferred, total }) => {
    if (tooLarge || Math.max(transferred, total ?? 0) <= ctx.maxBodyBytes) return;
    tooLarge = true;
    request.cancel();
  });
  try {
    return await request;
  } catch (err) {
    if (signal?.aborted) throw abortError(endpoint, signal.reason);
    if (tooLarge) {
      // Not retried as it is: another attempt would download as much again. The page is read again
      // in smaller pages instead (smaller-pages.ts).
      const mb = Math.round((ctx.maxBodyBytes / 1024 / 1024) * 100) / 100;
      throw new ApiError(
        `${endpoint}: response body over ${mb} MB (SYNC_MAX_RESPONSE_MB); the source sent a larger page than it should`,
        { retryable: false, cause: new BodyOverCap() },
      );
    }
    if (!(err instanceof RequestError)) throw err;
    // Keep only message and code: got's error holds the request options, headers included.
    const cause = Object.assign(new Error(ctx.scrub(err.message)), { code: err.code });
    throw new ApiError(ctx.scrub(`${endpoint}: ${err.message} (${err.code})`), {
      retryable: !PERMANENT_CODES.has(err.code),
      cause,
    });
  }
}

/** GETs `endpoint` with retries; `reader` judges the JSON, and a bad verdict is retried. */
async function call<T>(
  ctx: Ctx,
  endpoint: Endpoint,
  searchParams: Record<string, string>,
  signal: AbortSignal | undefined,
  reader: (json: unknown, body: string) => Verdict<T>,
): Promise<T & { attempts: number }> {
  let started = 0;
  try {
    const { value, attempts } = await withRetry(
      async (attempt) => {
        // The slot is held for the attempt alone: the body is judged, and any back-off waited, outside it.
        const res = await ctx.gate.run(() => {
          started = performance.now();
          return send(ctx, endpoint, searchParams, signal);
        }, signal);
        const { json, body } = answer(ctx, endpoint, res);
        const verdict = reader(json, body);
        const { statusCode: status } = res;
        if (!verdict.ok)
          throw new ApiError(ctx.scrub(`${endpoint}: ${verdict.problem}`), { status, retryable: true });
        const durationMs = performance.now() - started;
        observe(ctx, searchParams, { endpoint, outcome: "ok", status, durationMs, attempt });
        return verdict.page;
      },
      {
        policy: ctx.policy,
        signal,
        onFailure: (f) => reportFailure(ctx, endpoint, searchParams, f, performance.now() - started),
      },
    );
    return { ...value, attempts };
  } catch (err) {
    if (signal?.aborted) throw abortError(endpoint, signal.reason);
    throw err;
  }
}

/** The base URL, if it is one the token may be sent to; throws ConfigError otherwise. */
function checkBaseUrl(base: string): string {
  if (!URL.canParse(base) || !/^https?:$/.test(new URL(base).protocol)) {
    throw new ConfigError(`API base URL is not an http(s) URL: ${maskUserinfo(base)}`, {
      hint: "set BOOKING_API_BASE_URL to an http(s) URL ending in /api/v2, e.g. https://host/api/v2",
    });
  }
  // got would send them as Basic auth in place of the token (loadConfig refuses them first).
  const { username, password } = new URL(base);
  if (username || password) {
    throw new ConfigError(`API base URL has credentials in it: ${maskUserinfo(base)}`, {
      hint: "remove user:password@ from BOOKING_API_BASE_URL; the token goes in BOOKING_API_TOKEN",
    });
  }
  return base;
}

/**
 * Builds the partner API client: retries network errors, timeouts, 408, 429, 5xx and unusable 200
 * bodies with backoff; other 4xx fail at once, and a body over the cap is read again in smaller pages. Throws ConfigError for a bad `baseUrl`.
 * Every attempt goes through one `RequestGate` (gate.ts): at most `maxInFlight` at once, and none
 * while a 429 or Retry-After has paused the client.
 */
export function createApiClient(options: ApiClientOptions): PartnerApi {
  const base = checkBaseUrl(options.baseUrl.replace(/\/+$/, ""));
  const policy: RetryPolicy = {
    maxRetries: options.maxRetries ?? 5,
    minBackoffMs: options.minBackoffMs ?? 500,
    maxBackoffMs: options.maxBackoffMs ?? 30_000,
    maxRetryAfterMs: options.maxRetryAfterMs ?? 120_000,
    random: options.random ?? Math.random,
  };
  const token = options.token;
  // A server may echo the header back in its message; scrub before any text leaves this module.
  const scrub = (text: string) => (token ? text.split(token).join("[redacted]") : text);
  const http = got.extend({
    headers: {
      authorization: `Bearer ${token}`,
      accept: "application/json",
      "user-agent": `booking-sync/${PACKAGE_VERSION}`,
    },
    timeout: { request: options.timeoutMs ?? 30_000 },
    retry: { limit: 0 },
    throwHttpErrors: false,
    // Never to another origin: the token stays with the configured one (see redirects.ts).
    followRedirect: sameOriginOnly(new URL(base).origin),
  });

  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const gate = new RequestGate(options.maxInFlight ?? Number.POSITIVE_INFINITY);
  const ctx: Ctx = { base, http, scrub, policy, options, maxBodyBytes, gate };
  return {
    fetchRecent(query: FeedQuery, signal?: AbortSignal): Promise<FeedPage> {
      const searchParams = (limit: number) =>
        params({ limit, cursor: query.cursor, bookingType: query.bookingType });
      return feedInSmallerPages(clampInt(query.limit, 1, 100, 10), {
        read: (limit) => call(ctx, "fetch-recent-bookings", searchParams(limit), signal, parseFeed),
        alone: () => feedStandIn(ctx, searchParams(1), signal),
        logger: options.logger,
      });
    },

    listBookings(query: ListQuery, signal?: AbortSignal): Promise<ListPage> {
      const searchParams = (pageSize: number, page: number) =>
        params({ page, pageSize, sourcePlatform: query.sourcePlatform });
      const page = clampInt(query.page, 1, Number.MAX_SAFE_INTEGER, 1);
      return listInSmallerPages(page, clampInt(query.pageSize, 1, 100, 10), {
        read: (size, p) => call(ctx, "list-bookings", searchParams(size, p), signal, parseList),
        alone: (p) =>
          listStandIn(ctx, searchParams(1, p), signal, () =>
            call(ctx, "list-bookings", searchParams(1, p > 1 ? p - 1 : p + 1), signal, parseList),
          ),
        logger: options.logger,
      });
    },
  };
}
