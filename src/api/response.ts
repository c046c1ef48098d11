/** Reading the partner API's answers (envelope, then each record), as pure functions. */
import { STATUS_CODES } from "node:http";
import type { z } from "zod";
import type { Checked, FeedPage, ListPage } from "../sync/ports.js";
import {
  describeIssues,
  errorEnvelopeSchema,
  feedEnvelopeSchema,
  fullBookingSchema,
  listEnvelopeSchema,
  summaryBookingSchema,
} from "./schemas.js";
import { readSourceTime, whyNotSourceTime } from "./times.js";

export type Endpoint = "fetch-recent-bookings" | "list-bookings";

/** A body read as JSON, or why it could not be. */
export type JsonRead =
  | {
      ok: true;
      value: unknown;
      /** The error envelope's message, shortened, if the body is one. */
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

/** Parses a body as JSON whatever its content type says, with the server's message if an error envelope. */
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

/** A record's text longer than this is quarantined unread: no booking is anywhere near it. */
export const MAX_RECORD_BYTES = 1024 * 1024;

/** Validates one record, `createdAt` strictly; a reject keeps whatever `_id` and time could be read. */
export function checkRecord<T extends { _id: string; createdAt: string }>(
  schema: z.ZodType<T>,
  raw: unknown,
): Checked<T> {
  const result = schema.safeParse(raw);
  const time = readSourceTime(field(raw, "createdAt"));
  if (result.success && time !== null) {
    // The record as received: zod's copy keeps only the fields the schema names.
    const record = raw as T;
    return { ok: true, id: result.data._id, createdAt: time.createdAt, at: time.instant, record };
  }
  const id = field(raw, "_id");
  return {
    ok: false,
    id: typeof id === "string" && id !== "" ? id : null,
    createdAt: time?.createdAt ?? null,
    reason: rejectReason(raw, time === null, result.success ? undefined : result.error),
    raw,
  };
}

/** A reject's reason: what is wrong with its `createdAt` first, then the schema's other issues. */
function rejectReason(raw: unknown, badTime: boolean, error: z.ZodError | undefined): string {
  const issues = error?.issues.filter((i) => !(badTime && i.path[0] === "createdAt")) ?? [];
  const parts = badTime ? [`createdAt ${whyNotSourceTime(field(raw, "createdAt"))}`] : [];
  if (issues.length > 0) parts.push(describeIssues({ issues }));
  return parts.join("; ");
}

/** A record too large to read: quarantined with its start, its size, and the id if it shows. */
function oversized(text: string): Checked<never> {
  const head = text.slice(0, 4096);
  const id = /"_id"\s*:\s*"([^"\\]{1,200})"/.exec(head)?.[1] ?? null;
  const createdAt = /"createdAt"\s*:\s*"([^"\\]{1,64})"/.exec(head)?.[1];
  return {
    ok: false,
    id,
    createdAt: readSourceTime(createdAt)?.createdAt ?? null,
    reason: `record is ${Buffer.byteLength(text)} bytes, over the ${MAX_RECORD_BYTES} bytes a record may have`,
    raw: { head: head.slice(0, 1000), bytes: Buffer.byteLength(text) },
  };
}

/** Whether a reject's raw is `oversized`'s stand-in (a head of text and a size) rather than a record. */
export function isOversizedRaw(raw: unknown): raw is { head: string; bytes: number } {
  if (typeof raw !== "object" || raw === null) return false;
  const r = raw as Record<string, unknown>;
  return typeof r.head === "string" && typeof r.bytes === "number" && Object.keys(r).length === 2;
}

/** Checks each record; only a body larger than a record may be has its records measured. */
function checkAll<T extends { _id: string; createdAt: string }>(
  schema: z.ZodType<T>,
  records: unknown[],
  bodyBytes: number,
): Checked<T>[] {
  return records.map((raw) => {
    if (bodyBytes > MAX_RECORD_BYTES) {
      const text = JSON.stringify(raw) ?? "";
      if (Buffer.byteLength(text) > MAX_RECORD_BYTES) return oversized(text);
    }
    return checkRecord(schema, raw);
  });
}

/** A fetch-recent-bookings answer, records checked one by one (`nextCursor` is not read). */
export function parseFeed(json: unknown, bodyBytes = 0): Verdict<Omit<FeedPage, "attempts">> {
  const envelope = feedEnvelopeSchema.safeParse(json);
  if (!envelope.success)
    return { ok: false, problem: `unexpected response shape: ${describeIssues(envelope.error)}` };
  const { bookings, hasMore } = envelope.data.data;
  return { ok: true, page: { records: checkAll(summaryBookingSchema, bookings, bodyBytes), hasMore } };
}

/** A list-bookings answer, records checked one by one; `bodyBytes` as for `parseFeed`. */
export function parseList(json: unknown, bodyBytes = 0): Verdict<Omit<ListPage, "attempts">> {
  const envelope = listEnvelopeSchema.safeParse(json);
  if (!envelope.success)
    return { ok: false, problem: `unexpected response shape: ${describeIssues(envelope.error)}` };
  const { data, pagination } = envelope.data;
  const records = checkAll(fullBookingSchema, data, bodyBytes);
  return {
    ok: true,
    page: {
      records,
      page: pagination.page,
      pageSize: pagination.pageSize,
      total: pagination.total,
      totalPages: pagination.totalPages,
    },
  };
}
