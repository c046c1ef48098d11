/**
 * Row mapping for the statements: each record's positional values line up with the column lists
 * the statements are built from, and timestamps are normalised exactly as `toISOString()` would.
 */
import { describe, expect, it } from "vitest";
import {
  childValues,
  DETAIL_COLUMNS,
  ITEM_COLUMNS,
  isoOrNull,
  PACKAGE_COLUMNS,
  type Param,
  pushDetailValues,
  pushSummaryValues,
  SUMMARY_COLUMNS,
} from "../src/store/rows.js";
import { fullRaw, okFull, okSummary, summaryRaw } from "./support/store-fixtures.js";

/** The values pushed, keyed by the column list they are meant to follow. */
function byColumn(columns: readonly string[], push: (out: Param[]) => void): Record<string, Param> {
  const out: Param[] = [];
  push(out);
  expect(out).toHaveLength(columns.length);
  return Object.fromEntries(columns.map((c, i) => [c, out[i] as Param]));
}

describe("row values", () => {
  it("follow SUMMARY_COLUMNS for either view", () => {
    const summary = okSummary(summaryRaw(2, { sender: null, bookingDate: "2025-01-01T11:00:00+01:00" }));
    expect(
      byColumn(SUMMARY_COLUMNS, (o) => pushSummaryValues(o, summary.createdAt, summary.record)),
    ).toMatchObject({
      search_id: "S2",
      created_at: summary.createdAt,
      booking_date: "2025-01-01T10:00:00.000Z",
      paid: 0,
      sender_name: null,
      receiver_email: "ada@example.com",
      receiver_country_code: "GB",
    });
    const full = okFull(fullRaw(3));
    expect(byColumn(SUMMARY_COLUMNS, (o) => pushSummaryValues(o, full.createdAt, full.record))).toMatchObject(
      {
        sender_email: "chidi@example.com",
        total_amount: 15234.57,
      },
    );
  });

  it("follow DETAIL_COLUMNS, PACKAGE_COLUMNS and ITEM_COLUMNS for a full record", () => {
    const full = okFull(fullRaw(3));
    expect(byColumn(DETAIL_COLUMNS, (o) => pushDetailValues(o, full.createdAt, full.record))).toMatchObject({
      sub_total: 14000,
      insurance_type: "BASIC",
      insurance_fee: 184.57,
      fuel_surcharge_amount: 280,
      packaging_fee_amount: 500,
      delivery_mode: "DOOR_STEP",
    });
    const { packages, items } = childValues(full.id, full.record);
    expect(packages.map((p) => p.length)).toEqual(packages.map(() => PACKAGE_COLUMNS.length));
    expect(items.map((i) => i.length)).toEqual(items.map(() => ITEM_COLUMNS.length));
    const first = Object.fromEntries(ITEM_COLUMNS.map((c, i) => [c, items[1]?.[i]]));
    expect(first).toMatchObject({
      booking_id: full.id,
      package_position: 0,
      position: 1,
      exclude_packing_list: 1,
    });
  });
});

describe("isoOrNull", () => {
  it.each([
    ["2025-01-01T10:00:00.000Z", "2025-01-01T10:00:00.000Z"],
    ["2025-01-01T11:00:00+01:00", "2025-01-01T10:00:00.000Z"],
    // Not a real time, or no zone to read it in: kept as received, never rolled over or guessed.
    ["2024-02-30T10:00:00.000Z", "2024-02-30T10:00:00.000Z"],
    ["2024-05-01T24:00:00.000Z", "2024-05-01T24:00:00.000Z"],
    ["2024-05-01T10:00:00.000", "2024-05-01T10:00:00.000"],
    ["not a time", "not a time"],
  ])("%s becomes %s", (input, expected) => {
    expect(isoOrNull(input)).toBe(expected);
  });
});
