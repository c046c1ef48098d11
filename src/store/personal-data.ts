/**
 * `SYNC_PERSONAL_DATA`: `keep` stores people's values as received, `hash` as stable hashes (so they
 * can still be counted and joined), `drop` not at all. Applied before anything is stored: columns,
 * record JSON and quarantined records alike.
 */
import { createHash, createHmac } from "node:crypto";
import { isOversizedRaw } from "../api/response.js";
import type { PersonalDataMode } from "../config/config.js";
import type { Reject } from "../sync/ports.js";
import { canonicalJson } from "./canonical-json.js";
import { type Param, SUMMARY_COLUMNS } from "./rows.js";

/** How a value is normalised before it is hashed, so that one person's value hashes alike. */
export type ValueKind = "text" | "email" | "phone" | "id";

/** The typed columns that hold personal values, and how each is normalised. */
const COLUMN_KINDS: Readonly<Record<string, ValueKind>> = {
  sender_name: "text",
  sender_phone: "phone",
  sender_email: "email",
  receiver_name: "text",
  receiver_phone: "phone",
  receiver_email: "email",
};
/** The typed columns that hold personal values. */
export const PERSONAL_COLUMNS: readonly string[] = Object.keys(COLUMN_KINDS);
/** Positions of those columns in `SUMMARY_COLUMNS`. */
const PERSONAL_POSITIONS = SUMMARY_COLUMNS.flatMap((column, index) => {
  const kind = COLUMN_KINDS[column];
  return kind ? [[index, kind] as const] : [];
});

/**
 * Where personal values sit in a booking (either view): a field (and how its value is normalised) or
 * a subtree the contract says is an object. A subtree of any other shape is replaced whole.
 */
interface Shape {
  readonly [key: string]: ValueKind | Shape;
}
/** A party's (sender and receiver) `contact`, where `owner` is the sender's account, and address lines. */
const PARTY: Shape = {
  contact: { name: "text", phone: "phone", email: "email", owner: "id" },
  // City, state, country and their codes stay.
  addressDetails: {
    addressLine1: "text",
    apartmentNumber: "text",
    landmark: "text",
    streetLines: "text",
    postalCode: "text",
  },
};
/** The full view's `payments` hold the customer's account and id. */
const RECORD: Shape = { sender: PARTY, receiver: PARTY, payments: { accountNumber: "id", customerId: "id" } };

/** Paths of a shape, fields or subtrees; the shape is this module's own, a few levels deep. */
function pathsOf(shape: Shape, want: "field" | "subtree", prefix = ""): string[] {
  return Object.entries(shape).flatMap(([key, inner]) => {
    const path = prefix + key;
    if (typeof inner === "string") return want === "field" ? [path] : [];
    return [...(want === "subtree" ? [path] : []), ...pathsOf(inner, want, `${path}.`)];
  });
}

/** Every personal JSON path, for the README and the tests. */
export const PERSONAL_PATHS: readonly string[] = pathsOf(RECORD, "field");
/** The subtrees expected to be objects: any other value there (but null) is hashed or dropped whole. */
export const PERSONAL_SUBTREES: readonly string[] = pathsOf(RECORD, "subtree");

/** A field's value is removed: the key goes from the JSON, the column becomes null. */
const DROPPED = Symbol("dropped");
/** Replaces one value whole: `DROPPED`, or what stands for it. */
type Replace = (value: unknown, kind: ValueKind) => unknown;

/** How the mirror stores personal values under `hash` or `drop`. */
export interface PersonalData {
  readonly mode: "hash" | "drop";
  /** Replaces the personal columns of a row whose `SUMMARY_COLUMNS` values start at `offset`. */
  protectColumns(values: Param[], offset: number): void;
  /** The JSON stored for a record (any JSON value): personal values replaced, every other field kept. */
  recordJson(record: unknown): string;
  /** A reject whose raw record (any JSON value) has its personal values replaced. */
  protectReject(reject: Reject): Reject;
}

/** A value this module hashed, under a key or without one. */
export const HASHED = /^(hmac-)?sha256:[0-9a-f]{64}$/;

/**
 * The policy for a mode; undefined for `keep`. `key` makes hashes HMAC-SHA256, so nobody without it
 * can find a phone number by hashing every possible one. `stored` leaves `HASHED` values as they are.
 */
export function personalDataPolicy(
  mode: PersonalDataMode,
  key?: string,
  options: { stored?: boolean } = {},
): PersonalData | undefined {
  if (mode === "keep") return undefined;
  const replace: Replace = mode === "drop" ? () => DROPPED : hashReplace(key, options.stored ?? false);
  const column = (value: Param, kind: ValueKind): Param => {
    if (value === null) return null;
    const out = replace(value, kind);
    return out === DROPPED ? null : (out as Param);
  };
  return {
    mode,
    protectColumns(values, offset) {
      for (const [index, kind] of PERSONAL_POSITIONS) {
        const at = offset + index;
        values[at] = column(values[at] as Param, kind);
      }
    },
    recordJson(record) {
      return JSON.stringify(protectValue(record, replace)) ?? "null";
    },
    protectReject(reject) {
      return { ...reject, raw: protectValue(reject.raw, replace) };
    },
  };
}

/** `sha256:` or `hmac-sha256:` and the hex digest of text given in pieces. */
function digester(key?: string): (pieces: Iterable<string>) => string {
  const prefix = key === undefined ? "sha256:" : "hmac-sha256:";
  return (pieces) => {
    const hash = key === undefined ? createHash("sha256") : createHmac("sha256", key);
    for (const piece of pieces) hash.update(piece, "utf8");
    return prefix + hash.digest("hex");
  };
}

/**
 * A value as `sha256:<hex>` (`hmac-sha256:<hex>` with a key) of its normalised text (NFKC, trimmed,
 * spaces collapsed; lower-cased unless an id; phones as digits, so one person hashes alike).
 */
export function hasher(key?: string): (value: string, kind: ValueKind) => string {
  const digest = digester(key);
  return (value, kind) => {
    const text = normalise(value, kind);
    return text === "" ? "" : digest([text]);
  };
}

/** An array or object as the hash of its canonical JSON text (keys sorted), at any depth or size. */
export function jsonHasher(key?: string): (value: object) => string {
  const digest = digester(key);
  return (value) => digest(canonicalJson(value));
}

function normalise(value: string, kind: ValueKind): string {
  const text = value.normalize("NFKC").trim().replace(/\s+/g, " ");
  if (kind === "id") return text;
  if (kind === "phone") {
    const digits = text.replace(/\D/g, "");
    return digits === "" ? text.toLowerCase() : digits;
  }
  return text.toLowerCase();
}

/** Hashes a value whole: text and other scalars by their normalised text, arrays and objects by their JSON. */
function hashReplace(key: string | undefined, keepHashed: boolean): Replace {
  const hash = hasher(key);
  const hashJson = jsonHasher(key);
  return (value, kind) => {
    if (value === null || value === undefined) return value;
    if (typeof value === "string") return keepHashed && HASHED.test(value) ? value : hash(value, kind);
    if (typeof value === "object") return hashJson(value);
    return hash(String(value), kind);
  };
}

type Obj = Record<string, unknown>;
const isObject = (x: unknown): x is Obj => typeof x === "object" && x !== null && !Array.isArray(x);

/**
 * A copy of `obj` with what `shape` names replaced (or removed), keys in their order: a field's value
 * whole, an array of them (`streetLines`) value by value; a subtree entered when it is an object,
 * kept when null, and replaced whole when anything else. Recurses only as deep as `shape`.
 */
function protectObject(obj: Obj, shape: Shape, replace: Replace): Obj {
  const out: Obj = { ...obj };
  for (const [key, inner] of Object.entries(shape)) {
    if (!Object.hasOwn(out, key)) continue;
    const value = out[key];
    let next: unknown;
    if (typeof inner === "string") {
      next = Array.isArray(value) ? value.map((v) => replace(v, inner)) : replace(value, inner);
      if (Array.isArray(next) && next.includes(DROPPED)) next = DROPPED;
    } else if (value === null) continue;
    else if (isObject(value)) next = protectObject(value, inner, replace);
    else next = replace(value, "text");
    if (next === DROPPED) delete out[key];
    else out[key] = next;
  }
  return out;
}

/**
 * Any stored JSON value, record or reject: an object as a booking; an array element by element (each
 * object as a booking); null and booleans as they are; any other value (text, a number, a nested
 * array) replaced whole, dropped as null. The head of a record too large to read (no field can be
 * found in it) is hashed as it is, or dropped, leaving its size.
 */
function protectValue(value: unknown, replace: Replace): unknown {
  if (isOversizedRaw(value)) {
    const head = replace(value.head, "id");
    return head === DROPPED ? { bytes: value.bytes } : { ...value, head };
  }
  const one = (v: unknown): unknown => {
    if (isObject(v)) return protectObject(v, RECORD, replace);
    if (v === null || typeof v === "boolean") return v;
    const out = replace(v, "text");
    return out === DROPPED ? null : out;
  };
  return Array.isArray(value) ? value.map(one) : one(value);
}
