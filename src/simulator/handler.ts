/** Answers one simulator request: routing, faults, auth, parameters and envelopes (contract 2.1, 4). */
import type { IncomingMessage, ServerResponse } from "node:http";
import { setTimeout as delay } from "node:timers/promises";
import type { Dataset } from "./dataset.js";
import type { Endpoint, Fault, FaultKind, FaultPlan } from "./faults.js";
import { parseFeedParams, parseListParams } from "./params.js";
import type { RecordView } from "./record-cache.js";
import {
  corruptRecords,
  errorEnvelope,
  jsonWithRecords,
  MESSAGES,
  okEnvelope,
  RECORDS,
  sendJson,
  sendJsonChunks,
  sendTransportFault,
  sendTruncated,
} from "./responses.js";

/** Paths of the two endpoints under the base URL. */
export const API_BASE = "/api/v2";
const ROUTES: Record<string, Endpoint> = {
  [`${API_BASE}/partner/booking/fetch-recent-bookings`]: "feed",
  [`${API_BASE}/partner/booking/list-bookings`]: "list",
};

/** What can be switched while the simulator runs. */
export interface Behaviour {
  /** Delay before every answer, ms; default 0. */
  latencyMs: number;
  /** The feed cursor rule: `createdAt < cursor` ("exclusive", default) or `<=` ("inclusive"). */
  cursor: "exclusive" | "inclusive";
  /** Probability (0..1) of a random fault per request; default 0. */
  faultRate: number;
  /** Kinds random faults are drawn from; default the transient ones (5xx, 429, html, truncated, drop). */
  faultKinds: FaultKind[];
  /** The bearer token requests must carry; default "sim-token". */
  token: string;
}

/** One answered (or dropped) request, emitted as a `request` event once the connection is done with it. */
export interface RequestEvent {
  endpoint: Endpoint | "other";
  method: string;
  /** Path and query as requested. */
  url: string;
  /** HTTP status sent, or "dropped" when the socket was destroyed without an answer. */
  status: number | "dropped";
  fault: FaultKind | undefined;
}

export interface Context {
  dataset: Dataset;
  behaviour: Behaviour;
  faults: FaultPlan;
  now: () => number;
  /** Aborted on close, so pending delays end instead of holding the process. */
  closing: AbortController;
}

/** The event of a request to `endpoint`, as if answered with a 200. */
export function requestEvent(
  req: IncomingMessage,
  endpoint: Endpoint | "other" = "other",
  fault?: FaultKind,
): RequestEvent {
  return { endpoint, method: req.method ?? "GET", url: req.url ?? "/", status: 200, fault };
}

/** Answers one request; resolves with what was sent. */
export async function handle(ctx: Context, req: IncomingMessage, res: ServerResponse): Promise<RequestEvent> {
  const url = new URL(req.url ?? "/", "http://simulator");
  const endpoint = ROUTES[url.pathname];
  const fault = endpoint ? ctx.faults.next(endpoint) : undefined;
  const event = requestEvent(req, endpoint, fault?.kind);
  const wait = ctx.behaviour.latencyMs + (fault?.kind === "slow" ? fault.ms : 0);
  if (wait > 0) {
    const aborted = await delay(wait, false, { signal: ctx.closing.signal }).catch(() => true);
    if (aborted) return { ...event, status: "dropped" };
  }
  const nowMs = ctx.now();
  const sendError = (status: number, message: string): RequestEvent => {
    sendJson(res, status, errorEnvelope(status, message, nowMs));
    return { ...event, status };
  };
  if (!endpoint) return sendError(404, MESSAGES[404]);
  const faultStatus = fault ? sendTransportFault(res, fault, nowMs) : undefined;
  if (faultStatus !== undefined) return { ...event, status: faultStatus };
  if (req.method !== "GET") return sendError(405, MESSAGES[405]);
  if (req.headers.authorization !== `Bearer ${ctx.behaviour.token}`) return sendError(401, MESSAGES[401]);
  // The body is built as UTF-8 chunks: records come as JSON from the dataset's cache (see RecordCache).
  const body = endpoint === "feed" ? feedBody(ctx, url, fault, nowMs) : listBody(ctx, url, fault, nowMs);
  if (typeof body === "string") return sendError(400, body);
  if (fault?.kind === "truncated") {
    sendTruncated(res, Buffer.concat(body), fault.mode ?? "length");
  } else {
    sendJsonChunks(res, 200, body);
  }
  return event;
}

/** The feed envelope as JSON chunks, or the 400 message when a parameter is invalid. */
function feedBody(ctx: Context, url: URL, fault: Fault | undefined, nowMs: number): Buffer[] | string {
  const parsed = parseFeedParams(url.searchParams);
  if (!parsed.ok) return parsed.message;
  const { limit, cursor, cursorMs, bookingType } = parsed.value;
  const inclusive = ctx.behaviour.cursor === "inclusive";
  const slice = ctx.dataset.feed({ limit, cursorMs, bookingType, inclusive });
  // Both faults echo the request's cursor and claim more; hasMoreOnEmpty also empties the page.
  const stuck = fault?.kind === "stuckCursor" || fault?.kind === "hasMoreOnEmpty";
  const indexes = fault?.kind === "hasMoreOnEmpty" ? [] : slice.indexes;
  const next = slice.nextCursorMs === null ? null : new Date(slice.nextCursorMs).toISOString();
  const nextCursor = stuck ? (cursor ?? null) : next;
  const hasMore = stuck || slice.hasMore;
  const envelope = (bookings: unknown) =>
    okEnvelope({ data: { bookings, nextCursor, hasMore } }, "Recent bookings fetched successfully", nowMs);
  return recordsBody(ctx, "summary", indexes, fault, envelope);
}

/** The list envelope as JSON chunks, or the 400 message when a parameter is invalid. */
function listBody(ctx: Context, url: URL, fault: Fault | undefined, nowMs: number): Buffer[] | string {
  const parsed = parseListParams(url.searchParams);
  if (!parsed.ok) return parsed.message;
  const { page, pageSize, sourcePlatform } = parsed.value;
  const { indexes, total } = ctx.dataset.list({ page, pageSize, sourcePlatform });
  const pagination = { total, page, pageSize, totalPages: Math.ceil(total / pageSize) };
  const envelope = (data: unknown) =>
    okEnvelope({ data, pagination }, "Bookings retrieved successfully", nowMs);
  return recordsBody(ctx, "full", indexes, fault, envelope);
}

/** An envelope around the records' cached JSON, or corrupted copies of them for a malformed page. */
function recordsBody(
  ctx: Context,
  view: RecordView,
  indexes: readonly number[],
  fault: Fault | undefined,
  envelope: (records: unknown) => object,
): Buffer[] {
  const json = indexes.map((i) => ctx.dataset.json(view, i));
  if (fault?.kind === "malformed") {
    const records = corruptRecords(
      json.map((record) => JSON.parse(record.toString())),
      fault.count ?? 3,
    );
    return [Buffer.from(JSON.stringify(envelope(records)))];
  }
  return jsonWithRecords(envelope(RECORDS), json);
}
