/** Plain `fetch` helpers for talking to the simulator in tests, and a lifecycle that closes it. */
import { afterEach } from "vitest";
import type { SimSummaryBooking, Simulator, SimulatorOptions } from "../../src/simulator/index.js";
import { startSimulator } from "../../src/simulator/index.js";

export const AUTH = { authorization: "Bearer sim-token" };
export const FEED = "/partner/booking/fetch-recent-bookings";
export const LIST = "/partner/booking/list-bookings";
/** A fixed clock, so envelopes' timestamps and default epochs are reproducible. */
export const NOW = Date.UTC(2025, 5, 1, 12, 0, 0);

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body, or undefined when it is not JSON. */
  json: unknown;
}

export interface FeedData {
  bookings: SimSummaryBooking[];
  nextCursor: string | null;
  hasMore: boolean;
}

/** GET `path` under the simulator's base URL with query `params`. */
export async function get(
  sim: Simulator,
  path: string,
  params: Record<string, string | number> = {},
  headers: Record<string, string> = AUTH,
): Promise<Reply> {
  const url = new URL(sim.url + path);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, String(v));
  const res = await fetch(url, { headers });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** One feed page's `data`, asserting a 200. */
export async function feedPage(
  sim: Simulator,
  params: Record<string, string | number> = {},
): Promise<FeedData> {
  const reply = await get(sim, FEED, params);
  if (reply.status !== 200) throw new Error(`feed answered ${reply.status}: ${reply.text.slice(0, 200)}`);
  return (reply.json as { data: FeedData }).data;
}

/** Follows nextCursor while hasMore, like a naive client; returns every page. Stops after `maxPages`. */
export async function walkFeed(
  sim: Simulator,
  params: { limit: number; bookingType?: string },
  maxPages = 10_000,
): Promise<FeedData[]> {
  const pages: FeedData[] = [];
  let cursor: string | null = null;
  for (let n = 0; n < maxPages; n++) {
    const page = await feedPage(sim, cursor === null ? params : { ...params, cursor });
    pages.push(page);
    if (!page.hasMore || page.nextCursor === null) return pages;
    cursor = page.nextCursor;
  }
  throw new Error(`feed walk did not end within ${maxPages} pages`);
}

/** Returns a starter whose simulators are closed after each test. */
export function useSimulators(): (options?: SimulatorOptions) => Promise<Simulator> {
  const started: Simulator[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((sim) => sim.close()));
  });
  return async (options = {}) => {
    const sim = await startSimulator({ now: () => NOW, ...options });
    started.push(sim);
    return sim;
  };
}
