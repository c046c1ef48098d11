/**
 * GET /events?after=ID&limit=N&wait=30s&stream=S: the events stream pulled over the daemon's HTTP
 * port, with an optional long poll. Guarded like POST /sync: a bearer token when set, else loopback
 * binds only. A place that cannot be in this mirror's stream is refused (409), never waited at.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { EventWake } from "../events/notifier.js";
import type { EventStore } from "../events/ports.js";
import { PULL, readPage, waitForEvents, wholeNumber } from "../events/pull.js";
import type { TimerClock } from "../sync/ports.js";
import { refused, sendJson, tokenGuard } from "./http-common.js";

/** What GET /events reads and how it is guarded. */
export interface EventsEndpointOptions {
  store: Pick<EventStore, "readEvents" | "lastEventId" | "bounds">;
  /** EVENTS_TOKEN (or the content of EVENTS_TOKEN_FILE): required as a bearer token when set. */
  token?: string | undefined;
  /** Wakes long polls when this process commits events; other writers are seen by a 1 s poll. */
  notifier?: EventWake | undefined;
  /** Times the long poll. */
  clock: TimerClock;
}

/** A request's reading of the stream. */
export interface EventsQuery {
  after: number;
  limit: number;
  /** How long to wait for a first event when none is there yet, ms (0: answer at once). */
  waitMs: number;
  /** The stream the consumer read `after` in (the `stream` of an earlier answer); any when absent. */
  stream?: string | undefined;
}

/** Why GET /events is refused on `host`, for the 403 body and the start-up warning. */
export function eventsRefusal(host: string): string {
  return `GET /events is refused: the endpoint listens on ${host}, beyond loopback, and no events token is set; set EVENTS_TOKEN or EVENTS_TOKEN_FILE`;
}

/**
 * The handler of GET /events on an endpoint bound to `host`. `stopping` ends every long poll at once
 * (an empty page), so a stopping server never waits out a wait.
 */
export function eventsHandler(
  options: EventsEndpointOptions,
  host: string,
  stopping: AbortSignal,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const guard = tokenGuard(host, options.token);
  return async (req, res) => {
    req.resume(); // a GET body carries nothing we read; drain it so keep-alive works
    if (refused(req, res, guard, { token: options.token, refusal: eventsRefusal(host) })) return;
    const query = parseEventsQuery(new URL(req.url ?? "/", "http://x").searchParams);
    if (typeof query === "string") return sendJson(res, 400, { error: query });
    let page = await readPage(options.store, query.after, query.limit, query.stream);
    if (page.lost) return sendJson(res, 409, { error: page.lost, first: page.first, stream: page.stream });
    if (page.events.length === 0 && query.waitMs > 0) {
      // The client gone, or the server stopping: stop waiting. One controller and listeners removed
      // after, not AbortSignal.any, whose combined signals Node 20 keeps for the server's life.
      const ended = new AbortController();
      const end = () => ended.abort();
      res.once("close", end);
      stopping.addEventListener("abort", end, { once: true });
      if (stopping.aborted) end();
      const found = await waitForEvents({
        store: options.store,
        clock: options.clock,
        signal: ended.signal,
        after: query.after,
        waitMs: query.waitMs,
        notifier: options.notifier,
      }).finally(() => {
        res.off("close", end);
        stopping.removeEventListener("abort", end);
      });
      if (found) page = await readPage(options.store, query.after, query.limit, query.stream);
    }
    res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" });
    // The stored bytes as they are: no parse, no re-serialization.
    const tail = `"last":${page.last},"first":${page.first},"stream":${JSON.stringify(page.stream)}`;
    res.end(`{"events":[${page.events.join(",")}],${tail}}`);
  };
}

const NAMES = ["after", "limit", "wait", "stream"] as const;

/** The query's values, or why they cannot be used (the 400's reason). */
export function parseEventsQuery(params: URLSearchParams): EventsQuery | string {
  for (const name of new Set(params.keys())) {
    if (!(NAMES as readonly string[]).includes(name))
      return `unknown parameter ${JSON.stringify(name)}: GET /events takes after, limit, wait and stream`;
    if (params.getAll(name).length > 1) return `${name} is given more than once`;
  }
  const after = orDefault(params.get("after"), 0);
  if (after === undefined)
    return `after = ${quote(params.get("after"))} is not valid: expected the last event id you processed, a whole number (0 for the start)`;
  const limit = orDefault(params.get("limit"), PULL.defaultLimit);
  if (limit === undefined || limit < 1 || limit > PULL.maxLimit)
    return `limit = ${quote(params.get("limit"))} is not valid: expected a whole number from 1 to ${PULL.maxLimit} (default ${PULL.defaultLimit})`;
  const wait = orDefault(params.get("wait")?.replace(/s$/, "") ?? null, 0);
  if (wait === undefined || wait > PULL.maxWaitSeconds)
    return `wait = ${quote(params.get("wait"))} is not valid: expected whole seconds from 0 to ${PULL.maxWaitSeconds}, as 30 or 30s`;
  const stream = params.get("stream") ?? undefined;
  if (stream !== undefined && !STREAM.test(stream))
    return `stream = ${quote(stream)} is not valid: expected the "stream" of an earlier answer (letters and digits)`;
  return { after, limit, waitMs: wait * 1000, stream };
}

/** What a stream identity may look like: 32 hex digits today; a bound on what is echoed back. */
const STREAM = /^[0-9A-Za-z-]{1,64}$/;

/** `text` as a whole number (`fallback` when absent), or undefined when it is not one. */
function orDefault(text: string | null, fallback: number): number | undefined {
  return text === null ? fallback : wholeNumber(text);
}

/** A value for an error message, bounded: the query is the client's text. */
function quote(text: string | null): string {
  return JSON.stringify(text !== null && text.length > 40 ? `${text.slice(0, 40)}…` : text);
}
