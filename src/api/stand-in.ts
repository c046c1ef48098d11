/**
 * A page of one record that is still over the body cap: that record alone is too large. It is
 * streamed once more to its end (at most `STAND_IN_READ_FACTOR` times the cap), keeping only the
 * first and last few KB, so memory stays bounded whatever its size; what the page held is then an
 * `OversizedRecord` (bounds.ts), which the record checks turn into a booking with a marker when its
 * own `_id` shows at its top level anywhere in the body (record-keys.ts).
 */
import { StringDecoder } from "node:string_decoder";
import type { Got } from "got";
import { ApiError } from "../errors.js";
import type { FeedPage, ListPage } from "../sync/ports.js";
import { retryableStatus } from "./answer.js";
import { OversizedRecord } from "./bounds.js";
import type { RequestGate } from "./gate.js";
import { type ObserveCtx, observe } from "./observe.js";
import { RecordKeys } from "./record-keys.js";
import { type Endpoint, parseFeed, parseList, statusLabel, type Verdict } from "./response.js";

/** Bytes kept of each end of the body. */
const KEEP_BYTES = 4096;
/** A stand-in's body is read to its end up to this many times the cap (bytes read, never kept). */
export const STAND_IN_READ_FACTOR = 8;

/** The two ends of a body, and how much of it was read. */
type BodyEnds = NonNullable<Awaited<ReturnType<typeof streamEnds>>>;

/** What reading a stand-in needs from the client; the client's own context extends it. */
export interface StandInCtx extends ObserveCtx {
  /** Base URL without a trailing slash. */
  base: string;
  http: Got;
  /** Largest response body read, bytes. */
  maxBodyBytes: number;
  /** The stream is one HTTP attempt: it takes a slot like any other. */
  gate: Pick<RequestGate, "pause" | "run">;
}

/** The feed page of one record too large to read (`searchParams` ask for a limit of 1); null if no page. */
export async function feedStandIn(
  ctx: StandInCtx,
  searchParams: Record<string, string>,
  signal: AbortSignal | undefined,
): Promise<FeedPage | null> {
  const ends = await readEnds(ctx, "fetch-recent-bookings", searchParams, signal);
  if (ends === null) return null;
  const bookings = [standIn(ends, "fetch-recent-bookings")];
  const json = { success: true, data: { bookings, nextCursor: null, hasMore: hasMoreOf(ends) } };
  return pageOf("fetch-recent-bookings", parseFeed(json));
}

/**
 * The list page of one record too large to read (null if the body is no page). Its pagination follows the record, so when the body
 * is cut short it is taken from `neighbour`, a page of one next to it, read the ordinary way.
 */
export async function listStandIn(
  ctx: StandInCtx,
  searchParams: Record<string, string>,
  signal: AbortSignal | undefined,
  neighbour: () => Promise<ListPage>,
): Promise<ListPage | null> {
  const ends = await readEnds(ctx, "list-bookings", searchParams, signal);
  if (ends === null) return null;
  const page = Number(searchParams.page);
  let attempts = 1;
  let pagination = paginationOf(ends);
  if (pagination === undefined) {
    const next = await neighbour();
    attempts += next.attempts;
    pagination = { total: next.total, page, pageSize: 1, totalPages: next.total };
  }
  const read = pageOf(
    "list-bookings",
    parseList({ success: true, data: [standIn(ends, "list-bookings")], pagination }),
  );
  return { ...read, attempts };
}

function pageOf<P>(endpoint: Endpoint, verdict: Verdict<P>): P & { attempts: number } {
  if (!verdict.ok) throw new ApiError(`${endpoint}: ${verdict.problem}`, { retryable: false });
  return { ...verdict.page, attempts: 1 };
}

/** The keys from a body's root to its records array, for each endpoint. */
const RECORDS_PATH = {
  "fetch-recent-bookings": ["data", "bookings"],
  "list-bookings": ["data"],
} as const satisfies Record<Endpoint, readonly string[]>;

/** Where a page's records array opens (its key, `[`), and its first record when `{` follows. */
function opening(endpoint: Endpoint, record: "{" | ""): RegExp {
  return new RegExp(`"${RECORDS_PATH[endpoint].at(-1)}"\\s*:\\s*\\[${record && "\\s*\\{"}`);
}

/**
 * Streams `endpoint`'s answer, keeping its first and last KB. Null when its start shows no records
 * array (a body over the cap that is no page: nothing to stand in for); throws an ApiError for a
 * non-2xx answer or a failed read.
 */
async function readEnds(
  ctx: StandInCtx,
  endpoint: Endpoint,
  searchParams: Record<string, string>,
  signal: AbortSignal | undefined,
): Promise<BodyEnds | null> {
  const started = performance.now();
  const answered: { status?: number } = {};
  let ends: BodyEnds | null = null;
  let cause: string | undefined;
  try {
    ends = await ctx.gate.run(() => streamEnds(ctx, endpoint, searchParams, signal, answered), signal);
    return ends;
  } catch (err) {
    cause = ctx.scrub(err instanceof Error ? err.message : String(err));
    throw err;
  } finally {
    const outcome = ends === null ? "error" : "ok";
    observe(
      ctx,
      searchParams,
      { endpoint, outcome, status: answered.status, durationMs: performance.now() - started, attempt: 1 },
      cause,
    );
  }
}

async function streamEnds(
  ctx: StandInCtx,
  endpoint: Endpoint,
  searchParams: Record<string, string>,
  signal: AbortSignal | undefined,
  answered: { status?: number },
) {
  const stream = ctx.http.stream(`${ctx.base}/partner/booking/${endpoint}`, {
    searchParams,
    ...(signal ? { signal } : {}),
  });
  stream.once("response", (res: { statusCode: number }) => {
    answered.status = res.statusCode;
  });
  const failed = () => answered.status === undefined || answered.status < 200 || answered.status >= 300;
  const limit = ctx.maxBodyBytes * STAND_IN_READ_FACTOR;
  const keys = new RecordKeys(RECORDS_PATH[endpoint]);
  const decoder = new StringDecoder("utf8");
  let head = Buffer.alloc(0);
  let tail = Buffer.alloc(0);
  let bytes = 0;
  let ended = true;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (failed()) break;
      const heading = head.length < KEEP_BYTES;
      if (heading) head = Buffer.concat([head, chunk.subarray(0, KEEP_BYTES - head.length)]);
      if (heading && head.length >= KEEP_BYTES && !opening(endpoint, "{").test(head.toString("utf8"))) break;
      if (!keys.done) keys.push(decoder.write(chunk));
      tail = Buffer.from(Buffer.concat([tail, chunk.subarray(-KEEP_BYTES)]).subarray(-KEEP_BYTES));
      bytes += chunk.length;
      if (bytes > limit) {
        ended = false;
        break;
      }
    }
  } catch (err) {
    if (signal?.aborted) throw err;
    const message = err instanceof Error ? err.message : String(err);
    throw new ApiError(ctx.scrub(`${endpoint}: re-reading a record over the body cap: ${message}`), {
      retryable: true,
      cause: err,
    });
  } finally {
    stream.destroy();
  }
  const status = answered.status ?? 0;
  if (failed())
    throw new ApiError(`${endpoint}: HTTP ${statusLabel(status)} re-reading a record over the body cap`, {
      status,
      retryable: retryableStatus(status),
    });
  const text = head.toString("utf8");
  // A body without a record in its records array is no page to stand in for.
  if (!opening(endpoint, "{").test(text)) return null;
  // `bytes` counts after decompression; when `ended`, the envelope after the record is in `tail`;
  // `own` is the record's own `_id` and `createdAt`, wherever in the body they were.
  return { head: text, tail: tail.toString("utf8"), bytes, ended, own: keys.found };
}

/**
 * The stand-in for the one record of `ends`' page: its size, its first bytes, and the `_id` and
 * `createdAt` found at its own top level as the body streamed by. One whose `_id` did not show is
 * quarantined: nothing else names it for certain.
 */
export function standIn(ends: BodyEnds, endpoint: Endpoint): OversizedRecord {
  const open = opening(endpoint, "").exec(ends.head);
  const record = ends.head.slice(open ? open.index + open[0].length : 0);
  return new OversizedRecord(record.slice(0, 1000), ends.bytes, ends.own);
}

/** The last capture of `pattern` in the envelope after the record, when the body was read to its end. */
function envelopeField(ends: BodyEnds, pattern: RegExp): string | undefined {
  return ends.ended ? [...ends.tail.matchAll(pattern)].at(-1)?.[1] : undefined;
}

/** The envelope's `hasMore`, when the body was read to its end; a page cut short claims more. */
function hasMoreOf(ends: BodyEnds): boolean {
  return envelopeField(ends, /"hasMore"\s*:\s*(true|false)/g) !== "false";
}

/** The envelope's `pagination`, when the body was read to its end and shows it; else undefined. */
function paginationOf(ends: BodyEnds): unknown {
  const text = envelopeField(ends, /"pagination"\s*:\s*(\{[^{}]*\})/g);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
