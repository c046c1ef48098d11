/**
 * A typed mirror holds its type only, records whose type cannot be read too (list/booking-type.ts):
 * one without `type`, or one over the record cap kept as its `_id`, `createdAt` and a marker, is kept
 * only when the mirror already holds its id, and otherwise left out, not quarantined. A crafted
 * source, the real client and a real SQLite mirror, filled by backfill and reconcile (list paths).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createApiClient } from "../src/api/client.js";
import { systemClock } from "../src/app.js";
import { openStore, type Store } from "../src/store/index.js";
import { runBackfill } from "../src/sync/backfill/backfill.js";
import { runReconcile } from "../src/sync/list/reconcile.js";
import { type CraftedSource, startCraftedSource } from "./support/crafted-source.js";
import { memoryLogger } from "./support/fakes.js";

let source: CraftedSource | undefined;
let store: Store | undefined;
let dir: string | undefined;
afterEach(async () => {
  store?.close();
  store = undefined;
  await source?.close();
  source = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Twenty values under the 64 KB value cap that together pass the 1 MB record cap. */
const BULK = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`note${i}`, "x".repeat(60_000)]));

describe("a typed mirror and records whose type cannot be read", () => {
  it("leaves out an unknown record of unreadable type, and keeps one it already holds", async () => {
    source = await startCraftedSource({ count: 150, seed: 31 });
    const bookings = source.bookings;
    const typeOf = (k: number) => bookings[k]?.full.type;
    const ins = bookings.flatMap((b, k) => (b.full.type === "IN" ? [k] : []));
    const lcs = bookings.flatMap((b, k) => (b.full.type === "LC" ? [k] : []));
    expect(ins.length > 10 && lcs.length > 10, "the source serves both types").toBe(true);
    // Unknown to the mirror: an LC booking without `type`, an LC booking over the record cap.
    const [noType, oversize] = lcs as [number, number];
    // Held by the mirror once it is read with its type; later served without it.
    const [heldIn] = ins as [number];
    const strip = (k: number) => {
      const b = bookings[k];
      if (!b) throw new Error(`no booking ${k}`);
      for (const view of [b.summary, b.full] as Array<Record<string, unknown>>) delete view.type;
    };
    strip(noType);
    Object.assign(bookings[oversize]?.full ?? {}, BULK);

    dir = mkdtempSync(join(tmpdir(), "booking-sync-typed-unread-"));
    store = openStore(join(dir, "mirror.db"));
    const logger = memoryLogger();
    const api = createApiClient({
      baseUrl: source.url,
      token: source.token,
      minBackoffMs: 1,
      maxBackoffMs: 20,
      logger,
    });
    const deps = { api, store, clock: systemClock, logger, signal: new AbortController().signal };
    const db = store.db;
    const ids = () => db.prepare("SELECT id FROM bookings ORDER BY id").pluck().all() as string[];
    const inIds = ins.map((k) => bookings[k]?.id as string).sort();

    expect((await runBackfill(deps, { bookingType: "IN", pageSize: 25 })).status).toBe("success");
    expect(ids()).toEqual(inIds);
    const quarantined = db.prepare("SELECT count(*) FROM rejected_records").pluck().get();
    expect(quarantined, "out of scope, not quarantined").toBe(0);
    const leftOut = logger.lines.filter(
      (l) => l.level === "debug" && /type cannot be read/.test(l.msg ?? ""),
    );
    expect(leftOut.map((l) => (l.obj as { id: string }).id)).toEqual(
      expect.arrayContaining([bookings[noType]?.id, bookings[oversize]?.id]),
    );

    // The held IN booking now comes without its type, and changed: a list pass keeps it, updated,
    // so reconcile finds it listed and marks nothing.
    strip(heldIn);
    Object.assign(bookings[heldIn]?.full ?? {}, { remarks: "changed after the type went" });
    const pass = await runReconcile(deps, { since: null, bookingType: "IN", pageSize: 25 });
    expect(pass).toMatchObject({ status: "success", missing: 0, withheld: null });
    expect(ids()).toEqual(inIds);
    const held = db
      .prepare("SELECT detail_json FROM bookings WHERE id = ?")
      .pluck()
      .get(bookings[heldIn]?.id);
    expect(JSON.parse(held as string)).toMatchObject({ remarks: "changed after the type went" });
    expect(typeOf(noType)).toBeUndefined();
  });
});
