/**
 * A hostile partner API for end-to-end tests: a node:http server on 127.0.0.1:0 serving both
 * endpoints (`fetch-recent-bookings`, `list-bookings`) exactly by the contract until a fault is
 * switched on with `setFault(name, options)`; `heal()` switches every fault off. The server sorts
 * and filters by each booking's TRUE time, whatever a fault makes a record report.
 *
 * A fault fires once by default, or on every matching request with `persistent: true`. Which
 * requests match: for a feed fault, the `page`-th feed request since the fault was set (and every
 * later one when persistent); for a list fault, requests for page `page`. Without `page`, every
 * request matches.
 */
import { EventEmitter, once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import {
  around,
  BookingSet,
  type DataOptions,
  errorBody,
  formatTime,
  type HostileBooking,
  MB,
  type Precision,
  padded,
  parseTimeUs,
  position,
  pump,
  RECORDS,
  repeated,
  reported,
  type StreamLog,
  send,
  shuffled,
} from "./hostile-data.js";

import { hugeOn, type Quirks, served } from "./hostile-quirks.js";

export { formatTime, type HostileBooking, type StreamLog, secondsApart } from "./hostile-data.js";
export type { Quirks } from "./hostile-quirks.js";

const FEED_FAULTS = [
  "impossibleDate", // one record's createdAt is 2026-02-30T10:00:00.000Z (or `value`)
  "shiftCreatedAt", // one record's createdAt is `byMs` (10 minutes) older than the truth
  "emptyPage", // no records, hasMore: true, nextCursor: the cursor sent
  "noZone", // every createdAt (and nextCursor) without a zone: 2026-11-20T10:00:00.000
  "inclusiveCursor", // the cursor is inclusive (`<=`), compared at full precision
  "overlap", // the page starts with the last `count` (25) records of the previous feed page
  "repeatPage", // the previous feed answer again, byte for byte
  "badNextCursor", // nextCursor is "abc" (or `value`)
  "shuffle", // the page's records in a seeded random order; nextCursor from the last of them
  "hugeBody", // the page's records repeated for `bytes` (300 MB), streamed
  "hugeRecord", // one record carries a `bytes` (60 MB) string field, streamed
] as const;
const LIST_FAULTS = [
  "listRepeatPage", // page N holds page N-1's bookings
  "deleteAndInsert", // before the page: the newest booking goes, a late one arrives 2/3 down; total equal
  "pageSizeIgnored", // pages of `count` (1000) bookings whatever was asked, and says so
  "shortPage", // the page holds only its first `count` (60) bookings
  "wrongPageEcho", // pagination.page says `value` (1)
] as const;

/** Every fault the server can play. */
export type FaultName = (typeof FEED_FAULTS)[number] | (typeof LIST_FAULTS)[number];

export interface FaultOptions {
  /** Feed faults: the n-th feed request since the fault was set (1-based); list faults: the page asked for. */
  page?: number;
  /** Fire on every matching request, not only the first; default false. */
  persistent?: boolean;
  /** impossibleDate, shiftCreatedAt, hugeRecord: which record of the page; default "middle". */
  at?: "middle" | "last";
  /** shiftCreatedAt: how much older than the truth the record says it is, ms; default 600000. */
  byMs?: number;
  /** overlap: records repeated (25); shortPage: records kept (60); pageSizeIgnored: page size (1000). */
  count?: number;
  /** hugeBody, hugeRecord: bytes to stream; default 300 MB and 60 MB. */
  bytes?: number;
  /** impossibleDate, badNextCursor: the text reported; wrongPageEcho: the page reported. */
  value?: string | number;
}

export interface HostileOptions extends DataOptions {
  /** Bearer token required; default "hostile-token". */
  token?: string;
  /** How createdAt is written (and cursors compared): "ms" (default) or "us". */
  precision?: Precision;
  /** The healthy cursor rule; default "exclusive" (`createdAt < cursor`). */
  cursor?: "exclusive" | "inclusive";
  /** Quirks the source repeats on every request, from the start (not faults: `heal()` keeps them). */
  quirks?: Quirks;
}

export interface HostileServer {
  /** Base URL including /api/v2. */
  url: string;
  token: string;
  /** The source's bookings: `add`, `insertLate`, `remove`, `newestFirst`. */
  data: BookingSet;
  /** Ids the source serves now, sorted. */
  ids(): string[];
  /** Switches a fault on (again, with its counters reset). */
  setFault(name: FaultName, options?: FaultOptions): void;
  /** Switches every fault off. */
  heal(): void;
  /** How often a fault fired since it was last set. */
  fired(name: FaultName): number;
  /** Emits `streamed` when a huge answer ends (the client read it all, or went away). */
  events: EventEmitter<{ streamed: [StreamLog] }>;
  close(): Promise<void>;
}

/** Starts the hostile server on 127.0.0.1, on a port the OS picks. */
export async function startHostileServer(options: HostileOptions): Promise<HostileServer> {
  const host = new Hostile(options);
  const server = http.createServer((req, res) => {
    host.handle(req, res).catch((err: unknown) => {
      // A bug here must show in the test as a 500, not as a hang.
      if (res.headersSent) res.destroy();
      else send(res, 500, { success: false, status: 500, message: String(err) });
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api/v2`,
    token: host.token,
    data: host.data,
    ids: () =>
      host.data
        .newestFirst()
        .map((b) => b.id)
        .sort(),
    setFault(name, o = {}) {
      host.faults.set(name, { options: o, seen: 0, fired: 0 });
      host.fired.set(name, 0);
    },
    heal: () => host.faults.clear(),
    fired: (name) => host.fired.get(name) ?? 0,
    events: host.events,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A whole number from 1 to `max` (the contract's limits), or undefined: the server answers 400. */
function whole(text: string, max: number): number | undefined {
  const n = Number(text);
  return /^\d+$/.test(text) && n >= 1 && n <= max ? n : undefined;
}

class Hostile {
  readonly token: string;
  readonly data: BookingSet;
  readonly faults = new Map<FaultName, { options: FaultOptions; seen: number; fired: number }>();
  /** How often each fault fired since it was set; kept after `heal()`. */
  readonly fired = new Map<FaultName, number>();
  readonly events = new EventEmitter<{ streamed: [StreamLog] }>();
  readonly #precision: Precision;
  readonly #inclusive: boolean;
  readonly #quirks: Quirks;
  /** The last feed answer: its bookings (for `overlap`) and its bytes (for `repeatPage`). */
  #lastFeed: { rows: HostileBooking[]; body: Buffer } | undefined;

  constructor(options: HostileOptions) {
    this.token = options.token ?? "hostile-token";
    this.data = new BookingSet(options);
    this.#precision = options.precision ?? "ms";
    this.#inclusive = options.cursor === "inclusive";
    this.#quirks = options.quirks ?? {};
  }

  async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://hostile");
    const path = url.pathname;
    const endpoint = path.endsWith("/fetch-recent-bookings")
      ? "feed"
      : path.endsWith("/list-bookings")
        ? "list"
        : "other";
    if (endpoint === "other") send(res, 404, errorBody(404, "Route not found"));
    else if (req.headers.authorization !== `Bearer ${this.token}`)
      send(res, 401, errorBody(401, "Invalid or expired token"));
    else if (endpoint === "feed") await this.#feed(url.searchParams, res);
    else await this.#list(url.searchParams, res);
  }

  /** The faults that fire on this request (counted as fired). */
  #firing(endpoint: "feed" | "list", page: number): Map<FaultName, FaultOptions> {
    const out = new Map<FaultName, FaultOptions>();
    const names: readonly FaultName[] = endpoint === "feed" ? FEED_FAULTS : LIST_FAULTS;
    for (const [name, f] of this.faults) {
      if (!names.includes(name) || (!f.options.persistent && f.fired > 0)) continue;
      const n = endpoint === "feed" ? ++f.seen : page;
      const want = f.options.page;
      const hit =
        want === undefined || n === want || (endpoint === "feed" && f.options.persistent && n > want);
      if (!hit) continue;
      f.fired++;
      this.fired.set(name, f.fired);
      out.set(name, f.options);
    }
    return out;
  }

  async #feed(query: URLSearchParams, res: http.ServerResponse): Promise<void> {
    const limit = whole(query.get("limit") ?? "10", 100);
    const sent = query.get("cursor") || null;
    const cursor = sent === null ? undefined : parseTimeUs(sent);
    if (limit === undefined || (sent !== null && cursor === undefined)) {
      send(res, 400, errorBody(400, "Invalid query parameter 'limit' or 'cursor'"));
      return;
    }
    const fire = this.#firing("feed", 0);
    if (fire.has("repeatPage") && this.#lastFeed) {
      send(res, 200, this.#lastFeed.body);
      return;
    }
    // Compared at full precision: to the microsecond when the times carry microseconds.
    const inclusive = this.#inclusive || fire.has("inclusiveCursor");
    const type = query.get("bookingType");
    const rows = this.data
      .newestFirst()
      .filter((b) => !type || b.full.type === type)
      .filter((b) => cursor === undefined || (inclusive ? b.trueUs <= cursor : b.trueUs < cursor));
    const overlap = fire.get("overlap");
    const again = overlap ? (this.#lastFeed?.rows ?? []).slice(-(overlap.count ?? 25)) : [];
    let page = [...again, ...rows.slice(0, limit - again.length)];
    let hasMore = rows.length > limit - again.length;
    const cap = this.#quirks.capsPage;
    if (cap !== undefined) [page, hasMore] = [page.slice(0, cap), false];
    if (fire.has("emptyPage")) [page, hasMore] = [[], true];
    if (fire.has("shuffle")) page = shuffled(page, this.data.seed);
    const zone = !fire.has("noZone");
    const records = page.map((b) =>
      served(
        this.#quirks,
        b,
        reported(b.summary, formatTime(b.trueUs, this.#precision, zone), b.trueUs),
        "feed",
      ),
    );
    this.#misreport(records, page, fire);
    const last = page.at(-1);
    let nextCursor = last
      ? formatTime(last.trueUs, this.#precision, zone)
      : fire.has("emptyPage")
        ? sent
        : null;
    if (fire.has("badNextCursor")) nextCursor = String(fire.get("badNextCursor")?.value ?? "abc");
    if (this.#quirks.claimsMore) [nextCursor, hasMore] = [null, true];
    const data = { bookings: RECORDS, nextCursor, hasMore };
    const envelope = { success: true, data, status: 200, message: "Recent bookings fetched" };
    const [head, tail] = around({ ...envelope, timestamp: new Date().toISOString() });
    const texts = records.map((r) => JSON.stringify(r));
    const quirk = hugeOn(this.#quirks, page);
    if (quirk) {
      const pieces = padded(head, texts, quirk.at, tail, quirk.bytes);
      this.events.emit("streamed", await pump(res, pieces));
      return;
    }
    const huge = fire.get("hugeBody") ?? fire.get("hugeRecord");
    if (huge && texts.length > 0) {
      const pieces = fire.has("hugeBody")
        ? repeated(head, texts, tail, huge.bytes ?? 300 * MB)
        : padded(head, texts, position(texts.length, huge.at), tail, huge.bytes ?? 60 * MB);
      this.events.emit("streamed", await pump(res, pieces));
      return;
    }
    const body = Buffer.from(`${head}[${texts.join(",")}]${tail}`);
    this.#lastFeed = { rows: page, body };
    send(res, 200, body);
  }

  /** Record faults: one record's createdAt is impossible, or older than the truth. */
  #misreport(
    records: Array<Record<string, unknown>>,
    page: HostileBooking[],
    fire: Map<FaultName, FaultOptions>,
  ) {
    const impossible = fire.get("impossibleDate");
    const shift = fire.get("shiftCreatedAt");
    if (impossible && records.length > 0) {
      const record = records[position(records.length, impossible.at)] as Record<string, unknown>;
      record.createdAt = String(impossible.value ?? "2026-02-30T10:00:00.000Z");
    }
    if (shift && records.length > 0) {
      const k = position(records.length, shift.at);
      const trueUs = (page[k] as HostileBooking).trueUs - (shift.byMs ?? 600_000) * 1000;
      (records[k] as Record<string, unknown>).createdAt = formatTime(trueUs, this.#precision);
    }
  }

  async #list(query: URLSearchParams, res: http.ServerResponse): Promise<void> {
    const asked = whole(query.get("page") ?? "1", Number.MAX_SAFE_INTEGER);
    const pageSize = whole(query.get("pageSize") ?? "10", 100);
    if (asked === undefined || pageSize === undefined) {
      send(res, 400, errorBody(400, "Invalid query parameter 'page' or 'pageSize'"));
      return;
    }
    const fire = this.#firing("list", asked);
    if (fire.has("deleteAndInsert")) this.#deleteAndInsert();
    const size = fire.has("pageSizeIgnored") ? (fire.get("pageSizeIgnored")?.count ?? 1000) : pageSize;
    const platform = query.get("sourcePlatform");
    const all = this.data.newestFirst().filter((b) => !platform || b.full.sourcePlatform === platform);
    const from = fire.has("listRepeatPage") ? asked - 1 : asked;
    let rows = all.slice((from - 1) * size, from * size);
    if (fire.has("shortPage")) rows = rows.slice(0, fire.get("shortPage")?.count ?? 60);
    const echo = fire.has("wrongPageEcho") ? Number(fire.get("wrongPageEcho")?.value ?? 1) : asked;
    const records = rows.map((b) =>
      served(this.#quirks, b, reported(b.full, formatTime(b.trueUs, this.#precision), b.trueUs), "list"),
    );
    const pagination = {
      total: all.length,
      page: echo,
      pageSize: size,
      totalPages: Math.ceil(all.length / size),
    };
    const envelope = { success: true, data: RECORDS, pagination, status: 200, message: "Bookings retrieved" };
    const [head, tail] = around({ ...envelope, timestamp: new Date().toISOString() });
    const texts = records.map((r) => JSON.stringify(r));
    const quirk = hugeOn(this.#quirks, rows);
    if (quirk)
      this.events.emit("streamed", await pump(res, padded(head, texts, quirk.at, tail, quirk.bytes)));
    else send(res, 200, Buffer.from(`${head}[${texts.join(",")}]${tail}`));
  }

  /** The newest booking is deleted and a late one arrives two thirds down the list: the total stays. */
  #deleteAndInsert(): void {
    const list = this.data.newestFirst();
    const k = Math.floor((list.length * 2) / 3);
    const [newest, above, below] = [list[0], list[k], list[k + 1]];
    if (!newest || !above || !below) return;
    this.data.remove([newest.id]);
    this.data.insertLate(Math.floor((above.trueUs + below.trueUs) / 2));
  }
}
