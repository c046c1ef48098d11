/**
 * The mirror's tables, described once for both databases: each column by its kind, each index and
 * check by what it holds. `schema.ts` (SQLite) and `postgres/schema.ts` say how their database
 * builds each kind; migrations under `drizzle/` are generated from those two and must not drift.
 * What each column means is in the data dictionary (`dictionary-tables.ts`, `dictionary-operations.ts`),
 * keyed by the names used here: a column added here without a meaning there fails the typecheck.
 * Times are UTC ISO 8601 text, so text order is time order.
 */
import { type AnyColumn, type HasDefault, type NotNull, sql } from "drizzle-orm";
import { type Builder as B, type Built, type Dialect, spec } from "./table-dialect.js";

/** The built tables a foreign key points at, read only once every table is built. */
type Targets = { bookings: { id: AnyColumn }; syncRuns: { id: AnyColumn } };

/** The mirror's tables as `d`'s database builds them, typed its way. */
export function mirrorTables<
  T extends B,
  I extends B,
  W extends B,
  R extends B,
  F extends B,
  D extends B,
  P extends B,
  Q extends B,
  N extends "sqlite" | "pg",
>(
  d: Dialect<T, I, W, R, F, D, P, Q> & { name: N },
): Built<ReturnType<typeof describeTables<T, I, W, R, F, D, P, Q>>, N> {
  const built: Record<string, unknown> = {};
  const specs = describeTables(d, () => built as Targets);
  for (const [key, s] of Object.entries(specs))
    built[key] = d.table(s.name, s.columns as never, s.extras as never);
  return built as never;
}

/** The mirror's tables in `d`'s terms; `built` gives the finished tables the foreign keys name. */
function describeTables<
  T extends B,
  I extends B,
  W extends B,
  R extends B,
  F extends B,
  D extends B,
  P extends B,
  Q extends B,
>(d: Dialect<T, I, W, R, F, D, P, Q>, built: () => Targets) {
  const booking = () =>
    d
      .text("booking_id")
      .notNull()
      .references(() => built().bookings.id, { onDelete: "cascade" });
  const run = () => d.integer("run_id").references(() => built().syncRuns.id, { onDelete: "set null" });
  // Any integer builder takes 0 as its default, and stays not null; the generic type cannot say so.
  const zero = <X extends B>(column: X) => column.notNull().default(0 as never) as HasDefault<NotNull<X>>;
  const counter = (name: string) => zero(d.integer(name));
  return {
    /** One row per booking, from the feed's summary view and, once fetched, the list's full view. */
    bookings: spec(
      "bookings",
      {
        id: d.text("id").primaryKey(),
        searchId: d.text("search_id"),
        sourcePlatform: d.text("source_platform"),
        bookingType: d.text("booking_type"),
        createdAt: d.text("created_at"),
        bookingDate: d.text("booking_date"),
        paid: d.flag("paid"),
        bookingState: d.wide("booking_state"),
        orderState: d.wide("order_state"),
        totalAmount: d.real("total_amount"),
        weight: d.real("weight"),
        numberOfPackages: d.wide("number_of_packages"),
        senderName: d.text("sender_name"),
        senderPhone: d.text("sender_phone"),
        senderEmail: d.text("sender_email"),
        senderCity: d.text("sender_city"),
        senderCountry: d.text("sender_country"),
        senderCountryCode: d.text("sender_country_code"),
        receiverName: d.text("receiver_name"),
        receiverPhone: d.text("receiver_phone"),
        receiverEmail: d.text("receiver_email"),
        receiverCity: d.text("receiver_city"),
        receiverCountry: d.text("receiver_country"),
        receiverCountryCode: d.text("receiver_country_code"),
        summaryJson: d.text("summary_json"),
        firstSeenAt: d.text("first_seen_at").notNull(),
        summarySyncedAt: d.text("summary_synced_at").notNull(),
        detailJson: d.text("detail_json"),
        detailSyncedAt: d.text("detail_synced_at"),
        remoteUpdatedAt: d.text("remote_updated_at"),
        subTotal: d.real("sub_total"),
        bookingVat: d.real("booking_vat"),
        insuranceType: d.text("insurance_type"),
        insuranceFee: d.real("insurance_fee"),
        insuredValue: d.real("insured_value"),
        packageInsurance: d.text("package_insurance"),
        fuelSurchargeAmount: d.real("fuel_surcharge_amount"),
        packagingFeeAmount: d.real("packaging_fee_amount"),
        deliveryType: d.text("delivery_type"),
        deliveryMode: d.text("delivery_mode"),
        serviceType: d.text("service_type"),
        carrier: d.text("carrier"),
        shipmentRate: d.text("shipment_rate"),
        branchName: d.text("branch_name"),
        servedBy: d.text("served_by"),
        collectionType: d.text("collection_type"),
        pickupDate: d.text("pickup_date"),
        pickupTimeFrom: d.text("pickup_time_from"),
        pickupTimeTo: d.text("pickup_time_to"),
        promoCode: d.text("promo_code"),
        customerAcceptanceState: d.wide("customer_acceptance_state"),
        sourceName: d.text("source_name"),
        sourceBranch: d.text("source_branch"),
        listedByRun: d.integer("listed_by_run"),
        missingSince: d.text("missing_since"),
        summaryProblems: d.text("summary_problems"),
        detailProblems: d.text("detail_problems"),
        detailsMisses: d.integer("details_misses"),
        detailsSeekAfter: d.text("details_seek_after"),
      },
      (t) => [
        d.index("bookings_created_at_idx").on(t.createdAt),
        d.textIndex("bookings_source_platform_idx", t.sourcePlatform),
        d.index("bookings_paid_state_idx").on(t.paid, t.bookingState),
        d.index("bookings_booking_type_idx").on(t.bookingType),
        // Keeps the details queue cheap to find however large the mirror grows; the condition must
        // match the query in reads.ts verbatim for the database to use the index.
        d
          .index("bookings_needing_details_idx")
          .on(t.createdAt)
          .where(sql`detail_synced_at IS NULL OR summary_synced_at > detail_synced_at`),
        d.check("bookings_booking_type_check", sql`${t.bookingType} IN ('IN', 'LC')`),
      ],
    ),
    /** A booking's packages, replaced whenever its details change. */
    bookingPackages: spec(
      "booking_packages",
      {
        bookingId: booking(),
        position: d.integer("position").notNull(),
        packageId: d.text("package_id"),
        actualWeight: d.real("actual_weight"),
        length: d.real("length"),
        width: d.real("width"),
        height: d.real("height"),
        dimensionWeight: d.real("dimension_weight"),
        dimensionPrice: d.real("dimension_price"),
        predefinedDimension: d.text("predefined_dimension"),
        multiple: d.real("multiple"),
      },
      (t) => [d.primaryKey({ columns: [t.bookingId, t.position] })],
    ),
    /** The items of each package, replaced whenever the booking's details change. */
    bookingItems: spec(
      "booking_items",
      {
        bookingId: booking(),
        packagePosition: d.integer("package_position").notNull(),
        position: d.integer("position").notNull(),
        itemId: d.text("item_id"),
        name: d.text("name"),
        hsCode: d.text("hs_code"),
        quantity: d.real("quantity"),
        price: d.real("price"),
        excludePackingList: d.flag("exclude_packing_list"),
      },
      (t) => [
        d.primaryKey({ columns: [t.bookingId, t.packagePosition, t.position] }),
        d.textIndex("booking_items_hs_code_idx", t.hsCode),
      ],
    ),
    /** One row per stream (`feed`, `feed:IN`, `backfill`, …): its checkpoint and resumable progress. */
    syncState: spec("sync_state", {
      stream: d.text("stream").primaryKey(),
      checkpoint: d.text("checkpoint"),
      progressJson: d.text("progress_json"),
      updatedAt: d.text("updated_at").notNull(),
    }),
    /** One row per run of any kind, written at its start and completed at its end. */
    syncRuns: spec(
      "sync_runs",
      {
        id: d.id("id"),
        kind: d.text("kind").notNull(),
        stream: d.text("stream"),
        startedAt: d.text("started_at").notNull(),
        finishedAt: d.text("finished_at"),
        status: d.text("status").notNull(),
        pages: counter("pages"),
        requests: counter("requests"),
        retries: counter("retries"),
        bookingsNew: counter("bookings_new"),
        bookingsUpdated: counter("bookings_updated"),
        bookingsUnchanged: counter("bookings_unchanged"),
        rejects: counter("rejects"),
        checkpointBefore: d.text("checkpoint_before"),
        checkpointAfter: d.text("checkpoint_after"),
        error: d.text("error"),
        sourceTotal: d.wide("source_total"),
        localTotal: d.wide("local_total"),
        gapsFound: counter("gaps_found"),
        bookingsRepaired: counter("bookings_repaired"),
      },
      (t) => [d.index("sync_runs_kind_idx").on(t.kind, t.id)],
    ),
    /** Quarantined records that failed validation, each kept once (deduplicated by the hash of its JSON). */
    rejectedRecords: spec("rejected_records", {
      id: d.id("id"),
      runId: run(),
      endpoint: d.text("endpoint").notNull(),
      bookingId: d.text("booking_id"),
      createdAt: d.text("created_at"),
      reason: d.text("reason").notNull(),
      rawJson: d.text("raw_json").notNull(),
      rawSha256: d.text("raw_sha256").notNull().unique(),
      firstSeenAt: d.text("first_seen_at").notNull(),
    }),
    /** Named leases for the single-writer rule; a lease past `expires_at` may be taken over. */
    leases: spec("leases", {
      name: d.text("name").primaryKey(),
      holder: d.text("holder").notNull(),
      pid: d.integer("pid").notNull(),
      hostname: d.text("hostname").notNull(),
      acquiredAt: d.text("acquired_at").notNull(),
      heartbeatAt: d.text("heartbeat_at").notNull(),
      expiresAt: d.text("expires_at").notNull(),
    }),
    /** What the source's state codes mean; filled by `booking-sync labels import`, joined by the views. */
    stateLabels: spec(
      "state_labels",
      {
        kind: d.text("kind").notNull(),
        code: d.wide("code").notNull(),
        label: d.text("label").notNull(),
      },
      (t) => [d.primaryKey({ columns: [t.kind, t.code] })],
    ),
    /** Every change the worker observed in a booking's tracked fields; first sight is not a change. */
    bookingChanges: spec(
      "booking_changes",
      {
        id: d.id("id"),
        bookingId: booking(),
        field: d.text("field").notNull(),
        oldValue: d.text("old_value"),
        newValue: d.text("new_value"),
        observedAt: d.text("observed_at").notNull(),
        runId: run(),
      },
      (t) => [
        d.index("booking_changes_booking_idx").on(t.bookingId, t.observedAt),
        d.index("booking_changes_field_idx").on(t.field, t.observedAt),
      ],
    ),
    /** The events stream's outbox: each booking created, changed, marked missing or back, in id order. */
    bookingEvents: spec(
      "booking_events",
      {
        id: d.positionId("id"),
        type: d.text("type").notNull(),
        bookingId: d.text("booking_id").notNull(),
        at: d.text("at").notNull(),
        runId: run(),
        data: d.text("data").notNull(),
      },
      (t) => [d.index("booking_events_at_idx").on(t.at)],
    ),
    /** Where the webhook sink has got to in the events stream, and the message it is sending. */
    eventDelivery: spec("event_delivery", {
      name: d.text("name").primaryKey(),
      endpoint: d.text("endpoint"),
      cursor: zero(d.position("cursor")),
      messageId: d.text("message_id"),
      messageFirst: d.position("message_first"),
      messageLast: d.position("message_last"),
      messageReplay: d.position("message_replay"),
      attempts: counter("attempts"),
      nextAttemptAt: d.text("next_attempt_at"),
      lastError: d.text("last_error"),
      lastErrorAt: d.text("last_error_at"),
      lastDeliveredAt: d.text("last_delivered_at"),
      dropped: counter("dropped"),
      droppedAt: d.text("dropped_at"),
    }),
    /** Ranges of events `booking-sync events replay` asked the webhook sink to send again. */
    eventReplays: spec("event_replays", {
      id: d.positionId("id"),
      fromId: d.position("from_id").notNull(),
      toId: d.position("to_id").notNull(),
      nextId: d.position("next_id").notNull(),
      requestedAt: d.text("requested_at").notNull(),
      finishedAt: d.text("finished_at"),
    }),
    /**
     * The events stream's identity: one row, a random id its migration made, so a consumer can tell
     * this stream from the one a recreated mirror starts again at id 1.
     */
    eventStream: spec("event_stream", { id: d.text("id").primaryKey() }),
  };
}
