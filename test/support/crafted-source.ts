/**
 * A partner API on 127.0.0.1:0 serving a fixed set of bookings by the contract, each record as a
 * test crafted it: a bad time, a 5 MB name, a value nested 200,000 levels deep (written as text, since
 * `JSON.stringify` cannot). The server pages by each booking's true time, whatever the record says.
 */
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { BookingSet, formatTime, type HostileBooking } from "./hostile-data.js";

/** A string value a crafted record may hold, written in its place as `[[[…]]]`, `depth` levels deep. */
export const DEEP = "@@deep-nesting@@";
const DEPTH = 200_000;

export interface CraftedSource {
  url: string;
  token: string;
  /** Every booking, newest first. */
  bookings: HostileBooking[];
  close(): Promise<void>;
}

/** A string value a crafted record may hold, written in its place as `text`, verbatim. */
export const verbatim = (text: string) => `@@verbatim:${text}@@`;

/** Record text as the source serves it, with `DEEP` and `verbatim` values written as they stand for. */
export function recordText(record: object): string {
  const json = JSON.stringify(record).replace(/"@@verbatim:((?:[^"\\]|\\.)*)@@"/g, (_, escaped: string) =>
    JSON.parse(`"${escaped}"`),
  );
  return json.includes(`"${DEEP}"`) ? json.replace(`"${DEEP}"`, "[".repeat(DEPTH) + "]".repeat(DEPTH)) : json;
}

/** Starts the source; `craft` edits booking k (newest first) in both views, and may set its time's text. */
export async function startCraftedSource(options: {
  count: number;
  seed: number;
  craft?: (b: HostileBooking, k: number) => void;
}): Promise<CraftedSource> {
  const token = "crafted-token";
  const bookings = new BookingSet({ count: options.count, seed: options.seed }).newestFirst();
  for (const b of bookings) {
    const createdAt = formatTime(b.trueUs, "ms");
    Object.assign(b.summary, { createdAt });
    Object.assign(b.full, { createdAt });
  }
  bookings.forEach((b, k) => {
    options.craft?.(b, k);
  });
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({ success: false, status: 401, message: "Invalid or expired token" }));
      return;
    }
    const q = (name: string, fallback: number) => Number(url.searchParams.get(name) ?? fallback);
    let body: string;
    if (url.pathname.endsWith("/fetch-recent-bookings")) {
      const cursor = url.searchParams.get("cursor");
      const before = cursor === null ? Number.POSITIVE_INFINITY : Date.parse(cursor) * 1000;
      // The feed's type filter, as the contract has it: a booking whose type is unset matches none.
      const type = url.searchParams.get("bookingType");
      const older = bookings.filter(
        (b) => b.trueUs < before && (!type || (b.full as { type?: unknown }).type === type),
      );
      const page = older.slice(0, q("limit", 10));
      const hasMore = older.length > page.length;
      const last = page.at(-1);
      const nextCursor = hasMore && last ? JSON.stringify(formatTime(last.trueUs, "ms")) : "null";
      body = `{"success":true,"status":200,"message":"ok","data":{"bookings":[${page.map((b) => recordText(b.summary)).join(",")}],"nextCursor":${nextCursor},"hasMore":${hasMore}}}`;
    } else if (url.pathname.endsWith("/list-bookings")) {
      const size = q("pageSize", 10);
      const pageNo = q("page", 1);
      const page = bookings.slice((pageNo - 1) * size, pageNo * size);
      const pagination = {
        total: bookings.length,
        page: pageNo,
        pageSize: size,
        totalPages: Math.ceil(bookings.length / size),
      };
      body = `{"success":true,"status":200,"message":"ok","data":[${page.map((b) => recordText(b.full)).join(",")}],"pagination":${JSON.stringify(pagination)}}`;
    } else {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(body);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api/v2`,
    token,
    bookings,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}
