/**
 * Personal subtrees of unexpected shapes on both backends: records that are still bookings (a usable
 * `_id`, bad fields left out of the typed columns) and records quarantined alone are saved through
 * the mirror as the CLI opens it, and no stored text, JSON or column holds a person they carried.
 */
import { afterEach, expect, it } from "vitest";
import { personalDataPolicy } from "../src/store/personal-data.js";
import type { Reject } from "../src/sync/ports.js";
import { mirrorSql, openBackendMirror } from "./support/mirror-harness.js";
import { ODD_SHAPES, person, plant, planted } from "./support/odd-personal-shapes.js";
import { describeBackends } from "./support/postgres.js";
import { feedBatch, fullRaw, listBatch } from "./support/store-fixtures.js";

const KEY = "odd-shapes-store-key-0123456789";
const T = "2025-03-01T00:00:00.000Z";

/** Record `i` with shape `i`: a booking (its typed columns read only `_id`), or quarantined alone. */
function odd(i: number, booking: boolean): Reject {
  const raw = plant(fullRaw(i), i);
  return {
    ok: false,
    id: booking ? (raw._id as string) : null,
    createdAt: null,
    reason: `${ODD_SHAPES[i]?.key}: not an object`,
    raw,
    ...(booking ? { booking: { _id: raw._id } } : {}),
  };
}

describeBackends("SYNC_PERSONAL_DATA with odd shapes", (backend) => {
  const closers: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  it.each(["hash", "drop"] as const)("%s keeps no person in bookings or rejected_records", async (mode) => {
    const location = await backend.url();
    const personalData = personalDataPolicy(mode, mode === "hash" ? KEY : undefined);
    const mirror = await openBackendMirror(backend.kind, location, { personalData });
    const shapes = ODD_SHAPES.map((_, i) => i);
    await mirror.save(feedBatch([], T, { rejects: shapes.map((i) => odd(i, true)) }));
    await mirror.save(listBatch([], T, { rejects: shapes.map((i) => odd(i, true)) }));
    await mirror.save(feedBatch([], T, { rejects: shapes.map((i) => odd(i, false)) }));
    const stray = person(40);
    await mirror.save(feedBatch([], T, { rejects: [{ ...odd(0, false), raw: [stray.name, stray.phone] }] }));
    await mirror.close();

    const sql = mirrorSql(backend.kind, location);
    closers.push(() => sql.close());
    const text = (rows: Array<Record<string, unknown>>) => JSON.stringify(rows);
    const bookings = await sql.query(
      "SELECT id, CAST(summary_json AS TEXT) AS s, CAST(detail_json AS TEXT) AS d, sender_name, sender_phone, " +
        "sender_email, receiver_name, receiver_phone, receiver_email FROM bookings",
    );
    const rejects = await sql.query(
      "SELECT booking_id, reason, CAST(raw_json AS TEXT) AS raw FROM rejected_records",
    );
    // Each record was stored as a booking (summary and details) and quarantined: something to leak.
    expect(bookings.map((b) => b.id).sort()).toEqual(shapes.map((i) => fullRaw(i)._id).sort());
    for (const b of bookings) expect([b.s, b.d].includes(null), String(b.id)).toBe(false);
    expect(rejects.length).toBeGreaterThan(shapes.length);

    const stored = text(bookings) + text(rejects);
    for (const value of [...shapes.flatMap(planted), stray.name, stray.phone])
      expect(stored).not.toContain(value);
    if (mode === "drop") expect(stored).not.toContain("sha256:");
    else expect(stored).toContain("hmac-sha256:");
  });
});
