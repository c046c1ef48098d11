/**
 * Bounds on one record before anything recursive touches it: `JSON.parse` survives any nesting, but
 * `JSON.stringify`, zod and the personal-data filter recurse, so a record 200,000 levels deep would
 * overflow the stack and fail every run. One iterative pass measures the record and, only where a
 * bound is passed, copies it with markers in place of what is too deep or too large.
 */

/** A string value longer than this, in UTF-8 bytes, is stored as a marker with its size. */
export const MAX_VALUE_BYTES = 64 * 1024;
/** A record larger than this, in UTF-8 bytes of JSON, is stored as its `_id`, `createdAt` and a marker. */
export const MAX_RECORD_BYTES = 1024 * 1024;
/** Containers nested deeper than this are stored as a marker; a booking nests about five levels. */
export const MAX_DEPTH = 32;

/** What stands in a stored record for a value that passed a bound. */
export interface Marker {
  $omitted: { reason: "value" | "depth" | "record"; bytes?: number; cap: number };
}

/** A record within its bounds, and what had to be replaced to get there. */
export interface Bounded {
  value: unknown;
  /** One line each, naming the path: `receiver.contact.name: 5242880 bytes, over the 65536-byte cap`. */
  problems: string[];
}

type Container = Record<string, unknown> | unknown[];

interface Frame {
  /** The value as received. */
  from: Container;
  /** Its copy, made only once something below it is replaced. */
  copy: Container | null;
  parent: Frame | null;
  key: string | number;
  depth: number;
  path: string;
}

const isContainer = (v: unknown): v is Container => typeof v === "object" && v !== null;

function marker(reason: Marker["$omitted"]["reason"], cap: number, bytes?: number): Marker {
  return { $omitted: bytes === undefined ? { reason, cap } : { reason, bytes, cap } };
}

/** Replaces `frame.from[key]` in the frame's copy, copying the frame and its ancestors on first use. */
function replace(frame: Frame, key: string | number, value: unknown): void {
  if (frame.copy === null) {
    frame.copy = Array.isArray(frame.from) ? [...frame.from] : { ...frame.from };
    if (frame.parent) replace(frame.parent, frame.key, frame.copy);
  }
  (frame.copy as Record<string | number, unknown>)[key] = value;
}

/** Bytes a string takes in UTF-8: exact only when it could matter. */
function utf8Bytes(s: string, cap: number): number {
  return s.length * 3 <= cap ? s.length : Buffer.byteLength(s);
}

/**
 * The record with every string over `MAX_VALUE_BYTES` and every container deeper than `MAX_DEPTH`
 * replaced by a marker; a record still over `MAX_RECORD_BYTES` becomes its `_id`, `createdAt` and a
 * marker. Returns the record itself, uncopied, when nothing passes a bound.
 */
export function boundRecord(raw: unknown): Bounded {
  if (!isContainer(raw)) return { value: raw, problems: [] };
  const problems: string[] = [];
  const root: Frame = { from: raw, copy: null, parent: null, key: "", depth: 1, path: "" };
  const stack: Frame[] = [root];
  // Characters of JSON, roughly: keys, strings and punctuation; exact bytes are taken only near the cap.
  let size = 2;
  while (stack.length > 0) {
    const frame = stack.pop() as Frame;
    const entries: Array<[string | number, unknown]> = Array.isArray(frame.from)
      ? frame.from.map((v, i) => [i, v])
      : Object.entries(frame.from);
    for (const [key, value] of entries) {
      const path = frame.path === "" ? String(key) : `${frame.path}.${key}`;
      size += typeof key === "string" ? key.length + 4 : 1;
      if (typeof value === "string") {
        const bytes = utf8Bytes(value, MAX_VALUE_BYTES);
        if (bytes > MAX_VALUE_BYTES) {
          replace(frame, key, marker("value", MAX_VALUE_BYTES, bytes));
          problems.push(`${path}: ${bytes} bytes, over the ${MAX_VALUE_BYTES}-byte cap for a value`);
          size += 64;
        } else size += bytes + 2;
      } else if (isContainer(value)) {
        if (frame.depth >= MAX_DEPTH) {
          replace(frame, key, marker("depth", MAX_DEPTH));
          problems.push(`${path}: nested deeper than ${MAX_DEPTH} levels`);
          size += 64;
        } else stack.push({ from: value, copy: null, parent: frame, key, depth: frame.depth + 1, path });
      } else size += 8;
    }
  }
  const value = root.copy ?? raw;
  if (size * 3 > MAX_RECORD_BYTES) {
    const bytes = Buffer.byteLength(JSON.stringify(value) ?? "");
    if (bytes > MAX_RECORD_BYTES) return oversizedRecord(value, bytes);
  }
  return { value, problems };
}

/** A record over the record cap: what keys and places it, and a marker with its size. */
export function oversizedRecord(record: unknown, bytes: number): Bounded {
  const r = (isContainer(record) && !Array.isArray(record) ? record : {}) as Record<string, unknown>;
  const keep: Record<string, unknown> = {};
  for (const key of ["_id", "createdAt"]) {
    const v = r[key];
    if (typeof v === "string" && v.length <= 1024) keep[key] = v;
  }
  return {
    value: { ...keep, ...marker("record", MAX_RECORD_BYTES, bytes) },
    problems: [`record: ${bytes} bytes, over the ${MAX_RECORD_BYTES}-byte cap for a record`],
  };
}
