/**
 * What the hostile test source serves: its bookings, how it writes times, and how it writes its
 * answers (JSON with an exact length, or huge bodies streamed with backpressure). Each booking
 * keeps its TRUE creation time (epoch microseconds), what the server sorts and filters by, apart
 * from the `createdAt` a fault may report. Records come from the simulator's generator, so every
 * one is realistic and passes the client's schemas; their ids depend on the seed only, their times
 * on the seed and the minute the data set is made.
 */
import type http from "node:http";
import {
  fullBooking,
  type SimFullBooking,
  type SimSummaryBooking,
  summaryOf,
} from "../../src/simulator/index.js";
import { createRng } from "../../src/simulator/random.js";

/** Epoch the record bodies (and their `_id`s) are generated at, so ids depend on the seed only. */
const BODY_EPOCH_MS = Date.UTC(2025, 0, 1);

/** One booking the source holds. */
export interface HostileBooking {
  /** Generation index, unique (late inserts take the next one too). */
  index: number;
  id: string;
  /** When the booking was really created, epoch microseconds. */
  trueUs: number;
  full: SimFullBooking;
  summary: SimSummaryBooking;
}

/** How times are written: milliseconds (`.123Z`) or microseconds (`.123456Z`). */
export type Precision = "ms" | "us";

export interface DataOptions {
  seed: number;
  /** Bookings at the start (indexes 0..count-1, 0 = oldest). */
  count: number;
  /** True creation time of booking i, epoch µs; must not decrease with i. Default: one a second. */
  trueUsOf?: ((i: number) => number) | undefined;
}

/**
 * Default true time of booking i: one a second from two hours before now (rounded down to the
 * minute), so a few thousand bookings are all in the past, and the checkpoint is never capped.
 */
export function secondsApart(startMs = Math.floor(Date.now() / 60_000) * 60_000 - 2 * 3_600_000) {
  return (i: number) => (startMs + i * 1000) * 1000;
}

/** The source's bookings, oldest first; newest first is how both endpoints serve them. */
export class BookingSet {
  readonly seed: number;
  readonly #trueUsOf: (i: number) => number;
  #next = 0;
  /** Served bookings sorted by (trueUs, index): the server's own order. */
  #rows: HostileBooking[] = [];

  constructor(options: DataOptions) {
    this.seed = options.seed;
    this.#trueUsOf = options.trueUsOf ?? secondsApart();
    this.add(options.count);
  }

  /** Adds `count` bookings newer than every other (continuing the time formula); returns them. */
  add(count: number): HostileBooking[] {
    const added = Array.from({ length: count }, () => this.#make(this.#trueUsOf(this.#next)));
    this.#rows.push(...added);
    this.#sort();
    return added;
  }

  /** A booking committed late: created at `trueUs`, which may be older than bookings already served. */
  insertLate(trueUs: number): HostileBooking {
    const row = this.#make(trueUs);
    this.#rows.push(row);
    this.#sort();
    return row;
  }

  /** The source stops serving these bookings. */
  remove(ids: readonly string[]): void {
    const gone = new Set(ids);
    this.#rows = this.#rows.filter((r) => !gone.has(r.id));
  }

  /** Every served booking, newest first. */
  newestFirst(): HostileBooking[] {
    return [...this.#rows].reverse();
  }

  #make(trueUs: number): HostileBooking {
    const index = this.#next++;
    const full = fullBooking(this.seed, index, 0, { createdAtMs: BODY_EPOCH_MS + index * 60_000 });
    return { index, id: full._id, trueUs, full, summary: summaryOf(full) };
  }

  #sort(): void {
    this.#rows.sort((a, b) => a.trueUs - b.trueUs || a.index - b.index);
  }
}

/** An epoch-µs time as ISO 8601 UTC with 3 or 6 fraction digits; without the `Z` when `zone` is false. */
export function formatTime(us: number, precision: Precision, zone = true): string {
  let s = new Date(Math.floor(us / 1000)).toISOString();
  if (precision === "us") s = `${s.slice(0, -1)}${String(us % 1000).padStart(3, "0")}Z`;
  return zone ? s : s.slice(0, -1);
}

const ISO = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})?$/;

/** Parses an ISO 8601 time at full precision to epoch µs (no zone means UTC); undefined if it is not one. */
export function parseTimeUs(text: string): number | undefined {
  const m = ISO.exec(text);
  if (!m) return undefined;
  const ms = Date.parse(`${m[1]}${m[3] ?? "Z"}`);
  if (Number.isNaN(ms)) return undefined;
  return ms * 1000 + Number((m[2] ?? "").padEnd(6, "0").slice(0, 6));
}

/** A copy of `record` whose times say `createdAt` (and `bookingDate`/`updatedAt` at the true time). */
export function reported<T extends object>(
  record: T,
  createdAt: string,
  trueUs: number,
): Record<string, unknown> {
  const at = formatTime(trueUs, "ms");
  const copy: Record<string, unknown> = { ...record, createdAt, bookingDate: at };
  if ("updatedAt" in record) copy.updatedAt = at;
  return copy;
}

export const MB = 1024 * 1024;
/** Stands for the records array in an envelope, so the envelope can be split around it. */
const HOLE = "\u0000records\u0000";
export const RECORDS: unknown = HOLE;

/** `JSON.stringify(envelope)` split where it holds `RECORDS`: the text before and after the records array. */
export function around(envelope: object): [head: string, tail: string] {
  const [head = "", tail = ""] = JSON.stringify(envelope).split(JSON.stringify(HOLE));
  return [head, tail];
}

/** A huge body: `[records`, then `,records` again and again for `bytes`, then `]tail`. */
export function* repeated(head: string, records: string[], tail: string, bytes: number): Generator<Buffer> {
  yield Buffer.from(`${head}[${records.join(",")}`);
  const once = records.map((r) => `,${r}`).join("");
  const chunk = Buffer.from(once.repeat(Math.max(1, Math.floor(MB / once.length))));
  for (let sent = 0; sent < bytes; sent += chunk.length) yield chunk;
  yield Buffer.from(`]${tail}`);
}

/** A huge record: record `k` gains a `remarks` string of `bytes` characters. */
export function* padded(
  head: string,
  records: string[],
  k: number,
  tail: string,
  bytes: number,
): Generator<Buffer> {
  const upTo = records.slice(0, k + 1).join(",");
  yield Buffer.from(`${head}[${upTo.slice(0, -1)},"remarks":"`);
  const chunk = Buffer.alloc(MB, "x");
  for (let sent = 0; sent < bytes; sent += chunk.length) yield chunk;
  yield Buffer.from(
    `"}${records
      .slice(k + 1)
      .map((r) => `,${r}`)
      .join("")}]${tail}`,
  );
}

/** Index of the record a fault picks on a page of `length`. */
export function position(length: number, at: "middle" | "last" | undefined): number {
  return at === "last" ? length - 1 : Math.floor(length / 2);
}

/** A seeded shuffle (Fisher–Yates); a page of two or more never keeps its order. */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  const rng = createRng(seed);
  const out = [...items];
  for (let k = out.length - 1; k > 0; k--) {
    const j = rng.int(0, k);
    [out[k], out[j]] = [out[j] as T, out[k] as T];
  }
  if (out.length > 1 && out.every((x, k) => x === items[k])) out.reverse();
  return out;
}

/** A streamed (huge) answer ended: how much was written, and whether all of it was. */
export interface StreamLog {
  bytes: number;
  complete: boolean;
}

/** Writes a JSON answer with an exact Content-Length; returns the status. */
export function send(res: http.ServerResponse, status: number, body: object | Buffer): number {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": bytes.length,
  });
  res.end(bytes);
  return status;
}

export const errorBody = (status: number, message: string) => ({
  success: false,
  status,
  message,
  timestamp: new Date().toISOString(),
});

/** Writes pieces with backpressure, stopping when the client goes away. */
export async function pump(res: http.ServerResponse, pieces: Iterable<Buffer>): Promise<StreamLog> {
  res.writeHead(200, { "content-type": "application/json; charset=utf-8" });
  let bytes = 0;
  for (const piece of pieces) {
    if (res.destroyed) return { bytes, complete: false };
    bytes += piece.length;
    if (res.write(piece)) continue;
    await new Promise<void>((resolve) => {
      const done = () => {
        res.off("drain", done).off("close", done);
        resolve();
      };
      res.on("drain", done).on("close", done);
    });
  }
  res.end();
  return { bytes, complete: !res.destroyed };
}
