/**
 * Reading the partner API's answers: JSON or not, the envelope, and each record on its own.
 * Pure functions, no I/O; the client turns their verdicts into ApiErrors.
 */
import { STATUS_CODES } from "node:http";
import type { z } from "zod";
import type { Checked, FeedPage, ListPage } from "../sync/ports.js";
import { arrayElementSpans } from "./json-texts.js";
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
      /** From `readPageJson`: each record's text, as bytes of the body; `value`'s records array is then left empty. */
      texts?: Buffer[];
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

/**
 * Reads a page's body for its records (the array at `path`): the envelope with that array left
 * empty, and each record's text as received (a view of the body's bytes), to be parsed one by one
 * (see json-texts.ts on why).
 * Together they are the whole body, so a body read this way is as strictly JSON as `readJson`
 * demands once each text parses. A body whose array cannot be found is read as a whole.
 */
export function readPageJson(
  body: Buffer,
  contentType: string | undefined,
  path: readonly string[],
): JsonRead {
  const found = arrayElementSpans(body, path);
  if (found) {
    try {
      const envelope = `${body.toString("utf8", 0, found.open)}[]${body.toString("utf8", found.close + 1)}`;
      const value: unknown = JSON.parse(envelope);
      const { spans } = found;
      const texts: Buffer[] = [];
      for (let k = 0; k < spans.length; k += 2) texts.push(body.subarray(spans[k], spans[k + 1]));
      return { ok: true, value, texts };
    } catch {
      // Not JSON around the array: reading the whole body says what it is instead.
    }
  }
  return readJson(body.toString("utf8"), contentType);
}

function field(raw: unknown, key: string): unknown {
  return typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>)[key] : undefined;
}

/** A record's text longer than this is quarantined unread: no booking is anywhere near it. */
export const MAX_RECORD_BYTES = 1024 * 1024;

/**
 * Validates one record: usable, with its `createdAt` read strictly (times.ts), or not, with the
 * reason and whatever `_id` and `createdAt` could still be read (stored with the reject; a reject
 * never steers the walk).
 */
export function checkRecord<T extends { _id: string; createdAt: string }>(
  schema: z.ZodType<T>,
  raw: unknown,
  json?: Buffer,
): Checked<T> {
  const result = schema.safeParse(raw);
  const time = readSourceTime(field(raw, "createdAt"));
  if (result.success && time !== null) {
    const record = result.data;
    const { createdAt, instant: at } = time;
    // With its text at hand, the parsed record is not kept: the text is what gets stored.
    return json === undefined
      ? { ok: true, id: record._id, createdAt, at, record, raw }
      : { ok: true, id: record._id, createdAt, at, record, json };
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
function oversized(text: Buffer): Checked<never> {
  const head = text.toString("utf8", 0, 4096);
  const id = /"_id"\s*:\s*"([^"\\]{1,200})"/.exec(head)?.[1] ?? null;
  const createdAt = /"createdAt"\s*:\s*"([^"\\]{1,64})"/.exec(head)?.[1];
  return {
    ok: false,
    id,
    createdAt: readSourceTime(createdAt)?.createdAt ?? null,
    reason: `record is ${text.length} bytes, over the ${MAX_RECORD_BYTES} bytes a record may have`,
    raw: { head: head.slice(0, 1000), bytes: text.length },
  };
}

/**
 * Whether a reject's raw is `oversized`'s stand-in (the start of a record's text and its size)
 * rather than a record: its head is text cut anywhere, in which no field can be found.
 */
export function isOversizedRaw(raw: unknown): raw is { head: string; bytes: number } {
  if (typeof raw !== "object" || raw === null) return false;
  const r = raw as Record<string, unknown>;
  return typeof r.head === "string" && typeof r.bytes === "number" && Object.keys(r).length === 2;
}

/**
 * Checks each record: parsed from its text when the body was read by `readPageJson`, one at a
 * time, so only the checked form of each (and its bytes, which are not on V8's heap) outlives its
 * turn; else the envelope's parsed `records`.
 * A verdict's problem when a text is not JSON (the body then is not either).
 */
function checkAll<T extends { _id: string; createdAt: string }>(
  schema: z.ZodType<T>,
  records: unknown[],
  texts: Buffer[] | undefined,
): Checked<T>[] | string {
  if (texts === undefined) return records.map((raw) => checkRecord(schema, raw));
  const checked: Checked<T>[] = [];
  for (const [i, text] of texts.entries()) {
    if (text.length > MAX_RECORD_BYTES) {
      checked.push(oversized(text));
      continue;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text.toString("utf8"));
    } catch {
      // The parser's own message quotes the text, so it is not passed on.
      return `body is not valid JSON (record ${i + 1} of ${texts.length}, ${text.length} bytes)`;
    }
    checked.push(checkRecord(schema, raw, text));
  }
  return checked;
}

/** Where fetch-recent-bookings keeps its records. */
export const FEED_RECORDS = ["data", "bookings"] as const;
/** Where list-bookings keeps its records. */
export const LIST_RECORDS = ["data"] as const;

/**
 * A fetch-recent-bookings answer, records checked one by one (`nextCursor` is not read). `texts`:
 * the records' texts from `readPageJson`, which left the envelope's array empty.
 */
export function parseFeed(json: unknown, texts?: Buffer[]): Verdict<Omit<FeedPage, "attempts">> {
  const envelope = feedEnvelopeSchema.safeParse(json);
  if (!envelope.success)
    return { ok: false, problem: `unexpected response shape: ${describeIssues(envelope.error)}` };
  const { bookings, hasMore } = envelope.data.data;
  const records = checkAll(summaryBookingSchema, bookings, texts);
  if (typeof records === "string") return { ok: false, problem: records };
  return { ok: true, page: { records, hasMore } };
}

/** A list-bookings answer, records checked one by one; `texts` as for `parseFeed`. */
export function parseList(json: unknown, texts?: Buffer[]): Verdict<Omit<ListPage, "attempts">> {
  const envelope = listEnvelopeSchema.safeParse(json);
  if (!envelope.success)
    return { ok: false, problem: `unexpected response shape: ${describeIssues(envelope.error)}` };
  const { data, pagination } = envelope.data;
  const records = checkAll(fullBookingSchema, data, texts);
  if (typeof records === "string") return { ok: false, problem: records };
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
