/**
 * One mirror, one source (src/sync/source-guard.ts): the core's runs through the guarded client
 * against the bundled simulator over real HTTP, on either database. Another simulator (another
 * seed) stands for another account or a staging URL; handing its client the first one's address
 * stands for another account's token on the same URL.
 */
import { afterEach, expect, it } from "vitest";
import { systemClock } from "../src/app.js";
import { findCause } from "../src/errors.js";
import type { Simulator } from "../src/simulator/index.js";
import type { Mirror } from "../src/store/store.js";
import { runBackfill } from "../src/sync/backfill/backfill.js";
import { runReconcile } from "../src/sync/list/reconcile.js";
import type { PartnerApi, SyncDeps } from "../src/sync/ports.js";
import { runSync } from "../src/sync/run-sync.js";
import { SOURCE_STREAM, SourceMismatchError, type SourceRecord } from "../src/sync/source.js";
import { guardSource } from "../src/sync/source-guard.js";
import { memoryLogger } from "./support/fakes.js";
import { simulatedSource } from "./support/harness.js";
import { type MirrorHarness, mirrorHarness } from "./support/mirror-harness.js";
import { describeBackends } from "./support/postgres.js";

let h: MirrorHarness | undefined;
let other: Simulator | undefined;
afterEach(async () => {
  await other?.close();
  other = undefined;
  await h?.close();
  h = undefined;
});

const SYNC = { pageSize: 100, lookbackSeconds: 600, details: false } as const;

/** The core's world with the client checked against the mirror's source, as `openApp` builds it. */
function guarded(x: MirrorHarness, api?: PartnerApi, baseUrl = x.sim.url): SyncDeps<Mirror> {
  const deps = x.deps();
  const inner = api ?? deps.api;
  return {
    ...deps,
    api: guardSource(inner, { store: x.mirror, baseUrl, clock: systemClock, logger: x.logger }),
  };
}

async function remembered(x: MirrorHarness): Promise<SourceRecord | null> {
  return (await x.mirror.readProgress<SourceRecord>(SOURCE_STREAM)).progress;
}

/** Another source: its simulator and client. */
async function anotherSource(options: { bookings: number }): Promise<{ sim: Simulator; api: PartnerApi }> {
  const source = await simulatedSource({ seed: 2, ...options }, memoryLogger());
  other = source.sim;
  return source;
}

const idOf = (x: MirrorHarness, i: number) => x.sim.dataset.full(i)._id;

/** A mirror as a version before the source check left it: its bookings, no record of their source. */
async function forget(x: MirrorHarness): Promise<void> {
  await x.execute("DELETE FROM sync_state WHERE stream = $1", [SOURCE_STREAM]);
}

describeBackends("the mirror's source", (backend) => {
  it("is remembered by the first page read; a command against another address is refused before any request", async () => {
    h = await mirrorHarness(backend, { bookings: 300 });
    expect(await remembered(h)).toBeNull();
    expect((await runSync(guarded(h), SYNC)).status).toBe("success");
    // The feed's first page holds bookings 299..200: the three oldest of it.
    expect(await remembered(h)).toMatchObject({
      baseUrl: h.sim.url,
      bookings: [200, 201, 202].map((i) => ({ id: idOf(h as MirrorHarness, i) })),
    });
    const before = await h.mirrorIds();
    const { sim, api } = await anotherSource({ bookings: 10 });
    for (const run of [
      () => runSync(guarded(h as MirrorHarness, api, sim.url), SYNC),
      () => runReconcile(guarded(h as MirrorHarness, api, sim.url), { since: null }),
      () => runBackfill(guarded(h as MirrorHarness, api, sim.url), { concurrency: 2 }),
    ]) {
      const report = await run();
      expect(report.status).toBe("failed");
      const refusal = findCause(report.error, SourceMismatchError);
      expect(refusal?.message).toContain(`mirrors ${h.sim.url}`);
      expect(refusal?.message).toContain(`not ${sim.url}`);
    }
    expect(sim.stats.requests).toBe(0);
    expect(await h.mirrorIds()).toEqual(before);
    const [marked] = await h.query<{ n: number }>(
      "SELECT count(*) AS n FROM bookings WHERE missing_since IS NOT NULL",
    );
    expect(marked?.n).toBe(0);
  });

  it("refuses another account at the same address: it serves none of the mirror's bookings", async () => {
    h = await mirrorHarness(backend, { bookings: 300 });
    expect((await runBackfill(guarded(h), { concurrency: 2 })).status).toBe("success");
    const before = await h.mirrorIds();
    const { sim, api } = await anotherSource({ bookings: 300 });
    const report = await runReconcile(guarded(h, api), { since: null });
    expect(report).toMatchObject({ status: "failed", inserted: 0, missing: 0 });
    expect(findCause(report.error, SourceMismatchError)?.message).toMatch(
      /serves none of the bookings this mirror remembers/,
    );
    // Its first page, one feed request after the remembered bookings, then its oldest page.
    expect(sim.stats.byEndpoint).toMatchObject({ feed: 1, list: 3 });
    expect(await h.mirrorIds()).toEqual(before);
  });

  it("fails a run, not for good, when the source serves no booking at all: an empty answer proves nothing", async () => {
    h = await mirrorHarness(backend, { bookings: 300 });
    expect((await runBackfill(guarded(h), { concurrency: 2 })).status).toBe("success");
    const before = await h.mirrorIds();
    for (const withRecord of [true, false]) {
      if (!withRecord) await forget(h);
      const { api } = await anotherSource({ bookings: 0 });
      const report = await runSync(guarded(h, api), SYNC);
      expect(report.status).toBe("failed");
      expect(findCause(report.error, SourceMismatchError)).toBeUndefined();
      expect(report.error?.message).toMatch(/the source served no bookings while the mirror holds some/);
      await other?.close();
      other = undefined;
    }
    expect(await h.mirrorIds()).toEqual(before);
  });

  it("takes a source that deleted the bookings it is remembered by, and remembers others it holds", async () => {
    h = await mirrorHarness(backend, { bookings: 300 });
    expect((await runSync(guarded(h), SYNC)).status).toBe("success");
    for (const i of [200, 201, 202]) h.sim.remove(i);
    // More new bookings than a page: the first page shares nothing with the mirror.
    h.sim.insert(150);
    const report = await runSync(guarded(h), SYNC);
    expect(report.status).toBe("success");
    const now = await remembered(h);
    const ids = now?.bookings.map((b) => b.id) ?? [];
    expect(ids).toHaveLength(3);
    expect(ids.some((id) => [200, 201, 202].map((i) => idOf(h as MirrorHarness, i)).includes(id))).toBe(
      false,
    );
    expect(await h.mirror.absentIds(ids)).toEqual([]);
    expect(h.logger.lines.some((l) => l.msg?.startsWith("the source no longer serves the bookings"))).toBe(
      true,
    );
  });

  it("remembers the source anew over a record it did not write", async () => {
    h = await mirrorHarness(backend, { bookings: 50 });
    expect((await runSync(guarded(h), SYNC)).status).toBe("success");
    const edits = [
      JSON.stringify({ baseUrl: "https://elsewhere.example/api/v2", bookings: "edited by hand" }),
      "not JSON {",
    ];
    for (const edit of edits) {
      await h.execute("UPDATE sync_state SET progress_json = $1 WHERE stream = $2", [edit, SOURCE_STREAM]);
      expect((await runSync(guarded(h), SYNC)).status).toBe("success");
      expect(await remembered(h)).toMatchObject({ baseUrl: h.sim.url, bookings: [{}, {}, {}] });
    }
  });

  it("holds a mirror made before the check to its bookings: another source is refused, nothing read in", async () => {
    h = await mirrorHarness(backend, { bookings: 300 });
    expect((await runSync(guarded(h), SYNC)).status).toBe("success");
    await forget(h);
    const before = await h.mirrorIds();
    const { sim, api } = await anotherSource({ bookings: 10 });
    const report = await runReconcile(guarded(h, api, sim.url), { since: null });
    expect(report).toMatchObject({ status: "failed", inserted: 0, missing: 0 });
    const refusal = findCause(report.error, SourceMismatchError)?.message;
    expect(refusal).toContain("this mirror has no record of its source yet");
    expect(refusal).toContain("holds 300 bookings");
    expect(refusal).toContain(`${sim.url}, with the configured token, serves none of them`);
    // Its first page, the feed just below the mirror's checkpoint, then its oldest page (its only one).
    expect(sim.stats.byEndpoint).toMatchObject({ feed: 1, list: 2 });
    expect(await h.mirrorIds()).toEqual(before);
    expect(await remembered(h)).toBeNull();
    // Pointed back at its own source: remembered, and the command goes on.
    expect((await runSync(guarded(h), SYNC)).status).toBe("success");
    expect(await remembered(h)).toMatchObject({ baseUrl: h.sim.url, bookings: [{}, {}, {}] });
  });

  it("recognises its own source at no extra request when the first page holds a booking it holds", async () => {
    h = await mirrorHarness(backend, { bookings: 300 });
    expect((await runSync(guarded(h), SYNC)).status).toBe("success");
    h.sim.resetStats();
    expect((await runSync(guarded(h), SYNC)).status).toBe("success");
    const remembering = { ...h.sim.stats.byEndpoint };
    await forget(h);
    h.sim.resetStats();
    expect((await runSync(guarded(h), SYNC)).status).toBe("success");
    expect(h.sim.stats.byEndpoint).toEqual(remembering);
    expect(await remembered(h)).toMatchObject({ baseUrl: h.sim.url });
  });

  it("finds its own source's bookings below the checkpoint when more than a page arrived", async () => {
    h = await mirrorHarness(backend, { bookings: 300 });
    expect((await runSync(guarded(h), SYNC)).status).toBe("success");
    await forget(h);
    h.sim.insert(150);
    h.sim.resetStats();
    expect((await runSync(guarded(h), SYNC)).status).toBe("success");
    const ids = (await remembered(h))?.bookings.map((b) => b.id) ?? [];
    expect(ids).toHaveLength(3);
    // Remembered by bookings the mirror held before this run, just below its checkpoint (299 is the
    // newest): found by the probe, not by the new page nor the oldest page.
    const nearest = Array.from({ length: 20 }, (_, k) => idOf(h as MirrorHarness, 299 - k));
    expect(ids.every((id) => nearest.includes(id))).toBe(true);
  });

  it("lets a mirror without bookings take the source it is pointed at", async () => {
    h = await mirrorHarness(backend, { bookings: 50 });
    const { sim, api } = await anotherSource({ bookings: 20 });
    // A first command read a page of the first source, then stored nothing of it.
    const empty = await runSync(guarded(h), { ...SYNC, pageSize: 10 });
    expect(empty.status).toBe("success");
    await h.execute("DELETE FROM bookings");
    expect((await runSync(guarded(h, api, sim.url), SYNC)).status).toBe("success");
    expect(await remembered(h)).toMatchObject({ baseUrl: sim.url });
  });
});
