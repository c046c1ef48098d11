/**
 * The dictionary's views (drizzle/0003_views.sql). A column passed through from a table shares that
 * column's entry, so the two cannot say different things.
 */
import { OPERATIONAL_TABLES } from "./dictionary-operations.js";
import { BOOKING_TABLES } from "./dictionary-tables.js";

interface Entry {
  meaning: string;
  source: string;
}

/** The entry of `table.column`, its source naming the column it passes through. */
function via<T extends Record<string, Entry>>(table: string, columns: T, column: keyof T & string): Entry {
  const { meaning, source } = columns[column] as Entry;
  return { meaning, source: `${source}, via \`${table}.${column}\`` };
}

const B = BOOKING_TABLES.bookings.columns;
const bookings = (column: keyof typeof B) => via("bookings", B, column);
const I = BOOKING_TABLES.booking_items.columns;
const items = (column: keyof typeof I) => via("booking_items", I, column);
const R = OPERATIONAL_TABLES.sync_runs.columns;
const runs = (column: keyof typeof R) => via("sync_runs", R, column);

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
    booking_id: bookings("id"),
    search_id: bookings("search_id"),
    source_platform: bookings("source_platform"),
    booking_type: bookings("booking_type"),
    created_at: bookings("created_at"),
    lagos_day: LAGOS_DAY,
    booking_date: bookings("booking_date"),
    paid: bookings("paid"),
    paid_label: { meaning: "`paid`, `unpaid`, or NULL when not stated.", source: "Derived from `paid`" },
    booking_state: bookings("booking_state"),
    booking_state_label: label("booking_state"),
    order_state: bookings("order_state"),
    order_state_label: label("order_state"),
    customer_acceptance_state: bookings("customer_acceptance_state"),
    customer_acceptance_state_label: label("customer_acceptance_state"),
    total_amount: bookings("total_amount"),
    sub_total: bookings("sub_total"),
    vat: bookings("booking_vat"),
    insurance_fee: bookings("insurance_fee"),
    fuel_surcharge_amount: bookings("fuel_surcharge_amount"),
    packaging_fee_amount: bookings("packaging_fee_amount"),
    weight: bookings("weight"),
    number_of_packages: bookings("number_of_packages"),
    carrier: bookings("carrier"),
    service_type: bookings("service_type"),
    delivery_type: bookings("delivery_type"),
    delivery_mode: bookings("delivery_mode"),
    shipment_rate: bookings("shipment_rate"),
    branch_name: bookings("branch_name"),
    sender_city: bookings("sender_city"),
    sender_country_code: bookings("sender_country_code"),
    receiver_city: bookings("receiver_city"),
    receiver_country_code: bookings("receiver_country_code"),
    has_details: {
      meaning: "1 when the full record has been fetched (detail columns, packages and items filled), else 0.",
      source: "Derived as `detail_synced_at IS NOT NULL`",
    },
    first_seen_at: bookings("first_seen_at"),
    summary_synced_at: bookings("summary_synced_at"),
    detail_synced_at: bookings("detail_synced_at"),
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
    source_platform: bookings("source_platform"),
    booking_type: bookings("booking_type"),
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
    booking_id: items("booking_id"),
    created_at: bookings("created_at"),
    lagos_day: LAGOS_DAY,
    source_platform: bookings("source_platform"),
    booking_type: bookings("booking_type"),
    package_position: items("package_position"),
    package_id: via("booking_packages", BOOKING_TABLES.booking_packages.columns, "package_id"),
    item_position: items("position"),
    item_id: items("item_id"),
    name: items("name"),
    hs_code: items("hs_code"),
    quantity: items("quantity"),
    price: items("price"),
    line_value: {
      meaning:
        "Declared value of the line, `quantity` × `price`, NGN: what the goods are declared to be worth, not " +
        "what the booking earned.",
      source: "Derived as `quantity * price`",
    },
    exclude_packing_list: items("exclude_packing_list"),
  },
};

const syncHealth = {
  description:
    "One row per run kind and stream: the last run, its status and error, the last success, the checkpoint " +
    "and its age, the drift of the last drift check, and the rejects.",
  internal: false,
  columns: {
    kind: runs("kind"),
    stream: runs("stream"),
    last_run_id: {
      meaning: "The latest run of this kind and stream (`sync_runs.id`).",
      source: "`sync_runs.id`",
    },
    last_status: runs("status"),
    last_started_at: runs("started_at"),
    last_finished_at: runs("finished_at"),
    last_error: runs("error"),
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
