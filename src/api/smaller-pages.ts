/**
 * A page over the response-body cap (SYNC_MAX_RESPONSE_MB) is read again in smaller pages, so the one
 * record that makes it so costs only itself: the feed asks the same cursor with half the limit (the
 * walk derives its position from the records, so a shorter page is fine); list-bookings reads page p
 * of size s as the pages of a divisor of s that cover the same positions, put back together, so its
 * callers see the page they asked for. A page of one still over the cap is that record alone: it
 * becomes a stand-in (stand-in.ts).
 */
import { ApiError, findCause } from "../errors.js";
import type { FeedPage, ListPage } from "../sync/ports.js";
import type { AttemptLogger } from "./observe.js";

/** The cause an over-cap ApiError carries (it survives the retry wrapper, which keeps `cause`). */
export class BodyOverCap extends Error {
  override name = "BodyOverCap";
}

/** Whether `err` is a body over the cap. */
export function isOverCap(err: unknown): err is ApiError {
  return err instanceof ApiError && findCause(err, BodyOverCap) !== undefined;
}

/** What the smaller reads need: how to read one page, how to read a record alone, where to say so. */
interface Reads<P> {
  /** One request: a page of `size` (the feed's limit), page number `page` (the list's). */
  read(size: number, page: number): Promise<P>;
  /** The record alone at page `page` of size 1, too large to read: a stand-in; null if the body is no page. */
  alone(page: number): Promise<P | null>;
  logger?: AttemptLogger | undefined;
}

/** Reads a feed page of `limit`, halving the limit while the body is over the cap. */
export async function feedInSmallerPages(limit: number, reads: Reads<FeedPage>): Promise<FeedPage> {
  let spent = 0;
  for (let size = limit; ; size = Math.ceil(size / 2)) {
    try {
      const page = await reads.read(size, 1);
      return { ...page, attempts: page.attempts + spent };
    } catch (err) {
      if (!isOverCap(err)) throw err;
      spent += err.attempts ?? 1;
      if (size === 1) return alone(reads, "fetch-recent-bookings", 1, err, spent);
      said(reads, "fetch-recent-bookings", Math.ceil(size / 2));
    }
  }
}

/** Reads list page `page` of `size`; over the cap, the same positions in pages of a divisor of `size`. */
export async function listInSmallerPages(
  page: number,
  size: number,
  reads: Reads<ListPage>,
): Promise<ListPage> {
  try {
    return await reads.read(size, page);
  } catch (err) {
    if (!isOverCap(err)) throw err;
    const spent = err.attempts ?? 1;
    if (size === 1) return alone(reads, "list-bookings", page, err, spent);
    const part = largestDivisor(size);
    said(reads, "list-bookings", part);
    const parts: ListPage[] = [];
    const per = size / part;
    for (let k = 1; k <= per; k++) {
      const asked = (page - 1) * per + k;
      const got = await listInSmallerPages(asked, part, reads);
      if (got.page !== asked || got.records.length > part)
        throw new ApiError(
          `list-bookings answered page ${got.page} of ${got.records.length} when asked for page ${asked} of ${part}, re-reading a page over the body cap`,
          { retryable: false },
        );
      parts.push(got);
      if (got.records.length < part) break; // the list ends here
    }
    const last = parts.at(-1) as ListPage;
    return {
      records: parts.flatMap((p) => p.records),
      page,
      pageSize: size,
      total: last.total,
      totalPages: Math.ceil(last.total / size),
      attempts: parts.reduce((n, p) => n + p.attempts, spent),
    };
  }
}

/** The stand-in for a record over the cap alone, its attempts counted with those `spent`; a body that is no page fails as it came (`err`). */
async function alone<P extends { attempts: number }>(
  reads: Reads<P>,
  endpoint: string,
  page: number,
  err: ApiError,
  spent: number,
): Promise<P> {
  const one = await reads.alone(page);
  if (one === null)
    throw new ApiError(err.message.replace(/ \(after \d+ attempts\)$/, ""), {
      retryable: false,
      attempts: spent + 1,
      cause: err.cause,
    });
  reads.logger?.warn(
    { endpoint, page },
    "one record alone is over the response-body cap (SYNC_MAX_RESPONSE_MB): read as a stand-in of its start and size",
  );
  return { ...one, attempts: one.attempts + spent };
}

function said<P>(reads: Reads<P>, endpoint: string, size: number): void {
  reads.logger?.warn(
    { endpoint, size },
    `a page over the response-body cap (SYNC_MAX_RESPONSE_MB); reading it again in pages of ${size}`,
  );
}

/** The largest divisor of `n` below it (1 for a prime), so smaller pages cover the same positions. */
function largestDivisor(n: number): number {
  for (let d = 2; d * d <= n; d++) if (n % d === 0) return n / d;
  return 1;
}
