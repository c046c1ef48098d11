/**
 * The store port's contract (src/sync/ports.ts), once per backend: the same calls, each awaited,
 * checked through SQL on another connection, which sees only what the mirror committed.
 */
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, expect, it } from "vitest";
import { systemClock } from "../src/app.js";
import type { BatchRule } from "../src/store/batch.js";
import type { Mirror } from "../src/store/store.js";
import type { BookingType, Reject, RunFinish, WalkProgress } from "../src/sync/ports.js";
import { memoryLogger } from "./support/fakes.js";
import {
  mirrorDatabase,
  mirrorSql,
  openBackendMirror,
  type Query,
  runScript,
} from "./support/mirror-harness.js";
import { describeBackends } from "./support/postgres.js";
import {
  at,
  feedBatch,
  fullRaw,
  listBatch,
  okFull,
  okSummary,
  summaryRaw,
} from "./support/store-fixtures.js";

const T1 = "2025-02-01T00:00:00.000Z";
const T2 = "2025-02-02T00:00:00.000Z";
const T3 = "2025-02-03T00:00:00.000Z";
/** Nothing commits by count or by age: only flush, another write, or close. */
const HELD: BatchRule = { pages: 1_000, ms: 3_600_000 };

const id = (i: number) => `bk${String(i).padStart(6, "0")}`;

/** The walk's progress after `pages` pages, as the feed saves it. */
const walk = (pages: number): WalkProgress => ({
  startedAt: T1,
  floor: null,
  upTo: null,
  anchor: null,
  fallback: null,
  top: null,
  pages,
});

/** Page `i` of a walk: booking `i`, and progress saying `i` pages were read. */
const walkPage = (i: number, bookingType?: BookingType) =>
  feedBatch([okSummary(summaryRaw(i))], T1, { walk: walk(i), bookingType });

const reject = (bookingId: string | null, raw: unknown, reason = "paid: expected boolean"): Reject => ({
  ok: false,
  id: bookingId,
  createdAt: null,
  reason,
  raw,
});

/** A call's outcome as a promise, whether the backend answers at once (and throws) or later. */
const settle = <T>(call: () => T | Promise<T>): Promise<T> => (async () => call())();

/** An error's message with its causes', to match whichever layer names the database's refusal. */
const messages = (err: unknown): string =>
  err instanceof Error ? [err.message, messages(err.cause)].filter(Boolean).join(": ") : "";

/** What another connection sees: the bookings, and the `feed` stream's pages read. */
async function seen(query: Query): Promise<{ ids: string[]; pages: number | null }> {
  const ids = (await query<{ id: string }>("SELECT id FROM bookings ORDER BY id")).map((r) => r.id);
  const [state] = await query<{ p: string | null }>(
    "SELECT progress_json AS p FROM sync_state WHERE stream = 'feed'",
  );
  return { ids, pages: state?.p ? (JSON.parse(state.p) as WalkProgress).pages : null };
}

const finished = (over: Partial<RunFinish> = {}): RunFinish => ({
  status: "success",
  finishedAt: T2,
  checkpointAfter: null,
  error: null,
  pages: 0,
  requests: 0,
  retries: 0,
  inserted: 0,
  updated: 0,
  unchanged: 0,
  rejected: 0,
  ...over,
});

/** A source file as a module URL, for a script run in another process. */
const source = (file: string) => JSON.stringify(pathToFileURL(path.resolve(file)).href);

describeBackends("mirror contract", (backend) => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  /** Runs `close` once, now or after the test. */
  const closing = (close: () => Promise<void> | void) => {
    let done: Promise<void> | undefined;
    const once = () => {
      done ??= (async () => close())();
      return done;
    };
    closers.push(once);
    return once;
  };

  /** The mirror at `location` and SQL beside it, both closed after the test. */
  async function attach(location: string, batch: BatchRule = HELD) {
    const mirror = await openBackendMirror(backend.kind, location, { batch });
    const closeMirror = closing(() => mirror.close());
    const sql = mirrorSql(backend.kind, location);
    closing(() => sql.close());
    return { mirror, location, query: sql.query, closeMirror };
  }
  const fresh = async (batch: BatchRule = HELD) => attach(await backend.url(), batch);

  const startRun = (mirror: Mirror, kind: "sync" | "reconcile" | "backfill", startedAt = T1) =>
    mirror.startRun({ kind, stream: kind === "reconcile" ? null : kind, startedAt, checkpointBefore: null });

  it("counts a feed page's new, changed, unchanged and rejected records; of one _id twice, the last wins", async () => {
    const { mirror, query } = await fresh();
    const raws = [1, 2, 3].map((i) => summaryRaw(i));
    expect(await mirror.save(feedBatch(raws.map(okSummary), T1))).toEqual({
      inserted: 3,
      updated: 0,
      unchanged: 0,
      rejected: 0,
    });
    const changed = summaryRaw(2, { paid: true, bookingState: 3 });
    const page = [raws[0], changed, raws[2]].map((r) => okSummary(r ?? {}));
    const rejects = [reject("x1", { _id: "x1" })];
    expect(await mirror.save(feedBatch(page, T2, { rejects }))).toEqual({
      inserted: 0,
      updated: 1,
      unchanged: 2,
      rejected: 1,
    });
    const twice = [summaryRaw(4), summaryRaw(4, { paid: true }), summaryRaw(4, { paid: true })];
    expect(await mirror.save(feedBatch(twice.map(okSummary), T2))).toEqual({
      inserted: 1,
      updated: 1,
      unchanged: 1,
      rejected: 0,
    });
    await mirror.flush();
    const rows = await query(
      "SELECT id, paid, booking_state, first_seen_at, summary_synced_at FROM bookings ORDER BY id",
    );
    const row = (i: number, paid: number, state: number, firstSeen: string, synced: string) => ({
      id: id(i),
      paid,
      booking_state: state,
      first_seen_at: firstSeen,
      summary_synced_at: synced,
    });
    expect(rows).toEqual([
      row(1, 0, 1, T1, T1),
      row(2, 1, 3, T1, T2),
      row(3, 0, 1, T1, T1),
      row(4, 1, 1, T2, T2),
    ]);
    const [stored] = await query<{ json: string }>(
      "SELECT summary_json AS json FROM bookings WHERE id = $1",
      [id(2)],
    );
    expect(JSON.parse(stored?.json ?? "null")).toEqual(changed);
    expect(await mirror.countBookings()).toBe(4);
  });

  it("of one _id twice in a list page, the last wins, with its packages and items once", async () => {
    const { mirror, query } = await fresh();
    const first = fullRaw(5);
    const last = fullRaw(5, { paid: true, updatedAt: at(300) });
    expect(await mirror.save(listBatch([okFull(first), okFull(last)], T1))).toEqual({
      inserted: 1,
      updated: 1,
      unchanged: 0,
      rejected: 0,
    });
    await mirror.flush();
    expect(await query("SELECT paid, remote_updated_at, detail_json FROM bookings")).toEqual([
      { paid: 1, remote_updated_at: at(300), detail_json: JSON.stringify(last) },
    ]);
    const children = await query(
      `SELECT (SELECT count(*) FROM booking_packages) AS packages, (SELECT count(*) FROM booking_items) AS items`,
    );
    expect(children).toEqual([{ packages: 2, items: 3 }]);
  });

  it("commits rows with their progress, a whole batch at a time, and what is left at close", async () => {
    const m = await fresh({ pages: 3, ms: 3_600_000 });
    await m.mirror.save(walkPage(1));
    await m.mirror.save(walkPage(2));
    expect(await seen(m.query)).toEqual({ ids: [], pages: null });
    await m.mirror.save(walkPage(3));
    expect(await seen(m.query)).toEqual({ ids: [1, 2, 3].map(id), pages: 3 });
    await m.mirror.save(walkPage(4));
    await m.mirror.save(walkPage(5));
    expect(await seen(m.query)).toEqual({ ids: [1, 2, 3].map(id), pages: 3 });
    await m.closeMirror(); // without a flush
    expect(await seen(m.query)).toEqual({ ids: [1, 2, 3, 4, 5].map(id), pages: 5 });
    const reopened = await attach(m.location);
    expect(await reopened.mirror.readStream("feed")).toEqual({
      stream: "feed",
      checkpoint: null,
      walk: walk(5),
    });
    expect(await reopened.mirror.countBookings()).toBe(5);
  });

  it("a writer killed mid-batch leaves its last commit: every page there with its progress, none after", async () => {
    const location = await backend.url();
    // Saves 7 pages, 3 to a batch, then dies before the seventh commits.
    const script = `
      import { openMirror } from ${source("src/store/open-mirror.ts")};
      import { feedBatch, okSummary, summaryRaw } from ${source("test/support/store-fixtures.ts")};
      const mirror = await openMirror(${JSON.stringify(mirrorDatabase(backend.kind, location))},
        { batch: { pages: 3, ms: 3600000 } });
      for (let i = 1; i <= 7; i++) {
        const walk = ${JSON.stringify(walk(0))};
        await mirror.save(feedBatch([okSummary(summaryRaw(i))], "${T1}", { walk: { ...walk, pages: i } }));
      }
      process.kill(process.pid, "SIGKILL");`;
    const child = await runScript(script);
    expect(child.signal, child.stderr).toBe("SIGKILL");
    const { query } = await attach(location);
    expect(await seen(query)).toEqual({ ids: [1, 2, 3, 4, 5, 6].map(id), pages: 6 });
  });

  it("a page the database refuses is never stored; the run's pages after a loss wait for the next run", async () => {
    const { mirror, query } = await fresh();
    await startRun(mirror, "sync");
    await mirror.save(walkPage(1));
    // A booking type outside the schema's CHECK (IN or LC): the database refuses the page.
    const refusal = await settle(() => mirror.save(walkPage(2, "XX" as BookingType))).catch((e) => e);
    expect(messages(refusal)).toMatch(/bookings_booking_type_check/);
    // The batch's earlier pages are lost with it (PostgreSQL aborts a transaction at a failed
    // statement; SQLite's batch rolls it back), so no page is taken until the next run, whose
    // progress would count them.
    await expect(settle(() => mirror.save(walkPage(3)))).rejects.toThrow(/not committed/);
    await expect(settle(() => mirror.flush())).rejects.toThrow(/not committed/);
    expect(await seen(query)).toEqual({ ids: [], pages: null });
    await startRun(mirror, "sync", T2);
    await mirror.save(walkPage(3));
    await mirror.flush();
    expect(await seen(query)).toEqual({ ids: [id(3)], pages: 3 });
  });

  it("reads see the store's own saved pages at once; another connection only once they are flushed", async () => {
    const { mirror, query } = await fresh();
    await mirror.save(walkPage(1));
    expect(await mirror.readStream("feed")).toEqual({ stream: "feed", checkpoint: null, walk: walk(1) });
    expect(await mirror.readProgress<WalkProgress>("feed")).toEqual({ checkpoint: null, progress: walk(1) });
    expect(await mirror.countBookings()).toBe(1);
    expect(await mirror.countAccounted()).toBe(1);
    expect(await mirror.absentIds([id(1), id(2)])).toEqual([id(2)]);
    expect(await mirror.bookingsNeedingDetails(10, T1)).toEqual([{ id: id(1), createdAt: at(1), misses: 0 }]);
    expect(await seen(query)).toEqual({ ids: [], pages: null });
    await mirror.flush();
    expect(await seen(query)).toEqual({ ids: [id(1)], pages: 1 });
  });

  it("never moves a checkpoint backwards, and keeps each stream's apart", async () => {
    const { mirror, query } = await fresh();
    const checkpoint = async () => (await mirror.readStream("feed")).checkpoint;
    await mirror.save(feedBatch([okSummary(summaryRaw(9))], T1, { walk: walk(3) }));
    expect(await mirror.readStream("feed")).toEqual({ stream: "feed", checkpoint: null, walk: walk(3) });
    await mirror.save(feedBatch([], T1, { walk: null, checkpoint: at(9) }));
    expect(await mirror.readStream("feed")).toEqual({ stream: "feed", checkpoint: at(9), walk: null });
    await mirror.save(feedBatch([], T2, { walk: null, checkpoint: at(4) }));
    expect(await checkpoint()).toBe(at(9));
    await mirror.save(feedBatch([], T2, { walk: null }));
    expect(await checkpoint()).toBe(at(9));
    await mirror.save(feedBatch([], T2, { walk: null, checkpoint: at(12) }));
    expect(await checkpoint()).toBe(at(12));
    expect(await mirror.readStream("feed:IN")).toEqual({ stream: "feed:IN", checkpoint: null, walk: null });
    await mirror.flush();
    expect(await query("SELECT stream, checkpoint, progress_json FROM sync_state")).toEqual([
      { stream: "feed", checkpoint: at(12), progress_json: null },
    ]);
  });

  it("a list page older than the stored one (by updatedAt) does not overwrite it; a newer one does", async () => {
    const { mirror, query } = await fresh();
    const details = (raw: Record<string, unknown>, syncedAt: string) =>
      mirror.save(listBatch([okFull(raw)], syncedAt));
    const stored = async () => {
      await mirror.flush();
      return (
        await query("SELECT paid, remote_updated_at, detail_synced_at FROM bookings WHERE id = $1", [id(1)])
      )[0];
    };
    await details(fullRaw(1, { updatedAt: at(200), paid: true }), T1);
    const older = await details(fullRaw(1, { updatedAt: at(150), paid: false }), T2);
    expect(older).toEqual({ inserted: 0, updated: 0, unchanged: 1, rejected: 0 });
    expect(await stored()).toEqual({ paid: 1, remote_updated_at: at(200), detail_synced_at: T1 });
    expect((await details(fullRaw(1, { updatedAt: at(200), paid: true }), T2)).unchanged).toBe(1);
    const newer = await details(fullRaw(1, { updatedAt: at(300), paid: false }), T3);
    expect(newer).toMatchObject({ updated: 1 });
    expect(await stored()).toEqual({ paid: 0, remote_updated_at: at(300), detail_synced_at: T3 });
  });

  it("a list page, or a feed page, serving a booking marked missing clears the mark", async () => {
    const { mirror, query } = await fresh();
    await mirror.save(
      feedBatch(
        [1, 2, 3].map((i) => okSummary(summaryRaw(i))),
        T1,
      ),
    );
    await mirror.save(listBatch([okFull(fullRaw(1)), okFull(fullRaw(2))], T1));
    const runId = await startRun(mirror, "reconcile", T2);
    await mirror.save(listBatch([okFull(fullRaw(1))], T2, { listedBy: runId }));
    expect(await mirror.markUnlisted({ runId, startedAt: T2, at: T3 })).toBe(2);
    const marks = async () => {
      await mirror.flush();
      return (await query<{ m: string | null }>("SELECT missing_since AS m FROM bookings ORDER BY id")).map(
        (r) => r.m,
      );
    };
    expect(await marks()).toEqual([null, T3, T3]);
    expect(await mirror.countBookings({ excludeMissing: true })).toBe(1);
    expect(await mirror.countAccounted()).toBe(1);
    expect(await mirror.absentIds([id(3), id(1), id(2)])).toEqual([id(3), id(2)]);
    expect(await mirror.save(listBatch([okFull(fullRaw(2))], T3))).toMatchObject({ unchanged: 1 });
    expect(await marks()).toEqual([null, null, T3]);
    expect(await mirror.save(feedBatch([okSummary(summaryRaw(3))], T3))).toMatchObject({ unchanged: 1 });
    expect(await marks()).toEqual([null, null, null]);
    expect(await mirror.countBookings({ excludeMissing: true })).toBe(3);
  });

  it("storedBefore names the ids first stored before a time, marked missing or not, served again or not", async () => {
    const { mirror } = await fresh();
    await mirror.save(
      feedBatch(
        [1, 2].map((i) => okSummary(summaryRaw(i))),
        T1,
      ),
    );
    // Served again later (a feed and a list page): still first stored at T1.
    await mirror.save(
      feedBatch(
        [2, 3].map((i) => okSummary(summaryRaw(i))),
        T2,
      ),
    );
    await mirror.save(listBatch([okFull(fullRaw(1)), okFull(fullRaw(4))], T3));
    const runId = await startRun(mirror, "reconcile", T3);
    await mirror.save(listBatch([okFull(fullRaw(4))], T3, { listedBy: runId }));
    expect(await mirror.markUnlisted({ runId, startedAt: T3, at: T3 })).toBeGreaterThan(0);
    expect(await mirror.storedBefore([id(4), id(3), id(9), id(2), id(1)], T2)).toEqual([id(2), id(1)]);
    expect(await mirror.storedBefore([id(1), id(2), id(3), id(4)], T3)).toEqual([id(1), id(2), id(3)]);
    expect(await mirror.storedBefore([id(1)], T1)).toEqual([]);
    expect(await mirror.storedBefore([], T3)).toEqual([]);
  });

  it("holdsBetween finds a booking created strictly between two times, of a type when given, not one marked missing", async () => {
    const { mirror } = await fresh();
    await mirror.save(
      listBatch([okFull(fullRaw(1)), okFull(fullRaw(3, { type: "LC" })), okFull(fullRaw(5))], T1),
    );
    expect(await mirror.holdsBetween(at(0), at(2))).toBe(true);
    expect(await mirror.holdsBetween(at(1), at(3))).toBe(false); // strictly
    expect(await mirror.holdsBetween(at(1), at(5))).toBe(true);
    expect(await mirror.holdsBetween(at(1), at(5), "IN")).toBe(false);
    expect(await mirror.holdsBetween(at(1), at(5), "LC")).toBe(true);
    expect(await mirror.holdsBetween(at(1), at(5), undefined, [id(3)])).toBe(false);
    expect(await mirror.holdsBetween(at(0), at(5), undefined, [id(3)])).toBe(true);
    expect(await mirror.holdsBetween(at(4), null)).toBe(true);
    expect(await mirror.holdsBetween(at(5), null)).toBe(false);
    // Marked missing, a booking the source no longer serves holds no place.
    const runId = await startRun(mirror, "reconcile", T2);
    await mirror.save(
      listBatch([okFull(fullRaw(3, { type: "LC" })), okFull(fullRaw(5))], T2, { listedBy: runId }),
    );
    expect(await mirror.markUnlisted({ runId, startedAt: T2, at: T2 })).toBe(1);
    expect(await mirror.holdsBetween(at(0), at(2))).toBe(false);
  });

  it("markUnlisted and unlistedTimes judge only what the pass covered and knew before it began", async () => {
    const { mirror, query } = await fresh();
    await mirror.save(
      feedBatch(
        [1, 2, 3, 4].map((i) => okSummary(summaryRaw(i))),
        T1,
      ),
    );
    // Created after the pass began (a server clock ahead of ours): not judged.
    await mirror.save(feedBatch([okSummary(summaryRaw(5, { createdAt: T3 }))], T1));
    const runId = await startRun(mirror, "reconcile", T2);
    // First seen after the pass began: not judged.
    await mirror.save(feedBatch([okSummary(summaryRaw(6))], T3));
    const whole = { runId, startedAt: T2, at: T3 };
    const web = { ...whole, sourcePlatform: "web", since: at(2) };
    expect(await mirror.unlistedTimes(whole, 10)).toEqual([at(4), at(3), at(2), at(1)]);
    expect(await mirror.unlistedTimes(whole, 2)).toEqual([at(4), at(3)]);
    expect(await mirror.unlistedTimes(web, 10)).toEqual([at(3)]);
    expect(await mirror.markUnlisted(web)).toBe(1);
    expect(await mirror.unlistedTimes(web, 10)).toEqual([]);
    expect(await mirror.countBookings({ sourcePlatform: "mobile", excludeMissing: true })).toBe(3);
    // Listed by the run: not judged either.
    await mirror.save(listBatch([okFull(fullRaw(1))], T2, { listedBy: runId }));
    expect(await mirror.unlistedTimes(whole, 10)).toEqual([at(4), at(2)]);
    expect(await mirror.markUnlisted(whole)).toBe(2);
    expect(await mirror.markUnlisted(whole)).toBe(0);
    await mirror.flush();
    const marked = await query<{ id: string }>(
      "SELECT id FROM bookings WHERE missing_since = $1 ORDER BY id",
      [T3],
    );
    expect(marked.map((r) => r.id)).toEqual([id(2), id(3), id(4)]);
  });

  it("stores a keyed record that steers nothing as a booking with its problems, keeping a good time it had", async () => {
    const { mirror, query } = await fresh();
    const kept = (raw: Record<string, unknown>, reason: string) => ({
      ...reject(raw._id as string, raw, reason),
      booking: { ...raw, createdAt: undefined },
    });
    const badTime = { ...summaryRaw(7), createdAt: "2026-02-30T10:00:00.000Z" };
    const first = await mirror.save(
      feedBatch([okSummary(summaryRaw(1))], T1, {
        rejects: [
          kept(badTime, "createdAt is not a real calendar date and time"),
          reject(null, { no: "id" }),
        ],
      }),
    );
    expect(first).toEqual({ inserted: 2, updated: 0, unchanged: 0, rejected: 1 });
    // Booking 1 is served again with a bad time: its good one stays, the problem is noted.
    await mirror.save(
      feedBatch([], T2, {
        rejects: [kept({ ...summaryRaw(1), createdAt: "yesterday" }, "createdAt is not an ISO 8601 time")],
      }),
    );
    await mirror.flush();
    expect(await query("SELECT id, created_at, summary_problems FROM bookings ORDER BY id")).toEqual([
      { id: id(1), created_at: at(1), summary_problems: "createdAt is not an ISO 8601 time" },
      { id: id(7), created_at: null, summary_problems: "createdAt is not a real calendar date and time" },
    ]);
    expect(await query("SELECT booking_id, reason FROM rejected_records")).toEqual([
      { booking_id: null, reason: "paid: expected boolean" },
    ]);
    // Served clean again: the note clears.
    await mirror.save(feedBatch([okSummary(summaryRaw(1))], T3));
    await mirror.flush();
    expect(await query(`SELECT summary_problems FROM bookings WHERE id = '${id(1)}'`)).toEqual([
      { summary_problems: null },
    ]);
  });

  it("records a value the source stopped serving as a change to NULL, and not one that failed its check", async () => {
    const { mirror, query } = await fresh();
    await mirror.save(listBatch([okFull(fullRaw(1)), okFull(fullRaw(2))], T1));
    const later = at(400);
    const cleared = okFull(fullRaw(1, { carrier: null, updatedAt: later }));
    const good = okFull(fullRaw(2, { updatedAt: later }));
    const failed = {
      ...good,
      raw: { ...(good.raw as object), carrier: 7 },
      record: { ...good.record, carrier: undefined },
      problems: ["carrier: expected string"],
    };
    await mirror.save(listBatch([cleared, failed], T2));
    await mirror.flush();
    const rows = await query<{ booking_id: string; field: string; new_value: string | null }>(
      "SELECT booking_id, field, new_value FROM booking_changes ORDER BY id",
    );
    expect(rows).toEqual([{ booking_id: id(1), field: "carrier", new_value: null }]);
    expect(await query("SELECT carrier, detail_problems FROM bookings ORDER BY id")).toEqual([
      { carrier: null, detail_problems: null },
      { carrier: null, detail_problems: "carrier: expected string" },
    ]);
  });

  it("records in booking_changes a payment seen after first sight, with its run, and nothing for a re-read", async () => {
    const { mirror, query } = await fresh();
    await startRun(mirror, "sync", T1);
    await mirror.save(feedBatch([okSummary(summaryRaw(1))], T1));
    await mirror.save(listBatch([okFull(fullRaw(2))], T1));
    await mirror.flush();
    expect(await query("SELECT * FROM booking_changes")).toEqual([]);
    const second = await startRun(mirror, "sync", T2);
    await mirror.save(feedBatch([okSummary(summaryRaw(1, { paid: true }))], T2));
    await mirror.save(listBatch([okFull(fullRaw(2, { paid: true, updatedAt: at(300) }))], T2));
    const third = await startRun(mirror, "sync", T3);
    expect(await mirror.save(feedBatch([okSummary(summaryRaw(1, { paid: true }))], T3))).toMatchObject({
      unchanged: 1,
    });
    expect(
      await mirror.save(listBatch([okFull(fullRaw(2, { paid: true, updatedAt: at(300) }))], T3)),
    ).toMatchObject({ unchanged: 1 });
    await mirror.finishRun(third, finished());
    const change = (i: number) => ({
      booking_id: id(i),
      field: "paid",
      old_value: "0",
      new_value: "1",
      observed_at: T2,
      run_id: second,
    });
    expect(
      await query(
        "SELECT booking_id, field, old_value, new_value, observed_at, run_id FROM booking_changes ORDER BY id",
      ),
    ).toEqual([change(1), change(2)]);
  });

  it("quarantines each raw payload once, whichever page or endpoint serves it again", async () => {
    const { mirror, query } = await fresh();
    const bad = { _id: "x1", createdAt: "yesterday" };
    const x1 = reject("x1", bad, "createdAt: not an ISO 8601 timestamp");
    const other = reject(null, 42, "(record): expected object");
    expect(await mirror.save(feedBatch([], T1, { rejects: [x1, x1, other] }))).toMatchObject({
      rejected: 3,
    });
    await mirror.save(feedBatch([], T2, { rejects: [{ ...x1, raw: { ...bad } }] }));
    const runId = await startRun(mirror, "backfill", T2);
    const listed = reject("bad", { _id: "bad" });
    await mirror.save(listBatch([], T2, { rejects: [listed, x1], listedBy: runId }));
    await mirror.flush();
    expect(
      await query(
        "SELECT endpoint, booking_id, reason, raw_json, first_seen_at, run_id FROM rejected_records ORDER BY id",
      ),
    ).toEqual([
      {
        endpoint: "feed",
        booking_id: "x1",
        reason: x1.reason,
        raw_json: JSON.stringify(bad),
        first_seen_at: T1,
        run_id: null,
      },
      {
        endpoint: "feed",
        booking_id: null,
        reason: other.reason,
        raw_json: "42",
        first_seen_at: T1,
        run_id: null,
      },
      {
        endpoint: "list",
        booking_id: "bad",
        reason: listed.reason,
        raw_json: '{"_id":"bad"}',
        first_seen_at: T2,
        run_id: runId,
      },
    ]);
  });

  it("commits a list page's progress with its rows, and clears it with null", async () => {
    const { mirror, query } = await fresh();
    await mirror.save(
      listBatch([okFull(fullRaw(1))], T1, {
        progress: { stream: "backfill", value: { page: 7 }, checkpoint: at(1) },
      }),
    );
    expect(await mirror.readProgress<{ page: number }>("backfill")).toEqual({
      checkpoint: at(1),
      progress: { page: 7 },
    });
    await mirror.flush();
    expect(await query("SELECT checkpoint, progress_json FROM sync_state WHERE stream = 'backfill'")).toEqual(
      [{ checkpoint: at(1), progress_json: '{"page":7}' }],
    );
    await mirror.save(listBatch([], T2, { progress: { stream: "backfill", value: null } }));
    expect(await mirror.readProgress("backfill")).toEqual({ checkpoint: at(1), progress: null });
    expect(await mirror.readProgress("never")).toEqual({ checkpoint: null, progress: null });
  });

  it("a feed page keeps what the list gave: detail columns, sender email, booking type", async () => {
    const { mirror, query } = await fresh();
    await mirror.save(listBatch([okFull(fullRaw(1))], T1));
    expect(await mirror.save(feedBatch([okSummary(summaryRaw(1, { paid: true }))], T2))).toMatchObject({
      updated: 1,
    });
    await mirror.flush();
    const columns = `paid, summary_synced_at, sender_email, booking_type, detail_synced_at, sub_total,
      remote_updated_at, detail_json, (SELECT count(*) FROM booking_items) AS items`;
    expect(await query(`SELECT ${columns} FROM bookings`)).toEqual([
      {
        paid: 1,
        summary_synced_at: T2,
        sender_email: "chidi@example.com",
        booking_type: "IN",
        detail_synced_at: T1,
        sub_total: 14000,
        remote_updated_at: at(101),
        detail_json: JSON.stringify(fullRaw(1)),
        items: 3,
      },
    ]);
  });

  it("learns the booking type from a typed stream, even of an unchanged row, and keeps it", async () => {
    const { mirror, query } = await fresh();
    const typeOf = async () => {
      await mirror.flush();
      return (await query("SELECT booking_type, summary_synced_at FROM bookings"))[0];
    };
    await mirror.save(feedBatch([okSummary(summaryRaw(1))], T1));
    expect(await typeOf()).toEqual({ booking_type: null, summary_synced_at: T1 });
    const typed = await mirror.save(feedBatch([okSummary(summaryRaw(1))], T2, { bookingType: "LC" }));
    expect(typed.unchanged).toBe(1);
    expect(await typeOf()).toEqual({ booking_type: "LC", summary_synced_at: T1 });
    await mirror.save(feedBatch([okSummary(summaryRaw(1, { paid: true }))], T2));
    expect(await typeOf()).toEqual({ booking_type: "LC", summary_synced_at: T2 });
    expect(await mirror.countBookings({ bookingType: "LC" })).toBe(1);
    expect(await mirror.countBookings({ bookingType: "IN" })).toBe(0);
  });

  it("replaces a booking's packages and items when its details change", async () => {
    const { mirror, query } = await fresh();
    await mirror.save(listBatch([okFull(fullRaw(1)), okFull(fullRaw(2))], T1));
    const one = {
      packages: [{ actualWeight: 4, _id: "pk-new", items: [{ hsCode: "0901.21", _id: "it-new" }] }],
    };
    const changed = await mirror.save(
      listBatch([okFull(fullRaw(1, { packages: one, updatedAt: at(500) }))], T2),
    );
    expect(changed.updated).toBe(1);
    await mirror.flush();
    expect(
      await query(
        "SELECT booking_id, position, package_id, actual_weight FROM booking_packages ORDER BY booking_id, position",
      ),
    ).toEqual([
      { booking_id: id(1), position: 0, package_id: "pk-new", actual_weight: 4 },
      { booking_id: id(2), position: 0, package_id: "pk2-0", actual_weight: 1.5 },
      { booking_id: id(2), position: 1, package_id: "pk2-1", actual_weight: 1 },
    ]);
    const items = await query<{ item_id: string }>(
      "SELECT item_id FROM booking_items WHERE booking_id = $1 ORDER BY package_position, position",
      [id(1)],
    );
    expect(items.map((r) => r.item_id)).toEqual(["it-new"]);
  });

  // A value the API client's validation passes but the database refuses would fail its page on every
  // run: the walk resumes at that page, so the mirror would never get past it.
  it("stores strings holding NUL characters, and their JSON exactly as received", async () => {
    const { mirror, query } = await fresh();
    const summary = summaryRaw(1, { searchId: "S\u00001", receiver: { contact: { name: "Ada\u0000Obi" } } });
    const full = fullRaw(2, { branchName: "Ike\u0000ja" });
    const raw = { _id: "x\u0000", createdAt: "never" };
    await mirror.save(feedBatch([okSummary(summary)], T1, { rejects: [reject("x\u0000", raw)] }));
    await mirror.save(listBatch([okFull(full)], T1));
    await mirror.flush();
    const rows = await query<{ summary: string | null; detail: string | null }>(
      "SELECT summary_json AS summary, detail_json AS detail FROM bookings ORDER BY id",
    );
    expect(rows.map((r) => JSON.parse(r.summary ?? r.detail ?? "null"))).toEqual([summary, full]);
    const [quarantined] = await query<{ raw_json: string }>("SELECT raw_json FROM rejected_records");
    expect(JSON.parse(quarantined?.raw_json ?? "null")).toEqual(raw);
  });

  it("stores and finds kilobytes-long source platforms and HS codes (indexed columns)", async () => {
    const { mirror, query } = await fresh();
    // Incompressible, as a B-tree would otherwise store it compressed under its limit.
    const platform = noise(5000, 1);
    const hsCode = noise(5000, 2);
    const packages = { packages: [{ _id: "pk-long", items: [{ hsCode, _id: "it-long" }] }] };
    await mirror.save(listBatch([okFull(fullRaw(1, { sourcePlatform: platform, packages }))], T1));
    await mirror.flush();
    expect(await mirror.countBookings({ sourcePlatform: platform })).toBe(1);
    expect(await query("SELECT count(*) AS n FROM booking_items WHERE hs_code = $1", [hsCode])).toEqual([
      { n: 1 },
    ]);
  });

  it("stores integers past 32 bits in the integer columns", async () => {
    const { mirror, query } = await fresh();
    const big = { bookingState: 2 ** 31, orderState: -(2 ** 40), numberOfPackages: 2 ** 33 };
    await mirror.save(feedBatch([okSummary(summaryRaw(1, big))], T1));
    await mirror.save(listBatch([okFull(fullRaw(2, { ...big, customerAcceptanceState: 2 ** 35 }))], T1));
    await mirror.flush();
    const columns = "booking_state, order_state, number_of_packages, customer_acceptance_state";
    expect(await query(`SELECT ${columns} FROM bookings ORDER BY id`)).toEqual([
      {
        booking_state: 2 ** 31,
        order_state: -(2 ** 40),
        number_of_packages: 2 ** 33,
        customer_acceptance_state: null,
      },
      {
        booking_state: 2 ** 31,
        order_state: -(2 ** 40),
        number_of_packages: 2 ** 33,
        customer_acceptance_state: 2 ** 35,
      },
    ]);
  });

  it("answers the core's reads: the details queue, counts by filter, accounted and absent ids", async () => {
    const { mirror } = await fresh();
    await mirror.save(
      feedBatch(
        [1, 2, 3].map((i) => okSummary(summaryRaw(i))),
        T1,
      ),
    );
    await mirror.save(feedBatch([okSummary(summaryRaw(4))], T1, { bookingType: "LC" }));
    const queue = async () => (await mirror.bookingsNeedingDetails(10, T1)).map((b) => b.id);
    expect(await queue()).toEqual([4, 3, 2, 1].map(id));
    expect(await mirror.bookingsNeedingDetails(1, T1)).toEqual([{ id: id(4), createdAt: at(4), misses: 0 }]);
    await mirror.save(listBatch([okFull(fullRaw(1)), okFull(fullRaw(2))], T2));
    expect(await queue()).toEqual([4, 3].map(id));
    // A summary that changed after the details puts the booking back in the queue.
    await mirror.save(feedBatch([okSummary(summaryRaw(1, { bookingState: 4 }))], T3));
    expect(await queue()).toEqual([4, 3, 1].map(id));
    // Put off until T3 after a second miss; sought again at T3 with its misses counted.
    expect(await mirror.putOffDetails({ ids: [id(3), id(2)], misses: 2, seekAfter: T3 })).toBe(1);
    expect(await queue()).toEqual([4, 1].map(id));
    expect((await mirror.bookingsNeedingDetails(10, T3)).map((b) => `${b.id}:${b.misses}`)).toEqual([
      `${id(4)}:0`,
      `${id(3)}:2`,
      `${id(1)}:0`,
    ]);
    expect(await mirror.countBookings()).toBe(4);
    expect(await mirror.countBookings({ bookingType: "LC" })).toBe(1);
    expect(await mirror.countBookings({ bookingType: "IN" })).toBe(2);
    expect(await mirror.countBookings({ sourcePlatform: "web" })).toBe(2);
    expect(await mirror.countAccounted(at(3))).toBe(2);
    expect(await mirror.countAccounted(null)).toBe(4);
    expect(await mirror.absentIds([id(9), id(2), id(8)])).toEqual([id(9), id(8)]);
    expect(await mirror.absentIds([])).toEqual([]);
  });

  it("records runs: start, end, drift totals, the newest first", async () => {
    const { mirror, query } = await fresh();
    const a = await startRun(mirror, "sync", T1);
    const b = await startRun(mirror, "reconcile", T2);
    expect((await mirror.lastRun())?.status).toBe("running");
    const counters = {
      pages: 4,
      requests: 5,
      retries: 1,
      inserted: 10,
      updated: 2,
      unchanged: 3,
      rejected: 1,
    };
    await mirror.finishRun(a, finished({ ...counters, checkpointAfter: at(9) }));
    await mirror.recordDrift(b, 120, 118);
    expect(await mirror.lastRun("sync")).toMatchObject({
      id: a,
      kind: "sync",
      status: "success",
      bookingsNew: 10,
      bookingsUpdated: 2,
      bookingsUnchanged: 3,
      rejects: 1,
      retries: 1,
      checkpointAfter: at(9),
    });
    expect(await mirror.lastRun()).toMatchObject({ id: b, sourceTotal: 120, localTotal: 118 });
    expect((await mirror.recentRuns(5)).map((r) => r.id)).toEqual([b, a]);
    expect(await mirror.lastRun("details")).toBeUndefined();
    expect(
      await query("SELECT id, kind, status, pages, finished_at, source_total FROM sync_runs ORDER BY id"),
    ).toEqual([
      { id: a, kind: "sync", status: "success", pages: 4, finished_at: T2, source_total: null },
      { id: b, kind: "reconcile", status: "running", pages: 0, finished_at: null, source_total: 120 },
    ]);
  });

  it("lets one writer in: another process cannot take the lease while it is held, and can once released", async () => {
    const { mirror, location } = await fresh();
    const lease = await mirror.takeWriterLease({ clock: systemClock, logger: memoryLogger() });
    expect(lease.acquired).toBe(true);
    // Another process, since SQLite's lease takes over one held by this very pid as left by a restart.
    const script = `
      import { openMirror } from ${source("src/store/open-mirror.ts")};
      const quiet = { debug() {}, info() {}, warn() {}, error() {} };
      const mirror = await openMirror(${JSON.stringify(mirrorDatabase(backend.kind, location))});
      const lease = await mirror.takeWriterLease({ clock: { now: () => new Date() }, logger: quiet });
      console.log(JSON.stringify(lease.acquired ? { acquired: true } : { acquired: false, message: lease.message }));
      if (lease.acquired) await lease.release();
      await mirror.close();`;
    const tryLease = async () => {
      const child = await runScript(script);
      expect(child.code, child.stderr).toBe(0);
      return JSON.parse(child.stdout.trim().split("\n").at(-1) ?? "null");
    };
    expect(await tryLease()).toEqual({
      acquired: false,
      message: expect.stringMatching(/another booking-sync is writing to this database/),
    });
    if (lease.acquired) await lease.release();
    expect(await tryLease()).toEqual({ acquired: true });
  });
});

/** `length` printable characters from a seeded generator. */
function noise(length: number, seed: number): string {
  let x = seed;
  return Array.from({ length }, () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return String.fromCharCode(33 + (x % 90));
  }).join("");
}
