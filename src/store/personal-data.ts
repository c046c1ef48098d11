/**
 * `SYNC_PERSONAL_DATA`: `keep` stores people's values as received, `hash` as stable hashes (so they
 * can still be counted and joined), `drop` not at all. Applied before anything is stored: columns,
 * record JSON and quarantined records alike.
 */
import { createHash, createHmac } from "node:crypto";
import { isOversizedRaw } from "../api/response.js";
import type { PersonalDataMode } from "../config/config.js";
import type { Reject } from "../sync/ports.js";
import { type Param, SUMMARY_COLUMNS } from "./rows.js";

/** How a value is normalised before it is hashed, so that one person's value hashes alike. */
export type ValueKind = "text" | "email" | "phone" | "id";

/** Personal fields of a party's `contact` (sender and receiver; `owner` is the sender's account). */
const CONTACT_FIELDS: Readonly<Record<string, ValueKind>> = {
  name: "text",
  phone: "phone",
  email: "email",
  owner: "id",
};
/** Personal fields of a party's `addressDetails`; city, state, country and their codes stay. */
const ADDRESS_FIELDS: Readonly<Record<string, ValueKind>> = {
  addressLine1: "text",
  apartmentNumber: "text",
  landmark: "text",
  streetLines: "text",
  postalCode: "text",
};
/** Personal fields of the full view's `payments`: the customer's account and id. */
const PAYMENT_FIELDS: Readonly<Record<string, ValueKind>> = { accountNumber: "id", customerId: "id" };

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
const PERSONAL_POSITIONS: ReadonlyArray<readonly [index: number, kind: ValueKind]> = SUMMARY_COLUMNS.flatMap(
  (column, index) => {
    const kind = COLUMN_KINDS[column];
    return kind ? [[index, kind] as const] : [];
  },
);

/** Every personal JSON path, for the README and the tests. */
export const PERSONAL_PATHS: readonly string[] = [
  ...["sender", "receiver"].flatMap((party) => [
    ...Object.keys(CONTACT_FIELDS).map((f) => `${party}.contact.${f}`),
    ...Object.keys(ADDRESS_FIELDS).map((f) => `${party}.addressDetails.${f}`),
  ]),
  ...Object.keys(PAYMENT_FIELDS).map((f) => `payments.${f}`),
];

/** A field's value is removed: the key goes from the JSON, the column becomes null. */
const DROPPED = Symbol("dropped");
type Replace = (value: unknown, kind: ValueKind) => unknown;

/** How the mirror stores personal values under `hash` or `drop`. */
export interface PersonalData {
  readonly mode: "hash" | "drop";
  /** Replaces the personal columns of a row whose `SUMMARY_COLUMNS` values start at `offset`. */
  protectColumns(values: Param[], offset: number): void;
  /** The JSON stored for a record: personal fields replaced, every other field kept as it was. */
  recordJson(record: unknown): string;
  /** A reject whose raw record has its personal fields replaced. */
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
  const replace: Replace =
    mode === "drop" ? () => DROPPED : hashReplace(hasher(key), options.stored ?? false);
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
      return JSON.stringify(protectRecord(record, replace));
    },
    protectReject(reject) {
      return { ...reject, raw: protectRaw(reject.raw, replace) };
    },
  };
}

/**
 * A value as `sha256:<hex>` (`hmac-sha256:<hex>` with a key) of its normalised text (NFKC, trimmed,
 * spaces collapsed; lower-cased unless an id; phones as digits, so one person hashes alike).
 */
export function hasher(key?: string): (value: string, kind: ValueKind) => string {
  const prefix = key === undefined ? "sha256:" : "hmac-sha256:";
  const digest = (text: string) =>
    (key === undefined ? createHash("sha256") : createHmac("sha256", key)).update(text, "utf8").digest("hex");
  return (value, kind) => {
    const text = normalise(value, kind);
    return text === "" ? "" : prefix + digest(text);
  };
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

/** Hashes a personal field: scalars by their text, arrays line by line, objects by their JSON. */
function hashReplace(hash: (value: string, kind: ValueKind) => string, keepHashed: boolean): Replace {
  const one = (value: unknown, kind: ValueKind): unknown => {
    if (value === null || value === undefined) return value;
    if (typeof value === "string") return keepHashed && HASHED.test(value) ? value : hash(value, kind);
    if (typeof value === "object") return hash(JSON.stringify(value), kind);
    return hash(String(value), kind);
  };
  return (value, kind) => (Array.isArray(value) ? value.map((v) => one(v, kind)) : one(value, kind));
}

type Obj = Record<string, unknown>;
const isObject = (x: unknown): x is Obj => typeof x === "object" && x !== null && !Array.isArray(x);

/** A copy of `obj` with `fields` replaced (or removed); the order of its keys is kept. */
function protectFields(obj: Obj, fields: Readonly<Record<string, ValueKind>>, replace: Replace): Obj {
  const out: Obj = { ...obj };
  for (const [field, kind] of Object.entries(fields)) {
    if (!Object.hasOwn(out, field)) continue;
    const value = replace(out[field], kind);
    if (value === DROPPED) delete out[field];
    else out[field] = value;
  }
  return out;
}

function protectParty(party: unknown, replace: Replace): unknown {
  if (!isObject(party)) return party;
  const out: Obj = { ...party };
  if (isObject(out.contact)) out.contact = protectFields(out.contact, CONTACT_FIELDS, replace);
  if (isObject(out.addressDetails))
    out.addressDetails = protectFields(out.addressDetails, ADDRESS_FIELDS, replace);
  return out;
}

/** A copy of a booking (either view) with its personal fields replaced; anything else as it is. */
function protectRecord(record: unknown, replace: Replace): unknown {
  if (!isObject(record)) return record;
  const out: Obj = { ...record };
  for (const party of ["sender", "receiver"])
    if (Object.hasOwn(out, party)) out[party] = protectParty(out[party], replace);
  if (isObject(out.payments)) out.payments = protectFields(out.payments, PAYMENT_FIELDS, replace);
  return out;
}

/**
 * A rejected record in whatever shape it came: objects as bookings, arrays one level deep, text as
 * text; the head of an oversized record (no field can be found in it) hashed whole, or dropped.
 */
function protectRaw(raw: unknown, replace: Replace): unknown {
  if (isOversizedRaw(raw)) {
    const head = replace(raw.head, "id");
    return head === DROPPED ? { bytes: raw.bytes } : { ...raw, head };
  }
  if (typeof raw === "string") {
    const out = replace(raw, "text");
    return out === DROPPED ? null : out;
  }
  if (Array.isArray(raw)) return raw.map((r) => protectRecord(r, replace));
  return protectRecord(raw, replace);
}
