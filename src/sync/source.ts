/**
 * Which source a mirror mirrors: the API's address and a few bookings it served, remembered in
 * `sync_state` (stream `source`), never the token, which rotates. Pure: what is remembered, how two
 * addresses compare, and what a refusal says; source-guard.ts checks a command against it.
 */
import { ConfigError } from "../errors.js";
import { printable } from "../printable.js";
import type { Timed } from "./feed/window.js";
import type { Checked, SyncStore } from "./ports.js";
import { saveProgress } from "./records.js";

/** The `sync_state` stream that holds the mirror's `SourceRecord`. */
export const SOURCE_STREAM = "source";

/** Bookings a mirror remembers its source by. */
export const FINGERPRINT_SIZE = 3;

/** What the mirror remembers of its source (`sync_state`, stream `source`, as JSON). */
export interface SourceRecord {
  /** The API's address: origin and path, without query or trailing slash (`sourceAddress`). */
  baseUrl: string;
  /** A few consecutive bookings it served (`_id`, full-precision `createdAt`), oldest first; empty until a command reads one. */
  bookings: Timed[];
  /** When the mirror began mirroring this source (ISO): its first command, or `adopt-source`. */
  since: string;
}

/**
 * Whether a stored value is a `SourceRecord` as this version writes it. The one rule for a record
 * edited by hand: the guard remembers the source anew over it, `status` shows it as unreadable.
 */
export function isSourceRecord(r: unknown): r is SourceRecord {
  const x = r as Partial<SourceRecord> | null;
  return (
    typeof x?.baseUrl === "string" &&
    typeof x.since === "string" &&
    Array.isArray(x.bookings) &&
    x.bookings.every((b) => typeof b?.id === "string" && typeof b.at === "string")
  );
}

/** The part of a base URL that names a source: origin and path, no query, no trailing slash. */
export function sourceAddress(baseUrl: string): string {
  try {
    const url = new URL(baseUrl);
    return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
  } catch {
    return baseUrl.replace(/[?#].*$/, "").replace(/\/+$/, "");
  }
}

/** The `FINGERPRINT_SIZE` oldest valid bookings of a page, oldest first; empty for a page without one. */
export function fingerprintOf(records: readonly Checked<unknown>[]): Timed[] {
  const valid: Timed[] = [];
  for (const r of records) if (r.ok) valid.push({ id: r.id, at: r.at });
  valid.sort((x, y) => (x.at < y.at ? -1 : x.at > y.at ? 1 : 0));
  return valid.slice(0, FINGERPRINT_SIZE);
}

/** Every `_id` a page holds, its rejects' included: an id the mirror knows is evidence whatever else is wrong. */
export function idsOf(records: readonly Checked<unknown>[]): string[] {
  const ids = new Set<string>();
  for (const r of records) if (r.id !== null) ids.add(r.id);
  return [...ids];
}

/** Stores `record` as the mirror's source, beside the pages: committed with them, or by `flush`. */
export function saveSource(store: Pick<SyncStore, "save">, record: SourceRecord, at: string) {
  return saveProgress(store, { stream: SOURCE_STREAM, value: record }, at);
}

/** A command pointed at a source other than the one the mirror mirrors: exit 2, nothing written. */
export class SourceMismatchError extends ConfigError {
  override name = "SourceMismatchError";
  constructor(message: string) {
    super(message, {
      hint: "booking-sync adopt-source   (to mirror the configured source from now on), or point BOOKING_API_BASE_URL and the token back at the source this mirror was filled from",
    });
  }
}

/** The refusal when the configured address is not the remembered one. */
export function addressMismatch(remembered: SourceRecord, configured: string): SourceMismatchError {
  return new SourceMismatchError(
    `this mirror mirrors ${sourceAddress(remembered.baseUrl)} (since ${remembered.since}), ` +
      `not ${sourceAddress(configured)}: refusing to mix another source's bookings into it ` +
      "(a later reconcile would mark every booking of this mirror missing)",
  );
}

/** The refusal when the address is the same but the source serves none of the mirror's bookings. */
export function bookingsMismatch(remembered: SourceRecord, configured: string): SourceMismatchError {
  // Ids come from a source: shown with their controls made visible.
  const ids = remembered.bookings.map((b) => printable(b.id)).join(", ");
  return new SourceMismatchError(
    `${sourceAddress(configured)}, with the configured token, serves none of the bookings this mirror ` +
      `remembers its source by (${ids || "none"}) nor any of its oldest bookings this mirror holds: ` +
      `it is another account or another source than the one mirrored here since ${remembered.since}; ` +
      "refusing to mix their bookings",
  );
}

/** The refusal when the mirror has no record of its source yet and the source serves none of its bookings. */
export function unrecordedMismatch(configured: string, held: number): SourceMismatchError {
  return new SourceMismatchError(
    `this mirror has no record of its source yet (it was filled before sources were remembered, or the ` +
      `record was edited) and holds ${held} bookings; ${sourceAddress(configured)}, with the configured ` +
      "token, serves none of them (its newest, the ones around the mirror's checkpoint, its oldest): " +
      "it is another account or another source than the one this mirror was filled from; refusing to mix their bookings",
  );
}
