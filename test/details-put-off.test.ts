/**
 * Bookings the details pass reads past without finding (deleted at the source, most likely): put off,
 * each miss twice as long, so they do not send every pass down the list; found again once the list
 * shows them. The bundled simulator over real HTTP, a real SQLite file, the CLI as a subprocess.
 * Time passing is a put-off moved into the past, since the passes read the system clock.
 */
import { afterEach, describe, expect, it } from "vitest";
import { putOffMs } from "../src/sync/list/details.js";
import type { PartnerApi } from "../src/sync/ports.js";
import { type Harness, harness, runCli } from "./support/harness.js";
import { pageOf } from "./support/list-deps.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const value = (x: Harness, sql: string) => Object.values(x.store.db.prepare(sql).get() as object)[0];
const withoutDetails = (x: Harness) =>
  value(x, "SELECT count(*) FROM bookings WHERE detail_synced_at IS NULL");
/** Each put-off booking's misses and how long it is put off, in whole minutes from now. */
const putOff = (x: Harness) =>
  (
    x.store.db
      .prepare(
        "SELECT details_misses AS misses, details_seek_after AS at FROM bookings WHERE details_seek_after IS NOT NULL",
      )
      .all() as Array<{ misses: number; at: string }>
  ).map((r) => `${r.misses}:${Math.round((Date.parse(r.at) - Date.now()) / 60_000)}m`);
/** As if every put-off were over. */
const later = (x: Harness) =>
  x.store.db
    .prepare(
      "UPDATE bookings SET details_seek_after = '2000-01-01T00:00:00.000Z' WHERE details_seek_after IS NOT NULL",
    )
    .run();

/** Pages of list-bookings the details pass asked for (the drift check's pageSize=1 request left out). */
function detailPages(sim: Harness["sim"]): number[] {
  const pages: number[] = [];
  sim.events.on("request", (e) => {
    if (e.endpoint === "list" && !/pageSize=1(&|$)/.test(e.url)) pages.push(pageOf(e.url));
  });
  return pages;
}

it("puts off bookings deleted at the source before their details were read, each time twice as long", async () => {
  h = await harness({ bookings: 1500 });
  await h.sync();
  // Old bookings, near the list's end: a pass that sought them would walk 15 pages every run.
  for (const i of [100, 200, 201, 300]) h.sim.remove(i);
  const first = await runCli(["sync", "--details-max-pages", "100"], h.env({ LOG_LEVEL: "warn" }));
  expect(first.code, first.stderr).toBe(0);
  expect(first.stdout).toMatch(
    /details: 1496 of 1500 found, 1496 stored in 15 pages, 4 not on the list \(deleted at the source\?\)/,
  );
  expect(first.stderr).toContain("details: bookings not found on list-bookings");
  expect(putOff(h)).toEqual(["1:1m", "1:1m", "1:1m", "1:1m"]);
  expect(value(h, "SELECT count(*) FROM bookings WHERE missing_since IS NOT NULL")).toBe(0);
  const pages = detailPages(h.sim);
  for (let run = 0; run < 3; run++) expect((await h.sync({ details: true })).details?.end).toBe("idle");
  expect(pages).toEqual([]);
  const status = await runCli(["status"], h.env({ LOG_LEVEL: "warn" }));
  expect(status.stdout).toContain(
    "4 bookings without details (4 not found on the list: deleted at the source?)",
  );
  // Sought again once put off no longer: missed again, put off twice as long, then four times.
  later(h);
  expect((await h.sync({ details: true, detailsMaxPages: 100 })).details).toMatchObject({ missed: 4 });
  expect(putOff(h)).toEqual(["2:2m", "2:2m", "2:2m", "2:2m"]);
  later(h);
  await h.sync({ details: true, detailsMaxPages: 100 });
  expect(putOff(h)).toEqual(["3:4m", "3:4m", "3:4m", "3:4m"]);
});

it("finds a booking that slid past the walk, or that the list showed late, a minute later", async () => {
  // Booking 100 is committed late, far down the list. Just before the pass asks for page 3, one
  // booking above the walk goes and the late one arrives below it: the total stays, and the first
  // booking of page 3 slides onto page 2, already read.
  let shift = false;
  let hideNewest = false;
  const wrapApi = (api: PartnerApi): PartnerApi => ({
    ...api,
    async listBookings(query, signal) {
      if (shift && query.page === 3 && query.pageSize === 100) {
        shift = false;
        h?.sim.remove(590);
        h?.sim.release([100]);
      }
      const page = await api.listBookings(query, signal);
      return hideNewest && query.page === 1 ? { ...page, records: page.records.slice(1) } : page;
    },
  });
  h = await harness({ bookings: 600, hidden: [100], wrapApi });
  await h.sync();
  shift = true;
  expect((await h.sync({ details: true })).details).toMatchObject({ wanted: 599, found: 598, missed: 1 });
  later(h);
  expect((await h.sync({ details: true })).details).toMatchObject({ wanted: 1, found: 1, missed: 0 });
  expect(withoutDetails(h)).toBe(0);
  // The list a moment behind the feed.
  h.sim.insert(3);
  await h.sync();
  hideNewest = true;
  expect((await h.sync({ details: true })).details).toMatchObject({ wanted: 3, found: 2, missed: 1 });
  hideNewest = false;
  later(h);
  expect((await h.sync({ details: true })).details).toMatchObject({ wanted: 1, found: 1, missed: 0 });
  expect(withoutDetails(h)).toBe(0);
});

it("puts nothing off when the list answers empty", async () => {
  let empty = false;
  const wrapApi = (api: PartnerApi): PartnerApi => ({
    ...api,
    async listBookings(query, signal) {
      const page = await api.listBookings(query, signal);
      return empty && query.pageSize > 1 ? { ...page, records: [], total: 0 } : page;
    },
  });
  h = await harness({ bookings: 300, wrapApi });
  await h.sync();
  empty = true;
  expect((await h.sync({ details: true })).details).toMatchObject({ wanted: 300, found: 0, missed: 0 });
  expect(putOff(h)).toEqual([]);
  empty = false;
  expect((await h.sync({ details: true })).details).toMatchObject({ found: 300, missed: 0 });
});

it("puts a booking off at least twice as long as the walk that missed it took", async () => {
  h = await harness({ bookings: 1500 });
  await h.sync();
  h.sim.remove(100);
  expect((await h.sync({ details: true, detailsMaxPages: 5 })).details?.end).toBe("limit");
  // As if the walk's earlier runs had taken an hour.
  h.store.db
    .prepare(
      "UPDATE sync_state SET progress_json = json_set(progress_json, '$.walkedMs', ?) WHERE stream = 'details'",
    )
    .run(3_600_000);
  expect((await h.sync({ details: true, detailsMaxPages: 100 })).details).toMatchObject({
    resumed: true,
    missed: 1,
  });
  expect(putOff(h)).toEqual(["1:120m"]);
});

it("on a typed mirror, a booking the list shows as another type is not found there, and is put off", async () => {
  let retype: string | undefined;
  const wrapApi = (api: PartnerApi): PartnerApi => ({
    ...api,
    async listBookings(query, signal) {
      const page = await api.listBookings(query, signal);
      const records = page.records.map((r) =>
        r.ok && r.id === retype ? { ...r, record: { ...r.record, type: "LC" as const } } : r,
      );
      return { ...page, records };
    },
  });
  h = await harness({ bookings: 600, wrapApi });
  await h.sync({ bookingType: "IN", details: true });
  h.sim.insert(40);
  await h.sync({ bookingType: "IN" });
  const needing = h.store.bookingsNeedingDetails(100, new Date().toISOString());
  retype = needing[5]?.id;
  const pass = await h.sync({ bookingType: "IN", details: true });
  expect(pass.details).toMatchObject({ wanted: needing.length, found: needing.length - 1, missed: 1 });
  expect((await h.sync({ bookingType: "IN", details: true })).details?.end).toBe("idle");
});

it("a walk resumed where earlier pages gave no time puts nothing off: where it began is not known", async () => {
  // The first run's list pages carry no readable time, so the walk it leaves has no position in time.
  let undated = false;
  const wrapApi = (api: PartnerApi): PartnerApi => ({
    ...api,
    async listBookings(query, signal) {
      const page = await api.listBookings(query, signal);
      if (!undated || query.pageSize === 1) return page;
      return { ...page, records: page.records.map((r) => ({ ...r, createdAt: null }) as typeof r) };
    },
  });
  h = await harness({ bookings: 1500, wrapApi });
  await h.sync();
  h.sim.remove(100);
  undated = true;
  expect((await h.sync({ details: true, detailsMaxPages: 5 })).details?.end).toBe("limit");
  undated = false;
  const resumed = await h.sync({ details: true, detailsMaxPages: 100 });
  expect(resumed.details).toMatchObject({ resumed: true, found: 999, missed: 0 });
  expect(putOff(h)).toEqual([]);
  // The next walk starts from the top: it knows what it read, and puts the deleted booking off.
  expect((await h.sync({ details: true, detailsMaxPages: 100 })).details).toMatchObject({
    resumed: false,
    missed: 1,
  });
  expect(putOff(h)).toEqual(["1:1m"]);
});

describe("putOffMs", () => {
  const minute = 60_000;
  const week = 7 * 24 * 60 * minute;
  it.each([
    ["a first miss, after a short walk: a minute", 1, 2_000, minute],
    ["a second: two", 2, 0, 2 * minute],
    ["the eleventh: 1,024 minutes", 11, 0, 1024 * minute],
    ["the fifteenth and on: a week", 15, 0, week],
    ["after a walk of an hour: two hours", 1, 60 * minute, 120 * minute],
    ["after a walk of ten days: still a week", 1, 10 * 24 * 60 * minute, week],
  ])("%s", (_name, misses, walked, expected) => expect(putOffMs(misses, walked)).toBe(expected));
});
