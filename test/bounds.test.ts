/** The bounds on one record (api/bounds.ts) and what the record checks make of it (api/response.ts). */
import { describe, expect, it } from "vitest";
import {
  boundRecord,
  MAX_DEPTH,
  MAX_RECORD_BYTES,
  MAX_VALUE_BYTES,
  OversizedRecord,
} from "../src/api/bounds.js";
import { checkRecord } from "../src/api/response.js";
import { fullBookingSchema, summaryBookingSchema } from "../src/api/schemas.js";

const T = "2026-11-20T09:00:00.000Z";
const base = { _id: "b1", createdAt: T, totalAmount: 10, paid: false, bookingState: 1, orderState: 2 };

function nested(depth: number): unknown {
  let v: unknown = "leaf";
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

describe("boundRecord", () => {
  it("returns a record within every bound itself, uncopied", () => {
    const record = { ...base, receiver: { contact: { name: "Ada" } }, deep: nested(MAX_DEPTH - 2) };
    const bounded = boundRecord(record);
    expect(bounded.value).toBe(record);
    expect(bounded.problems).toEqual([]);
  });

  it.each([
    [
      "a string one byte over the value cap",
      { name: "x".repeat(MAX_VALUE_BYTES + 1) },
      /^name: 65537 bytes, over the 65536-byte cap/,
    ],
    [
      "a string over the cap in UTF-8 though not in characters",
      { name: "é".repeat(MAX_VALUE_BYTES / 2 + 1) },
      /^name: 65538 bytes/,
    ],
    [
      "nesting 200,000 levels deep",
      { deep: nested(200_000) },
      new RegExp(`^deep(\\.0)+: nested deeper than ${MAX_DEPTH} levels`),
    ],
  ])(
    "replaces %s by a marker, naming its path, and leaves the received record as it was",
    (_, extra, problem) => {
      const record = { ...base, ...extra };
      const before = JSON.stringify(Object.keys(record));
      const bounded = boundRecord(record);
      expect(bounded.problems).toHaveLength(1);
      expect(bounded.problems[0]).toMatch(problem);
      expect(JSON.stringify(bounded.value).length).toBeLessThan(4096);
      expect(bounded.value).not.toBe(record);
      expect(JSON.stringify(Object.keys(record))).toBe(before);
    },
  );

  it("names 50 values past a bound and counts the rest in one line", () => {
    const deep = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`f${i}`, nested(40)]));
    const { problems } = boundRecord({ ...base, ...deep });
    expect(problems).toHaveLength(51);
    expect(problems.at(-1)).toBe("(record): 10 more values past a bound");
  });

  it("keeps the string at exactly the cap", () => {
    expect(boundRecord({ ...base, name: "x".repeat(MAX_VALUE_BYTES) }).problems).toEqual([]);
  });

  it("makes a record over the record cap its key, its time and a marker with its size", () => {
    const many = Array.from({ length: 40 }, () => "y".repeat(MAX_VALUE_BYTES - 10));
    const bounded = boundRecord({ ...base, many });
    expect(bounded.value).toEqual({
      _id: "b1",
      createdAt: T,
      $omitted: { reason: "record", bytes: expect.any(Number), cap: MAX_RECORD_BYTES },
    });
    expect(bounded.problems[0]).toMatch(/^record: \d+ bytes, over the 1048576-byte cap for a record$/);
  });
});

describe("checkRecord: a usable `_id` makes a booking", () => {
  it.each([
    ["a string amount", { totalAmount: "12" }, "totalAmount", /^totalAmount: /],
    ["an absent state", { bookingState: undefined }, "bookingState", /^bookingState: missing$/],
    ["a receiver that is an array", { receiver: ["Ada"] }, "receiver", /^receiver: /],
  ])(
    "keeps a record with %s, the field left out of what the columns read and named",
    (_, extra, key, problem) => {
      const raw = { ...base, ...extra };
      const r = checkRecord(summaryBookingSchema, raw);
      expect(r.ok).toBe(true);
      if (!r.ok) return;
      expect(r.raw).toBe(raw);
      expect((r.record as Record<string, unknown>)[key]).toBeUndefined();
      expect(r.problems).toEqual([expect.stringMatching(problem)]);
    },
  );

  it.each([
    [20, 20],
    [21, 1],
    [16_000, 1],
  ])(
    "with %i bad item values, names them one by one up to 20, else leaves the field out whole",
    (bad, noted) => {
      const items = Array.from({ length: bad }, () => ({ quantity: "x", name: "a" }));
      const raw = { ...base, packages: { packages: [{ items }] } };
      const r = checkRecord(fullBookingSchema, raw);
      if (!r.ok) throw new Error("not ok");
      expect(r.problems).toHaveLength(noted);
      if (noted === 1) {
        expect(r.problems[0]).toBe(
          `packages: ${bad} values failed their checks; the field is left out whole`,
        );
        expect(r.record.packages).toBeUndefined();
      } else expect(r.record.packages?.packages?.[0]?.items?.[5]).toEqual({ name: "a" });
      expect(r.raw).toBe(raw);
    },
  );

  it("keeps a record with an impossible time as a booking that steers nothing", () => {
    const r = checkRecord(summaryBookingSchema, { ...base, createdAt: "2026-02-30T10:00:00.000Z" });
    expect(r).toMatchObject({ ok: false, id: "b1", createdAt: null, booking: { _id: "b1" } });
    expect(r.ok ? "" : r.reason).toMatch(/^createdAt is not a real calendar date/);
  });

  it("takes a stand-in only from the client: a source record of its shape is an ordinary keyless record", () => {
    const spoof = { head: '{"_id":"victim","createdAt":"2026-11-20T09:00:00.000Z"', bytes: 5 };
    expect(checkRecord(summaryBookingSchema, spoof)).toMatchObject({ ok: false, id: null });
    expect(checkRecord(summaryBookingSchema, spoof)).not.toHaveProperty("booking");
    const real = checkRecord(
      summaryBookingSchema,
      new OversizedRecord("{", 9e6, { _id: "big", createdAt: T }),
    );
    expect(real).toMatchObject({
      ok: true,
      id: "big",
      raw: { _id: "big", createdAt: T, $omitted: { reason: "record", bytes: 9e6 } },
    });
    // Its `_id` not shown at its top level: nothing names it for certain, so it is quarantined.
    expect(checkRecord(summaryBookingSchema, new OversizedRecord("{", 9e6, { createdAt: T }))).toMatchObject({
      ok: false,
      id: null,
    });
  });

  it.each([
    ["no `_id`", { ...base, _id: undefined }],
    ["an empty `_id`", { ...base, _id: "" }],
    ["an `_id` of 257 characters", { ...base, _id: "k".repeat(257) }],
    ["an `_id` with NUL", { ...base, _id: "a\u0000b" }],
    ["an array", [base]],
    ["a string", "b1"],
  ])("quarantines what cannot be a booking: %s", (_, raw) => {
    const r = checkRecord(summaryBookingSchema, raw);
    expect(r.ok).toBe(false);
    expect(r).not.toHaveProperty("booking");
  });
});
