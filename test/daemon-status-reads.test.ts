/**
 * Status page views share their reads (daemon/shared-read.ts): views that arrive together wait on the
 * one read in flight, a result is reused for a few seconds, and a view that waited too long answers
 * 503 while the read goes on for the next. Through real HTTP on a real mirror (its reads in the worker
 * thread), reads counted where the daemon's page read is called; gates are promises, never sleeps.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { HttpServerHandle, HttpServerOptions } from "../src/daemon/http.js";
import { sharedRead } from "../src/daemon/shared-read.js";
import type { StatusPageData } from "../src/store/daily.js";
import { type Harness, harness } from "./support/harness.js";
import { serveStatusPage } from "./support/status-page.js";

const T0 = new Date("2026-03-01T10:00:00.000Z");

/** A clock the test sets. */
function testClock() {
  let now = T0;
  return { now: () => now, advance: (ms: number) => (now = new Date(now.getTime() + ms)) };
}

/** A promise and its resolve, to hold a read until the test lets it go. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

describe("sharedRead", () => {
  it("gives callers that overlap one read, reuses it while fresh, and reads again after", async () => {
    const clock = testClock();
    let reads = 0;
    const g = gate();
    const read = sharedRead(
      async () => {
        await g.opened;
        return ++reads;
      },
      { clock, reuseMs: 5_000, timeoutMs: 60_000 },
    );
    const views = Array.from({ length: 8 }, () => read());
    g.open();
    expect(await Promise.all(views)).toEqual(Array(8).fill(1));
    clock.advance(4_999);
    expect(await read()).toBe(1);
    clock.advance(1);
    expect(await read()).toBe(2);
  });

  it("gives up on a read that never ends once it has run three waits: the next view starts another", async () => {
    const clock = testClock();
    let calls = 0;
    const hung = new Promise<string>(() => {});
    const read = sharedRead(
      async () => {
        calls++;
        return calls === 1 ? hung : "ok";
      },
      { clock, reuseMs: 5_000, timeoutMs: 1 },
    );
    await expect(read()).rejects.toThrow(/took over 1 ms/);
    clock.advance(3);
    await expect(read()).rejects.toThrow(/took over 1 ms/);
    expect(calls).toBe(1);
    clock.advance(1);
    expect(await read()).toBe("ok");
    expect(calls).toBe(2);
  });

  it("keeps no failure: callers that overlap share it, the next caller reads again", async () => {
    let calls = 0;
    const read = sharedRead(
      async () => {
        calls++;
        if (calls === 1) throw new Error("database is locked");
        return "ok";
      },
      { clock: testClock(), reuseMs: 5_000, timeoutMs: 60_000 },
    );
    const failed = await Promise.allSettled([read(), read(), read()]);
    expect(failed.map((r) => r.status)).toEqual(["rejected", "rejected", "rejected"]);
    expect(calls).toBe(1);
    expect(await read()).toBe("ok");
    expect(calls).toBe(2);
  });
});

let h: Harness | undefined;
const servers: HttpServerHandle[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await h?.close();
  h = undefined;
});

/** The daemon's endpoint over a synced mirror, its page read counted and held by `hold` when set. */
async function setup(overrides: Partial<HttpServerOptions> = {}) {
  h = await harness({ bookings: 40 });
  expect((await h.sync()).status).toBe("success");
  const clock = testClock();
  const counted = {
    reads: 0,
    hold: undefined as Promise<void> | undefined,
    /** The newest read, settled when it has ended. */
    last: Promise.resolve() as Promise<unknown>,
  };
  const store = h.store;
  const statusPage = (): Promise<StatusPageData> => {
    counted.reads++;
    const hold = counted.hold;
    const read = (async () => {
      await hold;
      return store.readStatusPage(clock.now());
    })();
    counted.last = read.catch(() => undefined);
    return read;
  };
  const { server, logger } = await serveStatusPage(statusPage, { clock, ...overrides });
  servers.push(server);
  const view = async () => {
    const res = await fetch(`${server.url}/`);
    return { status: res.status, text: await res.text() };
  };
  return { server, logger, clock, counted, view };
}

describe("GET / under concurrent views", () => {
  it("answers N views that arrive together with one read, and reads again once the result is 5 s old", async () => {
    const { clock, counted, view } = await setup();
    const g = gate();
    counted.hold = g.opened;
    const views = Array.from({ length: 10 }, () => view());
    g.open();
    const answers = await Promise.all(views);
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    expect(counted.reads).toBe(1);
    // Each view says when its figures were read.
    for (const a of answers)
      expect(a.text).toContain(`The mirror as of <time datetime="${T0.toISOString()}">`);
    clock.advance(5_000);
    const later = await view();
    expect(later.status).toBe(200);
    expect(later.text).toContain('The mirror as of <time datetime="2026-03-01T10:00:05.000Z">');
    expect(counted.reads).toBe(2);
  });

  it("answers 503 to views that waited past the timeout, all on one read that goes on and serves the next view", async () => {
    const { counted, logger, view } = await setup({ statusPageTimeoutMs: 50, statusPageReuseMs: 5_000 });
    const g = gate();
    counted.hold = g.opened;
    // Each of them waited on a read in flight (nothing was read yet): one read, however many views.
    const slow = await Promise.all(Array.from({ length: 6 }, () => view()));
    for (const a of slow) {
      expect(a.status).toBe(503);
      expect(a.text).toMatch(
        /^status unavailable: reading the figures took over 0\.05 s; they are still being read/,
      );
    }
    expect(counted.reads).toBe(1);
    expect(logger.lines.some((l) => /the read is slow/.test(String(l.msg)))).toBe(true);
    g.open();
    await counted.last;
    const next = await view();
    expect(next.status).toBe(200);
    expect(counted.reads).toBe(1);
  });

  it("reads again after a read that failed, and says the database could not be read", async () => {
    const { counted, view } = await setup();
    counted.hold = Promise.reject(new Error("database is locked"));
    counted.hold.catch(() => undefined);
    const failed = await view();
    expect(failed.status).toBe(503);
    expect(failed.text).toMatch(/the database could not be read/);
    counted.hold = undefined;
    expect((await view()).status).toBe(200);
    expect(counted.reads).toBe(2);
  });
});
