/**
 * No mass marking by accident (src/sync/list/missing-share.ts): a reconcile that would mark more
 * than RECONCILE_MAX_MISSING_SHARE of the bookings it judges keeps what it read, marks nothing and
 * records the withheld marks until a pass with `applyMissing` marks them. On either database.
 */
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/config.js";
import { runBackfill } from "../src/sync/backfill/backfill.js";
import { percentOf, withholds } from "../src/sync/list/missing-share.js";
import { runReconcile } from "../src/sync/list/reconcile.js";
import { type MirrorHarness, mirrorHarness } from "./support/mirror-harness.js";
import { describeBackends } from "./support/postgres.js";

let h: MirrorHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function marked(x: MirrorHarness): Promise<number> {
  const [row] = await x.query<{ n: number }>(
    "SELECT count(*) AS n FROM bookings WHERE missing_since IS NOT NULL",
  );
  return row?.n ?? 0;
}

async function mirrored(backend: Parameters<typeof mirrorHarness>[0], bookings: number) {
  const x = await mirrorHarness(backend, { bookings });
  expect((await runBackfill(x.deps(), { concurrency: 2 })).status).toBe("success");
  return x;
}

describe("the share rule", () => {
  it.each([
    [0, 100, 10, false],
    [10, 100, 10, false],
    [11, 100, 10, true],
    [1, 5, 10, true],
    [1, 5, 20, false],
    [1, 1000, 0, true],
    [1000, 1000, 100, false],
  ])("%i unlisted of %i judged at %i%%: withheld %s", (unlisted, judged, max, expected) => {
    expect(withholds(unlisted, judged, max)).toBe(expected);
  });

  it("reads RECONCILE_MAX_MISSING_SHARE as percent, 10 by default, and names a bad value", () => {
    const share = (value?: string, flag?: string) =>
      loadConfig({
        env: { RECONCILE_MAX_MISSING_SHARE: value },
        flags: flag === undefined ? {} : { maxMissingShare: flag },
      }).reconcileMaxMissingPercent;
    expect([share(), share("25%"), share("2.5"), share("0"), share("100%"), share("0.1")]).toEqual([
      10, 25, 2.5, 0, 100, 0.1,
    ]);
    expect(share("5%", "40%")).toBe(40);
    for (const bad of ["101", "10 %", "-1", "ten", "0.1.2"]) {
      expect(() => share(bad)).toThrow(
        `RECONCILE_MAX_MISSING_SHARE = "${bad}" is not valid: expected a percentage from 0 to 100, e.g. 10 or 10%`,
      );
    }
  });

  it("says shares in a few digits", () => {
    expect([percentOf(2000, 2000), percentOf(1, 8), percentOf(1, 3), percentOf(0, 0)]).toEqual([
      "100%",
      "12.5%",
      "33.3%",
      "0%",
    ]);
  });
});

describeBackends("a reconcile past the share", (backend) => {
  it("marks nothing, keeps every change it read, and shows the withheld marks until a person applies them", async () => {
    h = await mirrored(backend, 200);
    h.sim.update(150);
    const gone = Array.from({ length: 30 }, (_, k) => k * 5);
    for (const i of gone) h.sim.remove(i);
    const first = await runReconcile(h.deps(), { since: null });
    expect(first).toMatchObject({
      status: "success",
      updated: 1,
      missing: 0,
      withheld: { count: 30, judged: 200, maxPercent: 10, runId: first.runId, since: null },
    });
    expect(await marked(h)).toBe(0);
    const status = await h.mirror.readStatus(new Date());
    expect(status.reconcileWithheld).toMatchObject({ count: 30, judged: 200, runId: first.runId });
    expect(status.streams.map((s) => s.stream)).not.toContain("reconcile:withheld");

    // Not decided yet: the next pass withholds them again, and does not fail.
    const again = await runReconcile(h.deps(), { since: null });
    expect(again).toMatchObject({ status: "success", missing: 0, withheld: { count: 30 } });
    // A window's pass cannot decide for the whole mirror.
    const since = new Date(h.sim.dataset.createdAtMs(190)).toISOString();
    const windowed = await runReconcile(h.deps(), { since });
    expect(windowed).toMatchObject({ status: "success", missing: 0, withheld: null });
    expect((await h.mirror.readStatus(new Date())).reconcileWithheld).toMatchObject({ runId: again.runId });

    const applied = await runReconcile(h.deps(), { since: null, applyMissing: true });
    expect(applied).toMatchObject({ status: "success", missing: 30, withheld: null });
    expect(await marked(h)).toBe(30);
    expect((await h.mirror.readStatus(new Date())).reconcileWithheld).toBeNull();
  });

  it("marks up to the share as before, and a higher share lets a pass mark more", async () => {
    h = await mirrored(backend, 200);
    for (let k = 0; k < 20; k++) h.sim.remove(k * 7);
    expect(await runReconcile(h.deps(), { since: null })).toMatchObject({ missing: 20, withheld: null });
    for (let k = 0; k < 60; k++) h.sim.remove(k * 3 + 1);
    const judged = 200 - 20;
    const held = await runReconcile(h.deps(), { since: null, maxMissingPercent: 25 });
    const count = held.withheld?.count ?? 0;
    expect(held.withheld).toMatchObject({ judged, maxPercent: 25 });
    expect(count / judged).toBeGreaterThan(0.25);
    const lifted = await runReconcile(h.deps(), { since: null, maxMissingPercent: 50 });
    expect(lifted).toMatchObject({ missing: count, withheld: null });
  });

  it("counts what a complete pass would mark of what it judges", async () => {
    h = await mirrored(backend, 120);
    const runId = await h.mirror.startRun({
      kind: "reconcile",
      stream: null,
      startedAt: new Date().toISOString(),
      checkpointBefore: null,
    });
    const scope = {
      runId,
      startedAt: new Date(Date.now() + 1000).toISOString(),
      at: new Date().toISOString(),
    };
    // No page listed by this run: every booking known before it is unlisted.
    expect(await h.mirror.countUnlisted(scope)).toEqual({ unlisted: 120, judged: 120 });
    const since = new Date(h.sim.dataset.createdAtMs(100)).toISOString();
    expect(await h.mirror.countUnlisted({ ...scope, since })).toEqual({ unlisted: 20, judged: 20 });
    await h.execute("UPDATE bookings SET listed_by_run = $1 WHERE created_at >= $2", [runId, since]);
    expect(await h.mirror.countUnlisted(scope)).toEqual({ unlisted: 100, judged: 120 });
    await h.execute("UPDATE bookings SET missing_since = $1 WHERE created_at < $2", [scope.at, since]);
    expect(await h.mirror.countUnlisted(scope)).toEqual({ unlisted: 0, judged: 20 });
  });
});
