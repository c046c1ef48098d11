/**
 * The PostgreSQL twin of `../schema.ts`: the same tables, columns, keys, indexes and checks, so the
 * same SQL and values work on both backends. Meanings are in `../schema.ts` and the data dictionary.
 * What differs, and why:
 * - text compares byte by byte (`COLLATE "C"`), like SQLite's BINARY and JS's `<`, whatever the
 *   database's locale: times stay ISO 8601 UTC text, so text order is still time order, and `ORDER BY`,
 *   `max()` and `id > ?` agree with SQLite's;
 * - flags stay `integer` 0/1 (the views and `booking_changes` show them as 0/1);
 * - the source's integers (states, counts, totals) are `bigint`, as wide as SQLite's INTEGER: the
 *   API client lets through any safe integer, and one a 32-bit column refused would stop every run;
 * - `real` becomes `double precision`, SQLite's REAL;
 * - ids are `integer` identities: `RETURNING id` gives a JS number (pg returns int8 as a string), and
 *   GENERATED ALWAYS refuses an explicit id, which would leave the sequence behind.
 * Migrations under `drizzle/postgres/` are generated from this file and must not drift from it.
 */
import { sql } from "drizzle-orm";
import {
  bigint,
  check,
  customType,
  doublePrecision,
  index,
  integer,
  pgTable,
  primaryKey,
} from "drizzle-orm/pg-core";

/** Text in byte order, as in SQLite (see above); named `text` so the two schemas read alike. */
const text = customType<{ data: string; driverData: string }>({ dataType: () => 'text COLLATE "C"' });

export const bookings = pgTable(
  "bookings",
  {
    id: text("id").primaryKey(),
    searchId: text("search_id"),
    sourcePlatform: text("source_platform"),
    bookingType: text("booking_type"),
    /** NULL when the source served no valid `createdAt` (noted in `summary_problems`). */
    createdAt: text("created_at"),
    bookingDate: text("booking_date"),
    /** 0 or 1. */
    paid: integer("paid"),
    bookingState: bigint("booking_state", { mode: "number" }),
    orderState: bigint("order_state", { mode: "number" }),
    totalAmount: doublePrecision("total_amount"),
    weight: doublePrecision("weight"),
    numberOfPackages: bigint("number_of_packages", { mode: "number" }),
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
    /** JSON as received, kept as text (not jsonb) so it reads back byte for byte. */
    summaryJson: text("summary_json"),
    firstSeenAt: text("first_seen_at").notNull(),
    summarySyncedAt: text("summary_synced_at").notNull(),
    /** JSON as received, kept as text; the views cast it to jsonb. */
    detailJson: text("detail_json"),
    detailSyncedAt: text("detail_synced_at"),
    remoteUpdatedAt: text("remote_updated_at"),
    subTotal: doublePrecision("sub_total"),
    bookingVat: doublePrecision("booking_vat"),
    insuranceType: text("insurance_type"),
    insuranceFee: doublePrecision("insurance_fee"),
    insuredValue: doublePrecision("insured_value"),
    packageInsurance: text("package_insurance"),
    fuelSurchargeAmount: doublePrecision("fuel_surcharge_amount"),
    packagingFeeAmount: doublePrecision("packaging_fee_amount"),
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
    customerAcceptanceState: bigint("customer_acceptance_state", { mode: "number" }),
    sourceName: text("source_name"),
    sourceBranch: text("source_branch"),
    listedByRun: integer("listed_by_run"),
    missingSince: text("missing_since"),
    /** What was wrong with the summary as served (a field failing its check, a value over a cap); NULL when nothing. */
    summaryProblems: text("summary_problems"),
    /** What was wrong with the full record as served; NULL when nothing. */
    detailProblems: text("detail_problems"),
  },
  (t) => [
    index("bookings_created_at_idx").on(t.createdAt),
    // Hash indexes hold any length: a B-tree entry over ~2.7 kB fails its insert, and the source may send one.
    index("bookings_source_platform_idx").using("hash", t.sourcePlatform),
    index("bookings_paid_state_idx").on(t.paid, t.bookingState),
    index("bookings_booking_type_idx").on(t.bookingType),
    // The details queue's index; as in SQLite, the condition matches the query in reads.ts.
    index("bookings_needing_details_idx")
      .on(t.createdAt)
      .where(sql`detail_synced_at IS NULL OR summary_synced_at > detail_synced_at`),
    check("bookings_booking_type_check", sql`${t.bookingType} IN ('IN', 'LC')`),
  ],
);

export const bookingPackages = pgTable(
  "booking_packages",
  {
    bookingId: text("booking_id")
      .notNull()
      .references(() => bookings.id, { onDelete: "cascade" }),
    position: integer("position").notNull(),
    packageId: text("package_id"),
    actualWeight: doublePrecision("actual_weight"),
    length: doublePrecision("length"),
    width: doublePrecision("width"),
    height: doublePrecision("height"),
    dimensionWeight: doublePrecision("dimension_weight"),
    dimensionPrice: doublePrecision("dimension_price"),
    predefinedDimension: text("predefined_dimension"),
    multiple: doublePrecision("multiple"),
  },
  (t) => [primaryKey({ columns: [t.bookingId, t.position] })],
);

export const bookingItems = pgTable(
  "booking_items",
  {
    bookingId: text("booking_id")
      .notNull()
      .references(() => bookings.id, { onDelete: "cascade" }),
    packagePosition: integer("package_position").notNull(),
    position: integer("position").notNull(),
    itemId: text("item_id"),
    name: text("name"),
    hsCode: text("hs_code"),
    quantity: doublePrecision("quantity"),
    price: doublePrecision("price"),
    /** 0 or 1. */
    excludePackingList: integer("exclude_packing_list"),
  },
  (t) => [
    primaryKey({ columns: [t.bookingId, t.packagePosition, t.position] }),
    index("booking_items_hs_code_idx").using("hash", t.hsCode),
  ],
);

export const syncState = pgTable("sync_state", {
  stream: text("stream").primaryKey(),
  checkpoint: text("checkpoint"),
  progressJson: text("progress_json"),
  updatedAt: text("updated_at").notNull(),
});

export const syncRuns = pgTable(
  "sync_runs",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    kind: text("kind").notNull(),
    stream: text("stream"),
    startedAt: text("started_at").notNull(),
    finishedAt: text("finished_at"),
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
    sourceTotal: bigint("source_total", { mode: "number" }),
    localTotal: bigint("local_total", { mode: "number" }),
    gapsFound: integer("gaps_found").notNull().default(0),
    bookingsRepaired: integer("bookings_repaired").notNull().default(0),
  },
  (t) => [index("sync_runs_kind_idx").on(t.kind, t.id)],
);

export const rejectedRecords = pgTable("rejected_records", {
  id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
  runId: integer("run_id").references(() => syncRuns.id, { onDelete: "set null" }),
  endpoint: text("endpoint").notNull(),
  bookingId: text("booking_id"),
  createdAt: text("created_at"),
  reason: text("reason").notNull(),
  rawJson: text("raw_json").notNull(),
  rawSha256: text("raw_sha256").notNull().unique(),
  firstSeenAt: text("first_seen_at").notNull(),
});

export const leases = pgTable("leases", {
  name: text("name").primaryKey(),
  holder: text("holder").notNull(),
  pid: integer("pid").notNull(),
  hostname: text("hostname").notNull(),
  acquiredAt: text("acquired_at").notNull(),
  heartbeatAt: text("heartbeat_at").notNull(),
  expiresAt: text("expires_at").notNull(),
});

export const stateLabels = pgTable(
  "state_labels",
  {
    kind: text("kind").notNull(),
    code: bigint("code", { mode: "number" }).notNull(),
    label: text("label").notNull(),
  },
  (t) => [primaryKey({ columns: [t.kind, t.code] })],
);

export const bookingChanges = pgTable(
  "booking_changes",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    bookingId: text("booking_id")
      .notNull()
      .references(() => bookings.id, { onDelete: "cascade" }),
    field: text("field").notNull(),
    /** As text, flags as '0'/'1', exactly as in SQLite. */
    oldValue: text("old_value"),
    newValue: text("new_value"),
    observedAt: text("observed_at").notNull(),
    runId: integer("run_id").references(() => syncRuns.id, { onDelete: "set null" }),
  },
  (t) => [
    index("booking_changes_booking_idx").on(t.bookingId, t.observedAt),
    index("booking_changes_field_idx").on(t.field, t.observedAt),
  ],
);
