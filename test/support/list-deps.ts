/**
 * Wiring for the list-bookings passes' tests: the real API client against a harness's simulator,
 * and "mirror equals source" checks on full records.
 */
import { createHash } from "node:crypto";
import { expect } from "vitest";
import { createApiClient } from "../../src/api/client.js";
import { systemClock } from "../../src/app.js";
import type { Store } from "../../src/store/index.js";
import type { PartnerApi, SyncDeps } from "../../src/sync/ports.js";
import type { Harness } from "./harness.js";

export interface DepsOptions {
  /** Longest Retry-After honoured, ms; default 50 (tests that prove back-off raise it). */
  maxRetryAfterMs?: number;
  signal?: AbortSignal;
  /** The client's bound on requests in flight (SYNC_CONCURRENCY in the CLI); default none. */
  maxInFlight?: number;
  /** Where the client sends its requests; default the harness's simulator. */
  baseUrl?: string;
}

/** The real client (fast backoff) and the harness's store, clock and logger. */
export function listDeps(h: Harness, o: DepsOptions = {}): SyncDeps<Store> & { api: PartnerApi } {
  const api = createApiClient({
    baseUrl: o.baseUrl ?? h.sim.url,
    token: "sim-token",
    minBackoffMs: 1,
    maxBackoffMs: 20,
    maxRetryAfterMs: o.maxRetryAfterMs ?? 50,
    maxInFlight: o.maxInFlight,
    logger: h.logger,
  });
  return {
    api,
    store: h.store,
    clock: systemClock,
    logger: h.logger,
    signal: o.signal ?? new AbortController().signal,
  };
}

/** The page number of a list-bookings request URL. */
export function pageOf(url: string): number {
  return Number(new URL(url, "http://x").searchParams.get("page") ?? "1");
}

/** Every booking the simulator serves is in the mirror with exactly its full record, packages and items. */
export function expectMirrorHoldsSourceInFull(h: Harness, filter: { sourcePlatform?: string } = {}): void {
  const source = h.sim.allFull(filter);
  const rows = h.store.db
    .prepare("SELECT id, detail_json, sub_total, carrier, booking_type, paid FROM bookings")
    .all() as Array<{
    id: string;
    detail_json: string | null;
    sub_total: number;
    carrier: string;
    booking_type: string;
    paid: number;
  }>;
  const byId = new Map(rows.map((r) => [r.id, r]));
  expect(rows.length).toBe(source.length);
  let packages = 0;
  let items = 0;
  for (const full of source) {
    const row = byId.get(full._id);
    expect(row, full._id).toBeDefined();
    expect(JSON.parse(row?.detail_json ?? "null")).toEqual(JSON.parse(JSON.stringify(full)));
    expect([row?.sub_total, row?.carrier, row?.booking_type, row?.paid]).toEqual([
      full.subTotal,
      full.carrier,
      full.type,
      full.paid ? 1 : 0,
    ]);
    for (const p of full.packages.packages) {
      packages++;
      items += p.items.length;
    }
  }
  const count = (table: string) =>
    (h.store.db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  expect(count("booking_packages")).toBe(packages);
  expect(count("booking_items")).toBe(items);
}

/** A digest of the mirror's booking rows and child rows (less `ignore` columns), to show a rerun changed nothing. */
export function mirrorDigest(h: Harness, ignore: string[] = []): string {
  const hash = createHash("sha256");
  for (const table of ["bookings", "booking_packages", "booking_items"]) {
    for (const row of h.store.db.prepare(`SELECT * FROM ${table} ORDER BY 1, 2, 3`).iterate()) {
      const kept = Object.entries(row as Record<string, unknown>).filter(([k]) => !ignore.includes(k));
      hash.update(JSON.stringify(kept));
    }
  }
  return hash.digest("hex");
}
