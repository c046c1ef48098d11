/**
 * A reconcile of a typed mirror judges its own type only (UnlistedScope.bookingType): bookings of the
 * other type that an older version stored are never counted missing, so they neither push a pass
 * over RECONCILE_MAX_MISSING_SHARE nor get marked. On either database.
 */
import { afterEach, expect, it } from "vitest";
import { runBackfill } from "../src/sync/backfill/backfill.js";
import { runReconcile } from "../src/sync/list/reconcile.js";
import { type MirrorHarness, mirrorHarness } from "./support/mirror-harness.js";
import { describeBackends } from "./support/postgres.js";

let h: MirrorHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function markedByType(x: MirrorHarness): Promise<Record<string, number>> {
  const rows = await x.query<{ type: string; n: number }>(
    "SELECT booking_type AS type, count(*) AS n FROM bookings WHERE missing_since IS NOT NULL GROUP BY 1",
  );
  return Object.fromEntries(rows.map((r) => [r.type, Number(r.n)]));
}

describeBackends("a reconcile of a typed mirror", (backend) => {
  it("judges only its type: the other type's stored bookings are neither counted nor marked", async () => {
    h = await mirrorHarness(backend, { bookings: 200 });
    // An older version filled the mirror with both types.
    expect((await runBackfill(h.deps(), { concurrency: 2 })).status).toBe("success");
    const lc = h.sourceIds("LC").length;
    const inCount = h.sourceIds("IN").length;
    expect(lc / 200, "enough LC bookings to pass the 10% share").toBeGreaterThan(0.1);
    // Two IN bookings leave the source: well under the share of the IN bookings judged.
    const sim = h.sim;
    const ins = Array.from({ length: 200 }, (_, i) => i).filter((i) => sim.dataset.full(i).type === "IN");
    for (const i of ins.slice(3, 5)) sim.remove(i);
    expect(h.sourceIds("IN").length).toBe(inCount - 2);

    const pass = await runReconcile(h.deps(), { since: null, bookingType: "IN" });
    expect(pass).toMatchObject({ status: "success", missing: 2, withheld: null });
    expect(await markedByType(h)).toEqual({ IN: 2 });

    // What the pass judged, as the store counts it: its type, every one listed; untyped, the LC unlisted.
    const scope = {
      runId: pass.runId,
      startedAt: new Date(Date.now() + 60_000).toISOString(),
      at: new Date().toISOString(),
    };
    expect(await h.mirror.countUnlisted({ ...scope, bookingType: "IN" })).toEqual({
      unlisted: 0,
      judged: inCount - 2,
    });
    expect(await h.mirror.unlistedTimes({ ...scope, bookingType: "IN" }, 10)).toEqual([]);
    expect(await h.mirror.countUnlisted(scope)).toEqual({ unlisted: lc, judged: inCount - 2 + lc });
    expect(await h.mirror.unlistedTimes(scope, 10)).toHaveLength(10);
  });
});
