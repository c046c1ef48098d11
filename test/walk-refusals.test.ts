/**
 * What the walk does when the source answers what it cannot make sense of: it fails the run with a
 * message naming what the source did, keeps the checkpoint, and the next run completes the mirror.
 */
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../src/store/index.js";
import type { FeedPage, FeedQuery } from "../src/sync/ports.js";
import { runSync } from "../src/sync/run-sync.js";
import { fakeFeed, fixedClock, memoryLogger, type SourceBooking } from "./support/fakes.js";
import { tempDir } from "./support/store-fixtures.js";
import { walkPosition } from "./support/walk-position.js";

const T0 = Date.UTC(2026, 0, 1);
const source = (): SourceBooking[] =>
  Array.from({ length: 40 }, (_, i) => ({ id: `b${i}`, at: T0 + i * 1000 }));

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** Runs one sync over `api` with a fresh logger; the store (a real file) and clock persist across calls. */
function world() {
  const tmp = tempDir();
  const store = openStore(tmp.file());
  cleanups.push(() => {
    store.close();
    tmp.cleanup();
  });
  const clock = fixedClock(T0 + 3_600_000);
  const ids = () =>
    (store.db.prepare("SELECT id FROM bookings").all() as Array<{ id: string }>).map((r) => r.id);
  return {
    store,
    ids,
    sync: (api: ReturnType<typeof fakeFeed>) => {
      // Each run begins after the one before saved: what that stored counts as stored before it.
      clock.set(clock.now().getTime() + 1000);
      return runSync(
        { api, store, clock, logger: memoryLogger(), signal: new AbortController().signal },
        { pageSize: 10, lookbackSeconds: 1 },
      );
    },
  };
}

describe("the walk refuses what it cannot make sense of", () => {
  it("a position the source will not confirm twice fails the run and starts the walk over next time", async () => {
    const data = source();
    const w = world();
    const healthy = fakeFeed(() => data, "exclusive");
    // After the first page, the bookings at its end and the next time up vanish (deleted), then return.
    let hidden: string[] = [];
    const flaky = {
      ...healthy,
      async fetchRecent(q: FeedQuery): Promise<FeedPage> {
        const page = await healthy.fetchRecent(q);
        if (q.cursor === undefined) {
          hidden = page.records.slice(-2).map((r) => r.id as string);
          return page;
        }
        return { ...page, records: page.records.filter((r) => !hidden.includes(r.id as string)) };
      },
    };
    const failed = await w.sync(flaky as ReturnType<typeof fakeFeed>);
    expect(failed.status).toBe("failed");
    expect(failed.error?.message).toMatch(
      /did not serve again the bookings at .* its previous page ended with/,
    );
    expect(failed.error?.message).toMatch(/starts this walk over from the newest booking/);
    expect(w.store.readStream("feed").checkpoint).toBeNull();
    expect(walkPosition(w.store.readStream("feed").walk)).toBeNull();
    const again = await w.sync(healthy);
    expect(again.status).toBe("success");
    expect(w.ids().sort()).toEqual(data.map((b) => b.id).sort());
  });

  it("an empty page that claims more, twice, fails the run with the checkpoint unmoved; the next run resumes", async () => {
    const data = source();
    const w = world();
    const healthy = fakeFeed(() => data, "inclusive");
    let calls = 0;
    const liar = {
      ...healthy,
      async fetchRecent(q: FeedQuery): Promise<FeedPage> {
        calls++;
        if (calls === 2 || calls === 3) return { records: [], hasMore: true, attempts: 1 };
        return healthy.fetchRecent(q);
      },
    };
    const failed = await w.sync(liar as ReturnType<typeof fakeFeed>);
    expect(failed.status).toBe("failed");
    expect(failed.error?.message).toMatch(/empty page that claims more/);
    expect(w.store.readStream("feed").checkpoint).toBeNull();
    expect(walkPosition(w.store.readStream("feed").walk)).not.toBeNull();
    const again = await w.sync(healthy);
    expect(again.status).toBe("success");
    expect(w.ids().sort()).toEqual(data.map((b) => b.id).sort());
  });

  it("an empty page that claims more, once, is asked again and the run completes", async () => {
    const data = source();
    const w = world();
    const healthy = fakeFeed(() => data, "exclusive");
    let calls = 0;
    const once = {
      ...healthy,
      async fetchRecent(q: FeedQuery): Promise<FeedPage> {
        return ++calls === 2 ? { records: [], hasMore: true, attempts: 1 } : healthy.fetchRecent(q);
      },
    };
    const report = await w.sync(once as ReturnType<typeof fakeFeed>);
    expect(report.status).toBe("success");
    expect(w.ids().sort()).toEqual(data.map((b) => b.id).sort());
  });

  it("a server that caps the page and says hasMore: false on every page is read to the end", async () => {
    const data = source();
    const w = world();
    const healthy = fakeFeed(() => data, "exclusive");
    const capped = {
      ...healthy,
      async fetchRecent(q: FeedQuery): Promise<FeedPage> {
        const page = await healthy.fetchRecent({ ...q, limit: Math.min(q.limit, 4) });
        return { ...page, hasMore: false };
      },
    };
    const report = await w.sync(capped as ReturnType<typeof fakeFeed>);
    expect(report.status).toBe("success");
    expect(w.ids().sort()).toEqual(data.map((b) => b.id).sort());
  });
});
