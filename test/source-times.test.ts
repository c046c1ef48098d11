import { describe, expect, it } from "vitest";
import { readSourceTime } from "../src/api/times.js";

describe("readSourceTime", () => {
  const valid: Array<[string, string, string]> = [
    ["2026-11-20T10:00:00.000Z", "2026-11-20T10:00:00.000Z", "2026-11-20T10:00:00.000000000Z"],
    ["2026-11-20T10:00:00Z", "2026-11-20T10:00:00.000Z", "2026-11-20T10:00:00.000000000Z"],
    ["2026-11-20T11:00:00.5+01:00", "2026-11-20T10:00:00.500Z", "2026-11-20T10:00:00.500000000Z"],
    ["2026-11-20T05:30:00-0430", "2026-11-20T10:00:00.000Z", "2026-11-20T10:00:00.000000000Z"],
    ["2026-11-20T10:00:00.123456Z", "2026-11-20T10:00:00.123Z", "2026-11-20T10:00:00.123456000Z"],
    ["2026-11-20T10:00:00.123456789Z", "2026-11-20T10:00:00.123Z", "2026-11-20T10:00:00.123456789Z"],
    ["2026-01-01T00:30:00+01:00", "2025-12-31T23:30:00.000Z", "2025-12-31T23:30:00.000000000Z"],
    ["2024-02-29T00:00:00Z", "2024-02-29T00:00:00.000Z", "2024-02-29T00:00:00.000000000Z"],
    ["2026-11-20T10:00Z", "2026-11-20T10:00:00.000Z", "2026-11-20T10:00:00.000000000Z"],
    ["2026-11-20t10:00:00.000z", "2026-11-20T10:00:00.000Z", "2026-11-20T10:00:00.000000000Z"],
    ["0001-01-01T00:00:00.000Z", "0001-01-01T00:00:00.000Z", "0001-01-01T00:00:00.000000000Z"],
    ["9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999000000Z"],
  ];
  it.each(valid)("reads %s", (text, createdAt, instant) =>
    expect(readSourceTime(text)).toEqual({ createdAt, instant }),
  );

  const invalid: Array<[string, unknown]> = [
    ["an impossible day (no roll-over to March)", "2026-02-30T10:00:00.000Z"],
    ["29 February of a common year", "2026-02-29T10:00:00Z"],
    ["31 April", "2026-04-31T10:00:00Z"],
    ["hour 24", "2026-11-20T24:00:00Z"],
    ["a leap second", "2026-12-31T23:59:60Z"],
    ["month 13", "2026-13-01T00:00:00Z"],
    ["no zone (would depend on the worker's TZ)", "2026-11-20T10:00:00.000"],
    ["a date alone", "2026-11-20"],
    ["finer than a nanosecond", "2026-11-20T10:00:00.1234567891Z"],
    ["words", "yesterday"],
    ["a number", 1_700_000_000_000],
    ["an offset of 25 hours", "2026-11-20T10:00:00+25:00"],
    ["trailing text", "2026-11-20T10:00:00Zjunk"],
    // In the form toISOString writes, which is read by a shorter path first.
    ["year 0", "0000-01-01T00:00:00.000Z"],
    ["29 February of a common year, with milliseconds", "2026-02-29T10:00:00.000Z"],
    ["hour 24, with milliseconds", "2026-11-20T24:00:00.000Z"],
    ["a six-digit year", "+02026-11-20T10:00:00Z"],
  ];
  it.each(invalid)("refuses %s", (_name, text) => expect(readSourceTime(text)).toBeNull());

  it("keeps text order equal to time order across precisions", () => {
    const texts = ["2026-11-20T10:00:00.001Z", "2026-11-20T10:00:00.000999Z", "2026-11-20T10:00:00.000001Z"];
    const instants = texts.map((t) => readSourceTime(t)?.instant as string);
    expect([...instants].sort()).toEqual([instants[2], instants[1], instants[0]]);
  });
});
