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

/** A record within its bounds, and what had to be replaced to get there. */
export interface Bounded {
  value: unknown;
  /** One line each, naming the path: `receiver.contact.name: 5242880 bytes, over the 65536-byte cap`. */
  problems: string[];
  /** When `value` is the record itself: how many object keys it holds, at any depth. */
  keys?: number;
}

interface Walk {
  /** Characters of JSON, roughly: keys, strings and punctuation; exact bytes are taken only near the cap. */
  size: number;
  problems: string[];
  /** Values past a bound beyond those named in `problems`. */
  unnoted: number;
  /** The keys from the record down to the value being visited, joined only for a problem. */
  keys: string[];
}

const isContainer = (v: unknown): v is object => typeof v === "object" && v !== null;

/** What stands in a stored record for a value that passed a bound. */
function marker(reason: "value" | "depth" | "record", cap: number, bytes?: number) {
  return { $omitted: bytes === undefined ? { reason, cap } : { reason, bytes, cap } };
}

// A note names this many values at most; the rest are counted in one line.
const MAX_NOTED = 50;

/** Bytes a string takes in UTF-8: exact only when it could matter. */
function utf8Bytes(s: string, cap: number): number {
  return s.length * 3 <= cap ? s.length : Buffer.byteLength(s);
}

/**
 * `value` within the bounds: itself when nothing in it passes one (almost always), else a copy with
 * markers. Recursion stops at `MAX_DEPTH`, so the stack it takes is bounded too.
 */
function visit(value: unknown, depth: number, walk: Walk): unknown {
  if (typeof value === "string") {
    const bytes = utf8Bytes(value, MAX_VALUE_BYTES);
    if (bytes <= MAX_VALUE_BYTES) {
      walk.size += bytes + 2;
      return value;
    }
    walk.problems.push(
      `${walk.keys.join(".")}: ${bytes} bytes, over the ${MAX_VALUE_BYTES}-byte cap for a value`,
    );
    walk.size += 64;
    return marker("value", MAX_VALUE_BYTES, bytes);
  }
  if (!isContainer(value)) {
    walk.size += 8;
    return value;
  }
  if (depth > MAX_DEPTH) {
    if (walk.problems.length >= MAX_NOTED) walk.unnoted++;
    else walk.problems.push(`${walk.keys.join(".")}: nested deeper than ${MAX_DEPTH} levels`);
    walk.size += 64;
    return marker("depth", MAX_DEPTH);
  }
  // An array's indices are its keys here too: JSON.parse makes no sparse array for `for in` to skip.
  const array = Array.isArray(value);
  const record = value as Record<string, unknown>;
  let copy: Record<string, unknown> | null = null;
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    walk.keys.push(key);
    const out = visit(record[key], depth + 1, walk);
    walk.keys.pop();
    walk.size += array ? 1 : key.length + 4;
    if (out !== record[key]) {
      copy ??= array ? (value.slice() as unknown as Record<string, unknown>) : { ...record };
      copy[key] = out;
    }
  }
  return copy ?? value;
}

/**
 * The size `visit` would count for `value`, or -1 as soon as a value passes a bound: the same walk
 * without paths or copies, since almost every record passes none (about twice as fast). Adds the
 * object keys it passes to `seen.keys`.
 */
function sizeWithin(value: unknown, depth: number, seen: { keys: number }): number {
  if (typeof value === "string") {
    const bytes = utf8Bytes(value, MAX_VALUE_BYTES);
    return bytes <= MAX_VALUE_BYTES ? bytes + 2 : -1;
  }
  if (!isContainer(value)) return 8;
  if (depth > MAX_DEPTH) return -1;
  let size = 0;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const inner = sizeWithin(value[i], depth + 1, seen);
      if (inner < 0) return -1;
      size += inner + 1;
    }
    return size;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    seen.keys++;
    const inner = sizeWithin(record[key], depth + 1, seen);
    if (inner < 0) return -1;
    size += inner + key.length + 4;
  }
  return size;
}

/**
 * The record with every string over `MAX_VALUE_BYTES` and every container deeper than `MAX_DEPTH`
 * replaced by a marker; a record still over `MAX_RECORD_BYTES` becomes its `_id`, `createdAt` and a
 * marker. Returns the record itself, uncopied, when nothing passes a bound.
 */
export function boundRecord(raw: unknown): Bounded {
  if (!isContainer(raw)) return { value: raw, problems: [] };
  const seen = { keys: 0 };
  const size = sizeWithin(raw, 1, seen);
  if (size >= 0 && (size + 2) * 3 <= MAX_RECORD_BYTES) return { value: raw, problems: [], keys: seen.keys };
  const walk: Walk = { size: 2, problems: [], unnoted: 0, keys: [] };
  const value = visit(raw, 1, walk);
  if (walk.unnoted > 0) walk.problems.push(`(record): ${walk.unnoted} more values past a bound`);
  if (walk.size * 3 > MAX_RECORD_BYTES) {
    const bytes = Buffer.byteLength(JSON.stringify(value) ?? "");
    if (bytes > MAX_RECORD_BYTES) return oversizedRecord(value, bytes);
  }
  return { value, problems: walk.problems };
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

/**
 * The client's stand-in for a record too large to read at all (api/stand-in.ts): its size, its first
 * bytes, and the `_id` and `createdAt` a scan of those bytes found at the record's own top level. A
 * class, so that no record the source sends can pass for one.
 */
export class OversizedRecord {
  constructor(
    readonly head: string,
    readonly bytes: number,
    readonly own: { _id?: string; createdAt?: string },
  ) {}
}
