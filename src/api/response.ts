/**
 * Reading the partner API's answers: JSON or not, the envelope, and each record on its own.
 * Pure functions, no I/O; the client turns their verdicts into ApiErrors.
 */
import { STATUS_CODES } from "node:http";
import type { z } from "zod";
import type { Checked, FeedPage, ListPage } from "../sync/ports.js";
import { arrayElementTexts } from "./json-texts.js";
import {
  describeIssues,
  errorEnvelopeSchema,
  feedEnvelopeSchema,
  fullBookingSchema,
  isoTime,
  listEnvelopeSchema,
  summaryBookingSchema,
  toIsoMillis,
} from "./schemas.js";

export type Endpoint = "fetch-recent-bookings" | "list-bookings";

/** A body read as JSON, or why it could not be. */
export type JsonRead =
  | {
      ok: true;
      value: unknown /** The error envelope's message, shortened, if the body is one. */;
      serverMessage?: string;
    }
  | {
      ok: false;
      /** "empty": no body; "invalid": meant as JSON but cut off or corrupt; "foreign": HTML or other text. */
      kind: "empty" | "invalid" | "foreign";
      /** One line for an error message; never the body itself. */
      problem: string;
    };

export type Verdict<T> = { ok: true; page: T } | { ok: false; problem: string };

// Long enough for any real error message, short enough that a body dumped into one stays out of logs.
const MAX_SERVER_MESSAGE = 200;

/** "503 Service Unavailable". */
export function statusLabel(status: number): string {
  const text = STATUS_CODES[status];
  return text ? `${status} ${text}` : String(status);
}

/**
 * Parses a body as JSON whatever its content type says (lenient on the header, strict on the
 * body), and reads the server's message when the body is an error envelope.
 */
export function readJson(body: string, contentType: string | undefined): JsonRead {
  const mediaType = contentType?.split(";")[0]?.trim().toLowerCase() || undefined;
  if (body.trim() === "") return { ok: false, kind: "empty", problem: "expected JSON, got an empty body" };
  try {
    const value: unknown = JSON.parse(body);
    const envelope = errorEnvelopeSchema.safeParse(value);
    const message = envelope.success ? envelope.data.message?.trim() : undefined;
    return message
      ? { ok: true, value, serverMessage: message.slice(0, MAX_SERVER_MESSAGE) }
      : { ok: true, value };
  } catch {
    // The parser's own message quotes the body, so it is not passed on.
    const looksForeign =
      body.trimStart().startsWith("<") || (mediaType !== undefined && !mediaType.includes("json"));
    if (looksForeign) {
      return { ok: false, kind: "foreign", problem: `expected JSON, got ${mediaType ?? "HTML"}` };
    }
    return {
      ok: false,
      kind: "invalid",
      problem: `body is not valid JSON (cut off or corrupt, ${body.length} chars)`,
    };
  }
}

function field(raw: unknown, key: string): unknown {
  return typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>)[key] : undefined;
}

/**
 * Validates one record: usable, with `createdAt` normalised, or not, with the reason and whatever
 * `_id` and `createdAt` could still be read (they position the walk; they never move a checkpoint).
 */
export function checkRecord<T extends { _id: string; createdAt: string }>(
  schema: z.ZodType<T>,
  raw: unknown,
  json?: string,
): Checked<T> {
  const result = schema.safeParse(raw);
  if (result.success) {
    const record = result.data;
    return { ok: true, id: record._id, createdAt: toIsoMillis(record.createdAt), record, raw, json };
  }
  const id = field(raw, "_id");
  const createdAt = isoTime.safeParse(field(raw, "createdAt"));
  return {
    ok: false,
    id: typeof id === "string" && id !== "" ? id : null,
    createdAt: createdAt.success ? toIsoMillis(createdAt.data) : null,
    reason: describeIssues(result.error),
    raw,
  };
}

/**
 * Checks each record of `records` (the array at `path` in `body`), with its text as received when
 * the body yields exactly one text per record.
 */
function checkAll<T extends { _id: string; createdAt: string }>(
  schema: z.ZodType<T>,
  records: unknown[],
  body: string | undefined,
  path: readonly string[],
): Checked<T>[] {
  const texts = body === undefined ? undefined : arrayElementTexts(body, path);
  const fit = texts !== undefined && texts.length === records.length;
  return records.map((raw, i) => checkRecord(schema, raw, fit ? texts[i] : undefined));
}

/** A fetch-recent-bookings answer, records checked one by one; `nextCursor` normalised. */
export function parseFeed(json: unknown, body?: string): Verdict<Omit<FeedPage, "attempts">> {
  const envelope = feedEnvelopeSchema.safeParse(json);
  if (!envelope.success)
    return { ok: false, problem: `unexpected response shape: ${describeIssues(envelope.error)}` };
  const { bookings, nextCursor, hasMore } = envelope.data.data;
  return {
    ok: true,
    page: {
      records: checkAll(summaryBookingSchema, bookings, body, ["data", "bookings"]),
      nextCursor: nextCursor === null ? null : toIsoMillis(nextCursor),
      hasMore,
    },
  };
}

/** A list-bookings answer, records checked one by one. */
export function parseList(json: unknown, body?: string): Verdict<Omit<ListPage, "attempts">> {
  const envelope = listEnvelopeSchema.safeParse(json);
  if (!envelope.success)
    return { ok: false, problem: `unexpected response shape: ${describeIssues(envelope.error)}` };
  const { data, pagination } = envelope.data;
  return {
    ok: true,
    page: {
      records: checkAll(fullBookingSchema, data, body, ["data"]),
      page: pagination.page,
      pageSize: pagination.pageSize,
      total: pagination.total,
      totalPages: pagination.totalPages,
    },
  };
}
