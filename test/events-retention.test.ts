/**
 * Retention where no daemon runs: `booking-sync sync` from cron applies it too, so the stream does
 * not grow for ever beside a mirror nobody runs `run` on. The build as a subprocess (`npm run build`).
 */
import Database from "better-sqlite3";
import { afterEach, expect, it } from "vitest";
import { type Harness, harness, runCli } from "./support/harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const count = (file: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare("SELECT count(*) AS n FROM booking_events").get() as { n: number }).n;
  } finally {
    db.close();
  }
};

it("a sync keeps the events inside EVENTS_RETENTION_DAYS and prunes the older ones", async () => {
  h = await harness({ bookings: 30 });
  expect((await runCli(["sync", "--no-details"], h.env())).code).toBe(0);
  expect(count(h.dbPath)).toBe(30);
  h.sim.insert(2);
  expect((await runCli(["sync", "--no-details"], h.env())).code).toBe(0);
  expect(count(h.dbPath)).toBe(32);
  // Retention 0: nothing new is recorded, and everything recorded before now is past it.
  h.sim.insert(1);
  const pruned = await runCli(["sync", "--no-details"], h.env({ EVENTS_RETENTION_DAYS: "0" }));
  expect(pruned.code).toBe(0);
  expect(count(h.dbPath)).toBe(0);
});

it("tells a reader behind retention which events it missed, on stderr, keeping stdout the stream", async () => {
  h = await harness({ bookings: 20 });
  expect((await runCli(["sync", "--no-details"], h.env())).code).toBe(0);
  const db = new Database(h.dbPath);
  db.prepare("UPDATE booking_events SET at = '2020-01-01T00:00:00.000Z' WHERE id <= 8").run();
  db.close();
  expect((await runCli(["sync", "--no-details"], h.env())).code).toBe(0);
  expect(count(h.dbPath)).toBe(12);
  const behind = await runCli(["events", "--after", "3"], h.env());
  expect(behind.code).toBe(0);
  expect(behind.stderr).toContain("the events after 3 up to 8 were pruned");
  expect(
    behind.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).id),
  ).toEqual(Array.from({ length: 12 }, (_, i) => i + 9));
  const current = await runCli(["events", "--after", "8"], h.env());
  expect(current.stderr).not.toContain("pruned");
});
