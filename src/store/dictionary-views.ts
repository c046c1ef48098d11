/**
 * The dictionary's views (drizzle/0003_views.sql). A column passed through from a table shares that
 * column's entry, so the two cannot say different things.
 */
import { type Column, getTableColumns, getTableName, type Table } from "drizzle-orm";
import type { ColumnEntry, RelationEntry } from "./dictionary-entry.js";
import { OPERATIONAL_TABLES } from "./dictionary-operations.js";
import { BOOKING_TABLES } from "./dictionary-tables.js";
import * as schema from "./schema.js";

const TABLES = { ...BOOKING_TABLES, ...OPERATIONAL_TABLES };
type Key<T extends Table> = keyof T["$inferSelect"] & string;
const columnName = (table: Table, key: string) =>
  (getTableColumns(table) as Record<string, Column>)[key]?.name ?? key;

/** The entry of `table`'s column `key`, its source naming the column it passes through. */
function via<T extends Table>(table: T, key: Key<T>): ColumnEntry {
  const [name, column] = [getTableName(table), columnName(table, key)];
  const { meaning, source } = (TABLES[name] as RelationEntry).columns[column] as ColumnEntry;
  return { meaning, source: `${source}, via \`${name}.${column}\`` };
}

/** `table`'s columns `keys` as a view passes them through, each under its own name. */
const pass = <T extends Table>(table: T, ...keys: Key<T>[]) =>
  Object.fromEntries(keys.map((key) => [columnName(table, key), via(table, key)]));

const B = schema.bookings;
const I = schema.bookingItems;
const R = schema.syncRuns;

const LAGOS_DAY = {
  meaning:
    "The calendar day of `created_at` in Africa/Lagos (UTC+1 all year, no daylight saving), `YYYY-MM-DD`.",
  source: "Derived from `created_at` plus one hour (Africa/Lagos), as `YYYY-MM-DD`",
};
const label = (code: string) => ({
  meaning: `What \`${code}\` means, from \`state_labels\`; \`state <code>\` when it has no label, NULL only when the code is.`,
  source: `Derived from \`${code}\` and \`state_labels\``,
});

const bookingsView = {
  description:
    "One row per booking the source still serves (not `missing_since`), with flags as 0/1 and words, state " +
    "labels beside the codes, amounts, and `has_details`. Start here.",
  internal: false,
  columns: {
    booking_id: via(B, "id"),
    ...pass(B, "searchId", "sourcePlatform", "bookingType", "createdAt"),
    lagos_day: LAGOS_DAY,
    ...pass(B, "bookingDate", "paid"),
    paid_label: { meaning: "`paid`, `unpaid`, or NULL when not stated.", source: "Derived from `paid`" },
    ...pass(B, "bookingState"),
    booking_state_label: label("booking_state"),
    ...pass(B, "orderState"),
    order_state_label: label("order_state"),
    ...pass(B, "customerAcceptanceState"),
    customer_acceptance_state_label: label("customer_acceptance_state"),
    ...pass(B, "totalAmount", "subTotal"),
    vat: via(B, "bookingVat"),
    ...pass(B, "insuranceFee", "fuelSurchargeAmount", "packagingFeeAmount", "weight", "numberOfPackages"),
    ...pass(B, "carrier", "serviceType", "deliveryType", "deliveryMode", "shipmentRate", "branchName"),
    ...pass(B, "senderCity", "senderCountryCode", "receiverCity", "receiverCountryCode"),
    has_details: {
      meaning: "1 when the full record has been fetched (detail columns, packages and items filled), else 0.",
      source: "Derived as `detail_synced_at IS NOT NULL`",
    },
    ...pass(B, "firstSeenAt", "summarySyncedAt", "detailSyncedAt"),
    problems: {
      meaning:
        "What was wrong with the booking as the source served it (`summary_problems`, then `detail_problems`); " +
        "NULL for a clean booking. `WHERE problems IS NOT NULL` lists the bookings to look at.",
      source: "Derived from `summary_problems` and `detail_problems`",
    },
  },
};

const dailyBookings = {
  description:
    "Bookings the source still serves, per calendar day in Africa/Lagos (UTC+1 all year, no daylight " +
    "saving), source platform and booking type.",
  internal: false,
  columns: {
    day: LAGOS_DAY,
    ...pass(B, "sourcePlatform", "bookingType"),
    bookings: { meaning: "Bookings created that day.", source: "Derived as `count(*)`" },
    paid_bookings: { meaning: "Of those, the ones with `paid` = 1.", source: "Derived from `paid`" },
    total_amount: {
      meaning:
        "Sum of their `total_amount` (VAT and fees included, paid or not), NGN, rounded to 2 decimals.",
      source: "Derived from `totalAmount` (summary and full views)",
    },
    vat: {
      meaning: "Sum of their VAT, NGN, rounded to 2 decimals; a booking without details counts as 0.",
      source: "Derived from `bookingVat` (full view)",
    },
  },
};

const itemsView = {
  description:
    "One row per item: booking × package × item, for bookings the source still serves and whose details " +
    "were fetched. `line_value` is the declared value, not revenue.",
  internal: false,
  columns: {
    ...pass(I, "bookingId"),
    ...pass(B, "createdAt"),
    lagos_day: LAGOS_DAY,
    ...pass(B, "sourcePlatform", "bookingType"),
    ...pass(I, "packagePosition"),
    package_id: via(schema.bookingPackages, "packageId"),
    item_position: via(I, "position"),
    ...pass(I, "itemId", "name", "hsCode", "quantity", "price"),
    line_value: {
      meaning:
        "Declared value of the line, `quantity` × `price`, NGN: what the goods are declared to be worth, not " +
        "what the booking earned.",
      source: "Derived as `quantity * price`",
    },
    ...pass(I, "excludePackingList"),
  },
};

const syncHealth = {
  description:
    "One row per run kind and stream: the last run, its status and error, the last success, the checkpoint " +
    "and its age, the drift of the last drift check, and the rejects.",
  internal: false,
  columns: {
    ...pass(R, "kind", "stream"),
    last_run_id: {
      meaning: "The latest run of this kind and stream (`sync_runs.id`).",
      source: "`sync_runs.id`",
    },
    last_status: via(R, "status"),
    last_started_at: via(R, "startedAt"),
    last_finished_at: via(R, "finishedAt"),
    last_error: via(R, "error"),
    last_success_at: {
      meaning:
        "When the last successful run of this kind and stream finished, UTC ISO 8601 text; NULL if none.",
      source: "Derived from `sync_runs.finished_at`",
    },
    checkpoint: {
      meaning:
        "The stream's checkpoint: the newest `createdAt` known to be fully mirrored, UTC ISO 8601 text.",
      source: "`sync_state.checkpoint`",
    },
    checkpoint_age_seconds: {
      meaning: "Seconds from the checkpoint to the time of the query; NULL without a checkpoint.",
      source: "Derived as `julianday('now') - julianday(checkpoint)`",
    },
    drift: {
      meaning:
        "The source's total minus the mirror's at the last drift check of this kind and stream: above 0, the " +
        "mirror is short. NULL when none ran.",
      source: "Derived as `sync_runs.source_total - sync_runs.local_total`",
    },
    rejects: {
      meaning: "Records in `rejected_records`, all streams together.",
      source: "Derived as `count(*)`",
    },
  },
};

/** The views, in the order docs/schema.md lists them. */
export const VIEWS = {
  bookings_v: bookingsView,
  daily_bookings_v: dailyBookings,
  items_v: itemsView,
  sync_health_v: syncHealth,
};
