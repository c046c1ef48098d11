/** Reading the partner API's answers (envelope, then each record), as pure functions. */
import { STATUS_CODES } from "node:http";
import type { z } from "zod";
import type { Checked, FeedPage, ListPage } from "../sync/ports.js";
import { boundRecord, MAX_RECORD_BYTES, OversizedRecord, oversizedRecord } from "./bounds.js";
import { type RecordText, recordTexts } from "./record-texts.js";
import {
  describeIssues,
  errorEnvelopeSchema,
  feedEnvelopeSchema,
  fullBookingSchema,
  listEnvelopeSchema,
  MAX_ID_LENGTH,
  REQUIRED_FIELDS,
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
    if (looksForeign)
      return { ok: false, kind: "foreign", problem: `expected JSON, got ${mediaType ?? "HTML"}` };
    const problem = `body is not valid JSON (cut off or corrupt, ${body.length} chars)`;
    return { ok: false, kind: "invalid", problem };
  }
}

function field(raw: unknown, key: string): unknown {
  return typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>)[key] : undefined;
}

/** Why `id` cannot key a booking, or null when it can. */
function whyNotId(id: unknown): string | null {
  if (typeof id !== "string" || id === "") return "_id: missing or not a non-empty string";
  if (id.length > MAX_ID_LENGTH)
    return `_id: ${id.length} characters, over the ${MAX_ID_LENGTH} a key may have`;
  if (id.includes("\u0000")) return "_id: holds a NUL character, which no database key can";
  return null;
}

// Problems beyond this many are counted, not listed: a note must stay a note.
const MAX_PROBLEMS = 10;

/** The problems of a record as one line. */
export function problemText(problems: readonly string[]): string {
  const more = problems.length - MAX_PROBLEMS;
  const listed = problems.slice(0, MAX_PROBLEMS).join("; ");
  return more > 0 ? `${listed}; and ${more} more` : listed;
}

/**
 * Validates one record. A usable `_id` makes it a booking, whatever else is wrong: a field that fails
 * its check is left out of `record` (its column stays NULL) and named in the problems. Only a valid
 * `createdAt` makes it steer the walk (`ok: true`); a keyed record without one is a reject that still
 * carries its `booking`. Records are bounded first (bounds.ts), so nothing recursive sees a bad one.
 */
export function checkRecord<T extends { _id: string; createdAt: string }>(
  schema: z.ZodType<T>,
  received: unknown,
  served?: RecordText,
): Checked<T> {
  // Only the client makes a stand-in: a source record of the same shape is an ordinary record.
  const standIn = received instanceof OversizedRecord ? oversizedRecord(received.own, received.bytes) : null;
  const { value: raw, problems, keys } = standIn ?? boundRecord(received);
  const text = servedText(served, keys);
  const id = field(raw, "_id");
  const time = readSourceTime(field(raw, "createdAt"));
  const badId =
    typeof raw !== "object" || raw === null || Array.isArray(raw) ? "is not an object" : whyNotId(id);
  if (badId !== null) {
    const key = typeof id === "string" && id !== "" ? id : null;
    return { ok: false, id: key, createdAt: time?.createdAt ?? null, reason: badId, raw };
  }
  const record = readTyped(schema, raw, problems);
  if (time === null) {
    problems.unshift(`createdAt ${whyNotSourceTime(field(raw, "createdAt"))}`);
    const reason = problemText(problems);
    return { ok: false, id: id as string, createdAt: null, reason, raw, ...text, booking: record };
  }
  return {
    ok: true,
    id: id as string,
    createdAt: time.createdAt,
    at: time.instant,
    record,
    raw,
    ...text,
    problems,
  };
}

/**
 * The record's text as served, unless bounds replaced part of it, the text repeats a key (it would
 * say two things where the parsed record says one), or it is larger than a record the bounds let
 * through.
 */
function servedText(served: RecordText | undefined, keys: number | undefined): { text?: string } {
  if (served === undefined || keys !== served.keys || !fitsRecord(served.text)) return {};
  return { text: served.text };
}

/**
 * `raw` as the schema reads it: a field that fails its check is removed, and its problem added to
 * `problems`; `raw` itself when every field passes, as almost every record does.
 */
function readTyped<T>(schema: z.ZodType<T>, raw: unknown, problems: string[]): T {
  const named = namedPaths(problems);
  let current = raw;
  for (let round = 0; round < 3; round++) {
    const result = schema.safeParse(current);
    const issues = result.success ? [] : result.error.issues.filter((i) => i.path[0] !== "createdAt");
    if (issues.length === 0) return withRequired(current, problems, named) as T;
    if (issues.length > MAX_PRUNED) {
      // Pruning each bad value copies the arrays on its path: past a few, the fields go whole.
      const counts = new Map<PropertyKey, number>();
      for (const i of issues) counts.set(i.path[0] ?? "", (counts.get(i.path[0] ?? "") ?? 0) + 1);
      for (const [key, n] of counts) {
        problems.push(`${String(key)}: ${n} values failed their checks; the field is left out whole`);
        named.add(String(key));
        current = without(current, [key]);
      }
      continue;
    }
    for (const issue of issues) {
      const path = issue.path.join(".");
      if (!named.has(path)) problems.push(describeIssues({ issues: [issue] }));
      named.add(path);
      current = without(current, issue.path);
    }
  }
  // Not reached by any shape seen; the booking keeps its key, time and JSON.
  problems.push("(record): fields could not be read");
  return { _id: field(raw, "_id"), createdAt: field(raw, "createdAt") } as T;
}

// Bad values pruned one by one at most; more, and their top-level fields are left out whole.
const MAX_PRUNED = 20;

/**
 * The paths the problems so far name, with every ancestor of each: a value the bounds replaced fails
 * its check too (at its own path or an ancestor's), and is named once.
 */
function namedPaths(problems: readonly string[]): Set<string> {
  const named = new Set<string>();
  for (const p of problems) {
    const keys = p.slice(0, p.indexOf(":")).split(".");
    for (let k = 1; k <= keys.length; k++) named.add(keys.slice(0, k).join("."));
  }
  return named;
}

/** Notes each contract field a booking must have that is absent and not named already. */
function withRequired(record: unknown, problems: string[], named: ReadonlySet<string>): unknown {
  for (const key of REQUIRED_FIELDS) {
    const v = field(record, key);
    if ((v === undefined || v === null) && !named.has(key)) problems.push(`${key}: missing`);
  }
  return record;
}

/** A copy of `value` without what is at `path` (an array holding a bad element goes whole). */
function without(value: unknown, path: readonly PropertyKey[]): unknown {
  const [key, ...rest] = path;
  if (key === undefined || typeof value !== "object" || value === null) return undefined;
  if (Array.isArray(value))
    return rest.length === 0 ? undefined : value.map((v, i) => (i === key ? without(v, rest) : v));
  const copy: Record<PropertyKey, unknown> = { ...(value as Record<PropertyKey, unknown>) };
  if (rest.length === 0 || (typeof rest[0] === "number" && rest.length === 1)) delete copy[key];
  else copy[key] = without(copy[key], rest);
  return copy;
}

/**
 * Whether a stored value has the shape of a stand-in's text (a head of text and a size), as rejects
 * stored by earlier versions hold: the personal-data filter treats its head as unreadable text.
 */
export function isOversizedRaw(raw: unknown): raw is { head: string; bytes: number } {
  if (typeof raw !== "object" || raw === null) return false;
  const r = raw as Record<string, unknown>;
  return typeof r.head === "string" && typeof r.bytes === "number" && Object.keys(r).length === 2;
}

/** The records' texts in `body`, when they are there for each of `records`. */
function textsOf(body: string | undefined, path: readonly string[], records: readonly unknown[]) {
  const texts = body === undefined ? undefined : recordTexts(body, path);
  return texts?.length === records.length ? texts : undefined;
}

/** Whether a text is no larger than a record the bounds let through (white space or escapes can make it any size). */
const fitsRecord = (text: string) => text.length * 3 <= MAX_RECORD_BYTES;

/**
 * `records` as checked, their texts dropped unless the texts kept are at least half of `body`: a text
 * keeps the whole body in memory while its page is, so padding cannot make a page hold more than
 * twice what it stores.
 */
function heldTexts<R extends { text?: string }>(records: R[], body: string | undefined): R[] {
  let kept = 0;
  for (const r of records) kept += r.text?.length ?? 0;
  if (body === undefined || kept === 0 || kept * 2 >= body.length) return records;
  return records.map(({ text: _dropped, ...record }) => record as R);
}

/**
 * A fetch-recent-bookings answer, records checked one by one (`nextCursor` is not read); with the
 * `body` it was parsed from, each record keeps its text as served.
 */
export function parseFeed(json: unknown, body?: string): Verdict<Omit<FeedPage, "attempts">> {
  const envelope = feedEnvelopeSchema.safeParse(json);
  if (!envelope.success) return badShape(envelope.error);
  const { bookings, hasMore } = envelope.data.data;
  const texts = textsOf(body, ["data", "bookings"], bookings);
  const checked = bookings.map((raw, i) => checkRecord(summaryBookingSchema, raw, texts?.[i]));
  const records = heldTexts(checked, body);
  return { ok: true, page: { records, hasMore } };
}

/** A list-bookings answer, records checked one by one, as `parseFeed`. */
export function parseList(json: unknown, body?: string): Verdict<Omit<ListPage, "attempts">> {
  const envelope = listEnvelopeSchema.safeParse(json);
  if (!envelope.success) return badShape(envelope.error);
  const { page, pageSize, total, totalPages } = envelope.data.pagination;
  const texts = textsOf(body, ["data"], envelope.data.data);
  const checked = envelope.data.data.map((raw, i) => checkRecord(fullBookingSchema, raw, texts?.[i]));
  const records = heldTexts(checked, body);
  return { ok: true, page: { records, page, pageSize, total, totalPages } };
}

function badShape(error: z.ZodError): Verdict<never> {
  return { ok: false, problem: `unexpected response shape: ${describeIssues(error)}` };
}
