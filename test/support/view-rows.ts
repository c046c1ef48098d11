/** Rows for comparing the analysts' views across backends (test/postgres-schema.test.ts), by table. */
const T = (day: number, hms: string) => `2025-05-0${day}T${hms}Z`;
const SYNCED = { first_seen_at: T(3, "08:00:00.000"), summary_synced_at: T(3, "08:00:00.000") };
/** b1's full record as the list serves it: the packages and items below. */
const DETAIL = JSON.stringify({
  packages: {
    packages: [
      {
        _id: "p0",
        actualWeight: 1.5,
        items: [
          { _id: "i0", name: "shoes", hsCode: "6403", quantity: 2, price: 1.1 },
          { _id: "i1", name: "box", quantity: 1, excludePackingList: true },
        ],
      },
      { items: [{ name: "loose", quantity: 0.5, price: 3 }] },
    ],
  },
});

/**
 * Rows for the views: created_at on both sides of 23:00 UTC (Lagos is an hour ahead), labelled and
 * unlabelled state codes, NULL group keys, a missing booking, and amounts whose sums round on a
 * binary "half" (2.675, 1022259.995) or carry float error (0.1 + 0.2).
 */
export const VIEW_ROWS: Record<string, Array<Record<string, unknown>>> = {
  state_labels: [
    { kind: "booking_state", code: 1, label: "confirmed" },
    { kind: "order_state", code: 2, label: "shipped" },
  ],
  bookings: [
    {
      id: "b1",
      created_at: T(1, "23:30:00.000"),
      source_platform: "web",
      booking_type: "IN",
      paid: 1,
      booking_state: 1,
      order_state: 7,
      total_amount: 2.675,
      booking_vat: 0.1,
      weight: 1.5,
      number_of_packages: 1,
      detail_json: DETAIL,
      detail_synced_at: T(3, "09:00:00.000"),
      ...SYNCED,
    },
    {
      id: "b2",
      created_at: T(1, "22:59:59.999"),
      source_platform: "web",
      booking_type: "IN",
      paid: 0,
      order_state: 2,
      customer_acceptance_state: 3,
      total_amount: 0.1,
      booking_vat: 0.2,
      ...SYNCED,
    },
    {
      id: "b3",
      created_at: T(1, "10:00:00.000"),
      source_platform: "web",
      booking_type: "IN",
      total_amount: 0.2,
      ...SYNCED,
    },
    {
      id: "b4",
      created_at: T(2, "23:59:59.999"),
      source_platform: "mobile",
      booking_type: "LC",
      paid: 1,
      booking_state: 9,
      total_amount: 1022259.995,
      booking_vat: 0.045,
      carrier: "DHL",
      ...SYNCED,
    },
    { id: "b5", created_at: T(2, "00:15:00.000"), total_amount: null, ...SYNCED },
    {
      id: "b6",
      created_at: T(2, "12:00:00.000"),
      source_platform: "web",
      booking_type: "IN",
      paid: 1,
      total_amount: 99,
      missing_since: T(3, "10:00:00.000"),
      ...SYNCED,
    },
  ],
  booking_packages: [
    { booking_id: "b1", position: 0, package_id: "p0", actual_weight: 1.5 },
    { booking_id: "b6", position: 0, package_id: "p9" },
  ],
  booking_items: [
    {
      booking_id: "b1",
      package_position: 0,
      position: 0,
      item_id: "i0",
      name: "shoes",
      hs_code: "6403",
      quantity: 2,
      price: 1.1,
      exclude_packing_list: 0,
    },
    {
      booking_id: "b1",
      package_position: 0,
      position: 1,
      item_id: "i1",
      name: "box",
      quantity: 1,
      exclude_packing_list: 1,
    },
    { booking_id: "b1", package_position: 1, position: 0, name: "loose", quantity: 0.5, price: 3 },
    { booking_id: "b6", package_position: 0, position: 0, name: "hidden", quantity: 1, price: 1 },
  ],
  sync_runs: [
    {
      kind: "feed",
      stream: "feed",
      started_at: T(3, "08:00:00.000"),
      finished_at: T(3, "08:01:00.000"),
      status: "success",
    },
    {
      kind: "feed",
      stream: "feed",
      started_at: T(3, "09:00:00.000"),
      finished_at: T(3, "09:00:05.000"),
      status: "failed",
      error: "HTTP 503",
    },
    {
      kind: "backfill",
      started_at: T(3, "07:00:00.000"),
      finished_at: T(3, "07:30:00.000"),
      status: "success",
      source_total: 100,
      local_total: 98,
    },
    { kind: "backfill", started_at: T(3, "10:00:00.000"), status: "running" },
    { kind: "reconcile", stream: "feed:IN", started_at: T(3, "11:00:00.000"), status: "aborted" },
  ],
  sync_state: [
    { stream: "feed", checkpoint: T(2, "23:59:59.999"), updated_at: T(3, "08:01:00.000") },
    { stream: "feed:IN", checkpoint: null, updated_at: T(3, "08:01:00.000") },
  ],
  rejected_records: [
    {
      endpoint: "feed",
      reason: "createdAt is not an ISO 8601 time",
      raw_json: "{}",
      raw_sha256: "ab12",
      first_seen_at: T(3, "08:00:00.000"),
    },
  ],
};
