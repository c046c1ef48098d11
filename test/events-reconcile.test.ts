/**
 * A reconcile's events, through the real pass (the simulator over HTTP, the real client, a mirror
 * on each backend): its change events hold exactly the `booking_changes` rows it wrote, and it says
 * each booking it marks missing and each it finds again.
 */
import { afterEach, expect, it } from "vitest";
import { servedEvent } from "../src/events/message.js";
import { runBackfill } from "../src/sync/backfill/backfill.js";
import { runReconcile } from "../src/sync/list/reconcile.js";
import { type MirrorHarness, mirrorHarness } from "./support/mirror-harness.js";
import { describeBackends } from "./support/postgres.js";

let h: MirrorHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

interface Served {
  type: string;
  bookingId: string;
  changes?: Array<{ field: string; old: string | null; new: string | null }>;
}

describeBackends("events of a reconcile", (backend) => {
  /** The events after `after`, as served, with the run each was recorded by. */
  async function eventsAfter(m: MirrorHarness, after: number) {
    const rows = await m.mirror.events.readEvents(after, 100_000);
    return rows.map((e) => JSON.parse(servedEvent(e)) as Served);
  }
  const lastReconcile = async (m: MirrorHarness) =>
    Number(
      (await m.query<{ id: number }>("SELECT max(id) AS id FROM sync_runs WHERE kind = 'reconcile'"))[0]?.id,
    );

  it("equal its booking_changes rows, plus one booking.missing a booking marked and one booking.back a booking found again", async () => {
    h = await mirrorHarness(backend, { bookings: 300 });
    expect((await runBackfill(h.deps(), { concurrency: 4 })).status).toBe("success");
    for (const i of [10, 20, 30]) h.sim.update(i);
    h.sim.remove(40);
    h.sim.dataset.hide([50]);
    const before = await h.mirror.events.lastEventId();

    const pass = await runReconcile(h.deps(), { since: null });
    expect(pass).toMatchObject({ status: "success", updated: 3, missing: 2 });
    const run = await lastReconcile(h);
    const events = await eventsAfter(h, before);
    const changes = await h.query<{
      booking_id: string;
      field: string;
      old_value: string;
      new_value: string;
    }>("SELECT booking_id, field, old_value, new_value FROM booking_changes WHERE run_id = $1 ORDER BY id", [
      run,
    ]);
    expect(changes.length).toBeGreaterThan(0);
    const changed = events.filter((e) => e.type === "booking.changed");
    expect(
      changed.flatMap((e) => (e.changes ?? []).map((c) => [e.bookingId, c.field, c.old, c.new])),
    ).toEqual(changes.map((c) => [c.booking_id, c.field, c.old_value, c.new_value]));
    const marked = await h.query<{ id: string }>(
      "SELECT id FROM bookings WHERE missing_since IS NOT NULL ORDER BY id",
    );
    const missing = events.filter((e) => e.type === "booking.missing").map((e) => e.bookingId);
    expect(missing.sort()).toEqual(marked.map((r) => r.id));
    expect(events.every((e) => ["booking.changed", "booking.missing"].includes(e.type))).toBe(true);

    const hidden = h.sim.dataset.full(50)._id;
    h.sim.release([50]);
    const after = await h.mirror.events.lastEventId();
    expect(await runReconcile(h.deps(), { since: null })).toMatchObject({ status: "success", missing: 0 });
    expect((await eventsAfter(h, after)).map((e) => [e.type, e.bookingId])).toEqual([
      ["booking.back", hidden],
    ]);
  });
});
