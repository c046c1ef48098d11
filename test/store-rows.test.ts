/**
 * Row mapping for the statements: the feed's positional values line up with the named columns the
 * details path binds, and timestamps are normalised exactly as `toISOString()` would.
 */
import { describe, expect, it } from "vitest";
import { isoOrNull, pushSummaryValues, SUMMARY_COLUMNS, summaryParams } from "../src/store/rows.js";
import { fullRaw, okFull, okSummary, summaryRaw } from "./support/store-fixtures.js";

describe("pushSummaryValues", () => {
  it("lists the same values as summaryParams, in SUMMARY_COLUMNS order, for either view", () => {
    const records = [
      okSummary(summaryRaw(1)),
      okSummary(summaryRaw(2, { sender: null, weight: null, bookingDate: "2025-01-01T11:00:00+01:00" })),
      okFull(fullRaw(3)),
    ];
    for (const r of records) {
      const values: Array<string | number | null> = [];
      pushSummaryValues(values, r.createdAt, r.record);
      const named = summaryParams(r.id, r.createdAt, r.record, null);
      expect(values).toEqual(SUMMARY_COLUMNS.map(([, param]) => named[param]));
    }
  });
});

describe("isoOrNull", () => {
  it.each([
    ["2025-01-01T10:00:00.000Z", "2025-01-01T10:00:00.000Z"],
    ["2025-01-01T11:00:00+01:00", "2025-01-01T10:00:00.000Z"],
    // Looks canonical, but Date rolls it over; the stored text must be what Date says.
    ["2024-02-30T10:00:00.000Z", "2024-03-01T10:00:00.000Z"],
    ["2024-05-01T24:00:00.000Z", "2024-05-02T00:00:00.000Z"],
    ["not a time", "not a time"],
  ])("%s becomes %s", (input, expected) => {
    expect(isoOrNull(input)).toBe(expected);
  });
});
