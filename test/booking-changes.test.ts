/**
 * `booking_changes` through the path users run: a real sync into a real file against the
 * simulator. A booking paid after it was first mirrored leaves one row per changed field, with the
 * run that saw it; first sight and an unchanged re-read leave none.
 */
import { afterEach, describe, expect, it } from "vitest";
import { analyst, type Harness, harness } from "./support/harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

interface Change {
  booking_id: string;
  field: string;
  old_value: string | null;
  new_value: string | null;
  observed_at: string;
  run_id: number | null;
}

function changes(dbPath: string): Change[] {
  const db = analyst(dbPath);
  try {
    return db.prepare("SELECT * FROM booking_changes ORDER BY id").all() as Change[];
  } finally {
    db.close();
  }
}

describe("booking_changes", () => {
  it("records a payment made after first sight, with the run that saw it, and nothing for a re-read", async () => {
    h = await harness({ bookings: 300 });
    expect((await h.sync()).status).toBe("success");
    expect(changes(h.dbPath)).toEqual([]);

    // The newest booking (within the next sync's lookback) flips `paid` and moves its states.
    const before = h.sim.allSummaries()[0];
    if (!before) throw new Error("no bookings");
    h.sim.update(299);
    const after = h.sim.allSummaries()[0];
    expect(after?._id).toBe(before._id);
    const second = await h.sync();
    expect(second.status).toBe("success");
    const recorded = changes(h.dbPath);
    const flag = (v: boolean) => (v ? "1" : "0");
    expect(recorded.find((c) => c.field === "paid")).toMatchObject({
      booking_id: before._id,
      old_value: flag(before.paid),
      new_value: flag(after?.paid ?? false),
      run_id: second.runId,
    });
    expect(recorded.find((c) => c.field === "booking_state")).toMatchObject({
      old_value: String(before.bookingState),
      new_value: String(after?.bookingState),
    });
    expect(recorded.every((c) => c.booking_id === before._id && c.observed_at >= second.startedAt)).toBe(
      true,
    );
    expect(recorded.every((c) => c.old_value !== c.new_value)).toBe(true);

    expect((await h.sync()).status).toBe("success");
    expect(changes(h.dbPath)).toEqual(recorded);
  });
});
