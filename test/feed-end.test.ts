/**
 * The list's verdict on a feed that stopped serving but claims more (list/feed-end.ts): the real
 * client against the bundled simulator, which serves both booking types newest first.
 */
import { afterEach, describe, expect, it } from "vitest";
import { zeroCounters } from "../src/sync/counters.js";
import { justBefore } from "../src/sync/feed/window.js";
import { confirmFeedEnd } from "../src/sync/list/feed-end.js";
import { type Harness, harness } from "./support/harness.js";
import { listDeps } from "./support/list-deps.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** An instant just below the millisecond of `createdAt`: where a walk stands once it has read it. */
const below = (createdAt: string) => justBefore(new Date(createdAt).toISOString());

describe("confirmFeedEnd", () => {
  it("vouches for an end below the oldest booking, and names a booking the walk still owes otherwise", async () => {
    h = await harness({ bookings: 300 });
    const all = h.sim.allFull();
    const deps = listDeps(h);
    const counters = zeroCounters();
    const oldest = all.at(-1)?.createdAt as string;
    const end = await confirmFeedEnd(deps, below(oldest), { pageSize: 50 }, counters);
    expect(end.complete).toBe(true);
    const middle = all[150]?.createdAt as string;
    const shortCounters = zeroCounters();
    const short = await confirmFeedEnd(deps, below(middle), { pageSize: 50 }, shortCounters);
    expect(short).toMatchObject({ complete: false, why: expect.stringContaining(all[151]?._id as string) });
    // A binary search over 300 positions and a page, not a scan of the list.
    expect(counters.requests).toBeLessThanOrEqual(12);
    expect(shortCounters.requests).toBeLessThanOrEqual(12);
  });

  it("a typed stream owes only its own type: older bookings of the other type are no debt", async () => {
    h = await harness({ bookings: 300 });
    const all = h.sim.allFull();
    const oldestIn = all.findLast((b) => b.type === "IN");
    const olderLc = all.slice(all.indexOf(oldestIn as (typeof all)[number]) + 1);
    expect(olderLc.length, "the data set has LC bookings older than every IN").toBeGreaterThan(0);
    const deps = listDeps(h);
    const at = below(oldestIn?.createdAt as string);
    const typed = await confirmFeedEnd(deps, at, { pageSize: 50, bookingType: "IN" }, zeroCounters());
    expect(typed.complete).toBe(true);
    const untyped = await confirmFeedEnd(deps, at, { pageSize: 50 }, zeroCounters());
    expect(untyped.complete).toBe(false);
  });

  it("an empty list vouches for an end anywhere; a list that holds bookings does not vouch for an empty feed", async () => {
    h = await harness({ bookings: 0 });
    expect((await confirmFeedEnd(listDeps(h), null, { pageSize: 50 }, zeroCounters())).complete).toBe(true);
    await h.close();
    h = await harness({ bookings: 5 });
    expect((await confirmFeedEnd(listDeps(h), null, { pageSize: 50 }, zeroCounters())).complete).toBe(false);
  });
});
