/**
 * The single-writer lease, between two connections to one real SQLite file, with the time set by
 * the test instead of waited for.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { acquireLease, openStore, releaseLease, renewLease, type Store } from "../src/store/index.js";
import { tempDir } from "./support/store-fixtures.js";

let tmp: ReturnType<typeof tempDir>;
let a: Store;
let b: Store;
beforeEach(() => {
  tmp = tempDir();
  a = openStore(tmp.file());
  b = openStore(tmp.file());
});
afterEach(() => {
  a.close();
  b.close();
  tmp.cleanup();
});

const t0 = Date.parse("2025-03-01T12:00:00.000Z");
const time = (ms: number) => new Date(t0 + ms);
const TTL = 30_000;
const worker = (holder: string, pid: number) => ({
  name: "writer",
  holder,
  ttlMs: TTL,
  pid,
  hostname: "box",
});
const A = worker("box:101:aaaa", 101);
const B = worker("box:202:bbbb", 202);

describe("leases", () => {
  it("lets one holder in and tells the second who holds it", () => {
    expect(acquireLease(a, { ...A, now: time(0) })).toEqual({ acquired: true });
    expect(acquireLease(b, { ...B, now: time(1_000) })).toEqual({
      acquired: false,
      heldBy: { holder: A.holder, pid: 101, hostname: "box", expiresAt: time(TTL).toISOString() },
    });
  });

  it("re-acquiring our own lease renews it and keeps when it was first taken", () => {
    acquireLease(a, { ...A, now: time(0) });
    expect(acquireLease(a, { ...A, now: time(20_000) })).toEqual({ acquired: true });
    const row = a.db.prepare("SELECT acquired_at, expires_at FROM leases WHERE name = 'writer'").get();
    expect(row).toEqual({ acquired_at: time(0).toISOString(), expires_at: time(20_000 + TTL).toISOString() });
  });

  it("renewal keeps a live lease ours past its first expiry", () => {
    acquireLease(a, { ...A, now: time(0) });
    expect(renewLease(a, { ...A, now: time(20_000) })).toBe(true);
    expect(acquireLease(b, { ...B, now: time(TTL + 1) }).acquired).toBe(false);
  });

  it("an expired lease is taken over, and the old holder learns it lost it", () => {
    acquireLease(a, { ...A, now: time(0) });
    expect(acquireLease(b, { ...B, now: time(TTL - 1) }).acquired).toBe(false);
    const takeover = acquireLease(b, { ...B, now: time(TTL) });
    expect(takeover).toMatchObject({ acquired: true, tookOverFrom: { holder: A.holder, pid: 101 } });
    expect(renewLease(a, { ...A, now: time(TTL + 5) })).toBe(false);
    expect(releaseLease(a, A)).toBe(false);
    expect(acquireLease(a, { ...A, now: time(TTL + 5) })).toMatchObject({
      acquired: false,
      heldBy: { pid: 202 },
    });
  });

  it("release frees the lease for the next worker at once", () => {
    acquireLease(a, { ...A, now: time(0) });
    expect(releaseLease(a, A)).toBe(true);
    expect(acquireLease(b, { ...B, now: time(1) })).toEqual({ acquired: true });
  });

  it("keeps separate names apart and defaults pid and hostname to this process", () => {
    acquireLease(a, { name: "writer", holder: "h:1:x", ttlMs: TTL, now: time(0) });
    expect(acquireLease(b, { name: "other", holder: "h:2:y", ttlMs: TTL, now: time(0) }).acquired).toBe(true);
    const row = a.db.prepare("SELECT pid FROM leases WHERE name = 'writer'").get();
    expect(row).toEqual({ pid: process.pid });
  });
});
