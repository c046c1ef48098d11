/**
 * The mirror's tables, typed for analysts; times are UTC ISO 8601 text, so text order is time order.
 * Migrations under `drizzle/` are generated from this file and must not drift from it.
 */
import { sql } from "drizzle-orm";
import { check, index, integer, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** One row per booking, from the feed's summary view and, once fetched, the list's full view. */
export const bookings = sqliteTable(
  "bookings",
  {
    /** The booking's `_id`. */
    id: text("id").primaryKey(),
    searchId: text("search_id"),
    sourcePlatform: text("source_platform"),
    /** IN or LC when known: from the full record's `type`, or from a type-scoped feed stream. */
    bookingType: text("booking_type"),
    /** NULL when the source served no valid `createdAt` (noted in `summary_problems`). */
    createdAt: text("created_at"),
    bookingDate: text("booking_date"),
    paid: integer("paid", { mode: "boolean" }),
    bookingState: integer("booking_state"),
    orderState: integer("order_state"),
    /** NGN, stored exactly as the JSON number. */
    totalAmount: real("total_amount"),
    weight: real("weight"),
    numberOfPackages: integer("number_of_packages"),
    senderName: text("sender_name"),
    senderPhone: text("sender_phone"),
    senderEmail: text("sender_email"),
    senderCity: text("sender_city"),
    senderCountry: text("sender_country"),
    senderCountryCode: text("sender_country_code"),
    receiverName: text("receiver_name"),
    receiverPhone: text("receiver_phone"),
    receiverEmail: text("receiver_email"),
    receiverCity: text("receiver_city"),
    receiverCountry: text("receiver_country"),
    receiverCountryCode: text("receiver_country_code"),
    /** The feed's summary, every field as received (`JSON.stringify`); null until the feed serves it. */
    summaryJson: text("summary_json"),
    firstSeenAt: text("first_seen_at").notNull(),
    /** When the summary last changed (or the row was created). */
    summarySyncedAt: text("summary_synced_at").notNull(),
    /** The list's full record, every field as received (`JSON.stringify`); null until details are fetched. */
    detailJson: text("detail_json"),
    detailSyncedAt: text("detail_synced_at"),
    /** The full record's `updatedAt`: the stale-write guard compares against it. */
    remoteUpdatedAt: text("remote_updated_at"),
    subTotal: real("sub_total"),
    bookingVat: real("booking_vat"),
    insuranceType: text("insurance_type"),
    insuranceFee: real("insurance_fee"),
    insuredValue: real("insured_value"),
    packageInsurance: text("package_insurance"),
    fuelSurchargeAmount: real("fuel_surcharge_amount"),
    packagingFeeAmount: real("packaging_fee_amount"),
    deliveryType: text("delivery_type"),
    deliveryMode: text("delivery_mode"),
    serviceType: text("service_type"),
    carrier: text("carrier"),
    shipmentRate: text("shipment_rate"),
    branchName: text("branch_name"),
    servedBy: text("served_by"),
    collectionType: text("collection_type"),
    pickupDate: text("pickup_date"),
    pickupTimeFrom: text("pickup_time_from"),
    pickupTimeTo: text("pickup_time_to"),
    promoCode: text("promo_code"),
    customerAcceptanceState: integer("customer_acceptance_state"),
    sourceName: text("source_name"),
    sourceBranch: text("source_branch"),
    /** The last run whose list-bookings pass served this booking; reconcile marks the rest missing. */
    listedByRun: integer("listed_by_run"),
    /** Set by reconcile when the source no longer serves the booking; rows are never deleted. */
    missingSince: text("missing_since"),
    /** What was wrong with the summary as served (a field failing its check, a value over a cap); NULL when nothing. */
    summaryProblems: text("summary_problems"),
    /** What was wrong with the full record as served; NULL when nothing. */
    detailProblems: text("detail_problems"),
  },
  (t) => [
    index("bookings_created_at_idx").on(t.createdAt),
    index("bookings_source_platform_idx").on(t.sourcePlatform),
    index("bookings_paid_state_idx").on(t.paid, t.bookingState),
    index("bookings_booking_type_idx").on(t.bookingType),
    // Keeps the details queue cheap to find however large the mirror grows; the condition must
    // match the query in reads.ts verbatim for SQLite to use the index.
    index("bookings_needing_details_idx")
      .on(t.createdAt)
      .where(sql`detail_synced_at IS NULL OR summary_synced_at > detail_synced_at`),
    check("bookings_booking_type_check", sql`${t.bookingType} IN ('IN', 'LC')`),
  ],
);

/** A booking's packages, replaced whenever its details change. */
export const bookingPackages = sqliteTable(
  "booking_packages",
  {
    bookingId: text("booking_id")
      .notNull()
      .references(() => bookings.id, { onDelete: "cascade" }),
    /** 0-based position in `packages.packages`. */
    position: integer("position").notNull(),
    packageId: text("package_id"),
    actualWeight: real("actual_weight"),
    length: real("length"),
    width: real("width"),
    height: real("height"),
    dimensionWeight: real("dimension_weight"),
    dimensionPrice: real("dimension_price"),
    predefinedDimension: text("predefined_dimension"),
    multiple: real("multiple"),
  },
  (t) => [primaryKey({ columns: [t.bookingId, t.position] })],
);

/** The items of each package, replaced whenever the booking's details change. */
export const bookingItems = sqliteTable(
  "booking_items",
  {
    bookingId: text("booking_id")
      .notNull()
      .references(() => bookings.id, { onDelete: "cascade" }),
    /** The package's 0-based position in `packages.packages`. */
    packagePosition: integer("package_position").notNull(),
    /** 0-based position in the package's `items`. */
    position: integer("position").notNull(),
    /** The item's `_id` (or `id` when `_id` is absent). */
    itemId: text("item_id"),
    name: text("name"),
    hsCode: text("hs_code"),
    quantity: real("quantity"),
    price: real("price"),
    excludePackingList: integer("exclude_packing_list", { mode: "boolean" }),
  },
  (t) => [
    primaryKey({ columns: [t.bookingId, t.packagePosition, t.position] }),
    index("booking_items_hs_code_idx").on(t.hsCode),
  ],
);

/** One row per stream (`feed`, `feed:IN`, `backfill`, …): its checkpoint and resumable progress. */
export const syncState = sqliteTable("sync_state", {
  stream: text("stream").primaryKey(),
  /** Newest `createdAt` known to be fully mirrored; only ever moves forward. */
  checkpoint: text("checkpoint"),
  /** The unfinished walk (WalkProgress) or other resumable progress, as JSON; null when none. */
  progressJson: text("progress_json"),
  updatedAt: text("updated_at").notNull(),
});

/** One row per run of any kind, written at its start and completed at its end. */
export const syncRuns = sqliteTable(
  "sync_runs",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    kind: text("kind").notNull(),
    stream: text("stream"),
    startedAt: text("started_at").notNull(),
    finishedAt: text("finished_at"),
    /** running, success, failed, aborted, or interrupted (left running by a process that died). */
    status: text("status").notNull(),
    pages: integer("pages").notNull().default(0),
    requests: integer("requests").notNull().default(0),
    retries: integer("retries").notNull().default(0),
    bookingsNew: integer("bookings_new").notNull().default(0),
    bookingsUpdated: integer("bookings_updated").notNull().default(0),
    bookingsUnchanged: integer("bookings_unchanged").notNull().default(0),
    rejects: integer("rejects").notNull().default(0),
    checkpointBefore: text("checkpoint_before"),
    checkpointAfter: text("checkpoint_after"),
    error: text("error"),
    /** The source's total, when a drift check ran. */
    sourceTotal: integer("source_total"),
    /** The mirror's matching total, when a drift check ran. */
    localTotal: integer("local_total"),
    /** Gaps the repair found by position in the mirror and read (repair.ts). */
    gapsFound: integer("gaps_found").notNull().default(0),
    /** Bookings the repair added: ones an earlier pass had missed. */
    bookingsRepaired: integer("bookings_repaired").notNull().default(0),
  },
  (t) => [index("sync_runs_kind_idx").on(t.kind, t.id)],
);

/** Quarantined records that failed validation, each kept once (deduplicated by the hash of its JSON). */
export const rejectedRecords = sqliteTable("rejected_records", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  runId: integer("run_id").references(() => syncRuns.id, { onDelete: "set null" }),
  /** `feed` or `list`. */
  endpoint: text("endpoint").notNull(),
  bookingId: text("booking_id"),
  createdAt: text("created_at"),
  reason: text("reason").notNull(),
  rawJson: text("raw_json").notNull(),
  /** SHA-256 of `raw_json`, hex: seeing the same bad record twice adds nothing. */
  rawSha256: text("raw_sha256").notNull().unique(),
  firstSeenAt: text("first_seen_at").notNull(),
});

/** Named leases for the single-writer rule; a lease past `expires_at` may be taken over. */
export const leases = sqliteTable("leases", {
  name: text("name").primaryKey(),
  /** `host:pid:random`, unique per process and start. */
  holder: text("holder").notNull(),
  pid: integer("pid").notNull(),
  hostname: text("hostname").notNull(),
  acquiredAt: text("acquired_at").notNull(),
  heartbeatAt: text("heartbeat_at").notNull(),
  expiresAt: text("expires_at").notNull(),
});

/** What the source's state codes mean; filled by `booking-sync labels import`, joined by the views. */
export const stateLabels = sqliteTable(
  "state_labels",
  {
    /** `booking_state`, `order_state` or `customer_acceptance_state`. */
    kind: text("kind").notNull(),
    code: integer("code").notNull(),
    label: text("label").notNull(),
  },
  (t) => [primaryKey({ columns: [t.kind, t.code] })],
);

/** Every change the worker observed in a booking's tracked fields; first sight is not a change. */
export const bookingChanges = sqliteTable(
  "booking_changes",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    bookingId: text("booking_id")
      .notNull()
      .references(() => bookings.id, { onDelete: "cascade" }),
    /** The `bookings` column that changed, e.g. `paid` or `booking_state`. */
    field: text("field").notNull(),
    /** The values as stored in `bookings`, as text (0/1 for flags); null when absent. */
    oldValue: text("old_value"),
    newValue: text("new_value"),
    /** When the worker saw the new value (the page's read time). */
    observedAt: text("observed_at").notNull(),
    /** The run that saw it, when known. */
    runId: integer("run_id").references(() => syncRuns.id, { onDelete: "set null" }),
  },
  (t) => [
    index("booking_changes_booking_idx").on(t.bookingId, t.observedAt),
    index("booking_changes_field_idx").on(t.field, t.observedAt),
  ],
);
