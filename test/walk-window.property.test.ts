/**
 * The window's floor rule by properties: bookings misdated into the past never end a walk while a
 * booking after them on the page is in its place, nor fewer than five at a page's end, nor any
 * number the mirror lacks where it is complete below the floor; a page that ends in a run below the
 * floor does. Seeded (FC_SEED to vary); fast-check prints the seed and
 * the shrunk case on failure.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { nextStep } from "../src/sync/feed/window.js";
import { base, page, T } from "./support/window-facts.js";

const SEED = Number(process.env.FC_SEED ?? 20261128);

describe("nextStep at the floor, by properties", () => {
  // Seconds 20-59 lie above the floor at 20, 1-9 below it; a page is newest first.
  const floor = T(20);
  const desc = (secs: number[]) => [...secs].sort((a, b) => b - a);

  it("never ends the walk on fewer than five misdated records, at a page's end or with a newer one after them", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 20, max: 59 }), { minLength: 5, maxLength: 60 }),
        fc.integer({ min: 1, max: 4 }),
        fc.nat(),
        fc.integer({ min: 1, max: 9 }),
        (secs, k, at, s) => {
          const ordered = desc(secs);
          // k records misdated to second s, anywhere on a page of six or more, its end too.
          const cut = at % (ordered.length + 1);
          const records = page(...ordered.slice(0, cut), ...Array(k).fill(s), ...ordered.slice(cut));
          const step = nextStep({
            ...base,
            floor,
            limit: records.length,
            records,
            count: records.length,
            hasMore: true,
          });
          expect(step).not.toEqual({ kind: "done", reason: "floor" });
        },
      ),
      { seed: SEED },
    );
  });

  it("where the mirror is complete below the floor, never ends the walk on a run holding a booking it lacks, however long", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 20, max: 59 })),
        fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 40 }),
        fc.nat(),
        (top, bottom, pick) => {
          const records = page(...desc(top), ...desc(bottom));
          const limit = records.length;
          // Every record below the floor is held but one: new, and dated into the past.
          const below = records.slice(top.length);
          const lacked = below[pick % below.length]?.id;
          const held = new Set(below.map((b) => b.id).filter((id) => id !== lacked));
          const facts = { ...base, floor, limit, records, count: limit, hasMore: true, held };
          expect(nextStep(facts)).not.toEqual({ kind: "done", reason: "floor" });
        },
      ),
      { seed: SEED },
    );
  });

  it("ends it on a page that ends in a run below the floor, in order, five long or all but one of the page", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 20, max: 59 })),
        fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 2, maxLength: 20 }),
        (top, bottom) => {
          const records = page(...desc(top), ...desc(bottom));
          const limit = records.length;
          const step = nextStep({ ...base, floor, limit, records, count: limit, hasMore: true });
          const enough = bottom.length >= Math.min(5, limit - 1);
          expect(step.kind === "done" && step.reason === "floor").toBe(enough);
        },
      ),
      { seed: SEED },
    );
  });
});
