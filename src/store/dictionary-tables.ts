/**
 * The dictionary's booking data: `bookings`, its packages, items and change history, and the state
 * labels. "Summary view" is Fetch Recent Bookings' `data.bookings[]` (contract 2.6), "full view" is
 * List Bookings' `data[]` (contract 2.2). Names, columns and their order are `tables.ts`'s: an entry
 * only says what each column means, keyed as the code names it.
 */
import { TRACKED_COLUMNS } from "./changes.js";
import { by, type ColumnEntry, described, type RelationEntry, UTC, worker } from "./dictionary-entry.js";
import { LABEL_KINDS } from "./labels.js";
import * as schema from "./schema.js";

const BOTH = "(summary and full views)";
const FULL = "(full view)";
const PERSONAL = "Personal data: hashed or NULL under `SYNC_PERSONAL_DATA=hash` or `drop`.";

const field = (path: string, view: string) => `\`${path}\` ${view}`;
/** A column read from the contract's `path`, in both views or in the full view only. */
const both = (meaning: string, path: string): ColumnEntry => ({ meaning, source: field(path, BOTH) });
const full = (meaning: string, path: string): ColumnEntry => ({ meaning, source: field(path, FULL) });
const inPackage = (meaning: string, path: string) => full(meaning, `packages.packages[].${path}`);
const inItem = (meaning: string, path: string) => inPackage(meaning, `items[].${path}`);
const pickup = (meaning: string, path: string) => full(meaning, `collectionMode.pickupDetails.${path}`);
const CLOCK = "a clock time with AM/PM, as received, no zone.";
const unstated = (what: string) => `${what} (unit not stated by the contract).`;
const state = (what: string) =>
  `${what} code; the contract does not define the codes: their meanings are in \`state_labels\`.`;
/** Names as a meaning lists them: each in code marks, comma-separated. */
const names = (list: readonly string[]) => list.map((n) => `\`${n}\``).join(", ");
const imported = by("`booking-sync labels import FILE.json`");

const bookings = described(schema.bookings, {
  description:
    "One row per booking the worker has read: the summary columns from the feed (or the list), the detail " +
    "columns once the full record is fetched. Rows are never deleted: a booking the source stops serving " +
    "gets `missing_since`. Analysts start from `bookings_v`.",
  columns: {
    id: both("The booking's unique identifier.", "_id"),
    searchId: both("Short identifier for quick lookup.", "searchId"),
    sourcePlatform: both("Platform where the booking originated.", "sourcePlatform"),
    bookingType: {
      meaning: "`IN` (international) or `LC` (local); NULL until known.",
      source: `${field("type", FULL)}, or the \`bookingType\` of a type-scoped feed stream (\`feed:IN\`, \`feed:LC\`)`,
    },
    createdAt: {
      meaning: `When the booking was created, ${UTC}: the order the walks follow. NULL when the source never served a real one (see \`summary_problems\`, \`detail_problems\`); a later read without one keeps it.`,
      source: `${field("createdAt", BOTH)}, converted to UTC`,
    },
    bookingDate: both(`When the booking was made, ${UTC} when readable, else as received.`, "bookingDate"),
    paid: both("Whether payment is complete: 1 paid, 0 unpaid, NULL not stated.", "paid"),
    bookingState: both(state("Booking state"), "bookingState"),
    orderState: both(state("Order state"), "orderState"),
    totalAmount: both("Total including VAT and fees, NGN.", "totalAmount"),
    weight: both(unstated("Total weight of all packages"), "weight"),
    numberOfPackages: both("Number of packages.", "numberOfPackages"),
    senderName: both(`The sender's name. ${PERSONAL}`, "sender.contact.name"),
    senderPhone: both(`The sender's phone number. ${PERSONAL}`, "sender.contact.phone"),
    senderEmail: {
      meaning: `The sender's email address. ${PERSONAL}`,
      source: `${field("sender.contact.email", FULL)}; the summary's sender has none, so a feed update keeps it`,
    },
    senderCity: both("The sender's city.", "sender.addressDetails.city"),
    senderCountry: both("The sender's country.", "sender.addressDetails.country"),
    senderCountryCode: both("The sender's country code.", "sender.addressDetails.countryCode"),
    receiverName: both(`The receiver's name. ${PERSONAL}`, "receiver.contact.name"),
    receiverPhone: both(`The receiver's phone number. ${PERSONAL}`, "receiver.contact.phone"),
    receiverEmail: both(`The receiver's email address. ${PERSONAL}`, "receiver.contact.email"),
    receiverCity: both("The receiver's city.", "receiver.addressDetails.city"),
    receiverCountry: both("The receiver's country.", "receiver.addressDetails.country"),
    receiverCountryCode: both("The receiver's country code.", "receiver.addressDetails.countryCode"),
    summaryJson: {
      meaning:
        "The feed's record, every field kept, as the source served it, or as `JSON.stringify` writes it when that text cannot be kept (README, The mirror's schema); NULL until the feed serves the booking.",
      source: "The whole summary-view record",
    },
    firstSeenAt: worker(`When the worker first stored the booking (the page's read time), ${UTC}.`),
    summarySyncedAt: worker(`When the summary columns last changed, or the row was created, ${UTC}.`),
    detailJson: {
      meaning:
        "The list's full record, every field kept, as the source served it, or as `JSON.stringify` writes it when that text cannot be kept (README, The mirror's schema); NULL until details are fetched.",
      source: "The whole full-view record",
    },
    detailSyncedAt: worker(
      `When the details were last stored or confirmed current, ${UTC}; NULL until fetched.`,
    ),
    remoteUpdatedAt: full(
      `When the source last updated the booking, ${UTC}: an older copy never overwrites a newer one.`,
      "updatedAt",
    ),
    subTotal: full("Subtotal before taxes, NGN.", "subTotal"),
    bookingVat: full("VAT, NGN.", "bookingVat"),
    insuranceType: full("Insurance type.", "bookingInsurance.type"),
    insuranceFee: full("Insurance fee, NGN.", "bookingInsurance.fee"),
    insuredValue: full("Insured value, NGN.", "insuredValue"),
    packageInsurance: full("Insurance code.", "packageInsurance"),
    fuelSurchargeAmount: full("Fuel surcharge, NGN.", "extraCharges.fuelSurcharge.amount"),
    packagingFeeAmount: full("Packaging fee, NGN.", "extraCharges.packagingFee.amount"),
    deliveryType: full("`DROP_OFF` or `SIGNATURE_REQUIRED`.", "deliveryType"),
    deliveryMode: full("`DOOR_STEP` or `PICKUP`.", "deliveryMode"),
    serviceType: full("Service type, e.g. `AIR_EXPORT`.", "serviceType"),
    carrier: full("Carrier code.", "carrier"),
    shipmentRate: full("Rate code.", "shipmentRate"),
    branchName: full("Branch handling the booking.", "branchName"),
    servedBy: full("The partner's staff member who handled the booking.", "servedBy"),
    collectionType: full("How the shipment is collected, e.g. `PICKUP`.", "collectionMode.collectionType"),
    pickupDate: pickup(`Pickup date, ${UTC} when readable, else as received.`, "pickupDate"),
    pickupTimeFrom: pickup(`Start of the pickup window: ${CLOCK}`, "pickupTimeRange.from"),
    pickupTimeTo: pickup(`End of the pickup window: ${CLOCK}`, "pickupTimeRange.to"),
    promoCode: full("Promotion code; may be empty.", "promoCode"),
    customerAcceptanceState: full(state("Customer acceptance state"), "customerAcceptanceState"),
    sourceName: full("Name of the source organisation.", "source.name"),
    sourceBranch: full("Branch of the source organisation.", "source.branch"),
    listedByRun: worker("The last run (`sync_runs.id`) whose list-bookings pass served the booking."),
    missingSince: {
      meaning: `When \`reconcile\` found the source no longer serves the booking, ${UTC}; NULL while served, cleared if it returns.`,
      source: "Worker (`reconcile`)",
    },
    summaryProblems: {
      meaning:
        "What was wrong with the feed's record, `; `-separated, one `path: problem` each (a field that failed its " +
        "check and is NULL in its column, a value over 64 KiB or a record over 1 MiB kept as a marker in " +
        "`summary_json`, a `createdAt` that is no real time); NULL when nothing was.",
      source: "Worker, from the summary-view record",
    },
    detailProblems: {
      meaning: "As `summary_problems`, for the list's full record; NULL when nothing was.",
      source: "Worker, from the full-view record",
    },
    detailsMisses: worker(
      "How many details passes in a row read list-bookings past the booking without finding it (deleted at the source, most likely); NULL once its details are read.",
    ),
    detailsSeekAfter: worker(
      `Until this time, ${UTC}, details passes put the booking off; NULL once its details are read or the feed shows it changed. Each miss puts it off twice as long as the one before (a minute, two, four...), and at least twice as long as the walk that missed it spent reading, never over a week, so a booking the source deleted does not send every pass down the list to it. \`reconcile\` decides whether it is missing.`,
    ),
  },
});

const bookingPackages = described(schema.bookingPackages, {
  description:
    "One row per package of a booking with details, replaced whenever the booking's details change.",
  columns: {
    bookingId: full("The booking (`bookings.id`).", "_id"),
    position: worker("0-based position of the package in `packages.packages`."),
    packageId: inPackage("The package's identifier.", "_id"),
    actualWeight: inPackage(unstated("Actual weight"), "actualWeight"),
    length: inPackage(unstated("Length"), "packageDimension.length"),
    width: inPackage(unstated("Width"), "packageDimension.width"),
    height: inPackage(unstated("Height"), "packageDimension.height"),
    dimensionWeight: inPackage(unstated("Weight of the package's dimension"), "packageDimension.weight"),
    dimensionPrice: inPackage("Price of the package's dimension, NGN.", "packageDimension.price"),
    predefinedDimension: inPackage("Identifier of a predefined dimension.", "predefinedDimension"),
    multiple: inPackage("As received; the contract does not say what it counts.", "multiple"),
  },
});

const bookingItems = described(schema.bookingItems, {
  description:
    "One row per item of each package, replaced whenever the booking's details change; only bookings with " +
    "details have items. The contract's top-level `packages.items` is kept in `detail_json` only.",
  columns: {
    bookingId: full("The booking (`bookings.id`).", "_id"),
    packagePosition: worker("0-based position of the item's package in `packages.packages`."),
    position: worker("0-based position of the item in its package's `items`."),
    itemId: {
      meaning: "The item's identifier.",
      source: `\`packages.packages[].items[]._id\`, or \`id\` when \`_id\` is absent ${FULL}`,
    },
    name: inItem("The item's name, free text.", "name"),
    hsCode: inItem("Harmonized System code, as declared.", "hsCode"),
    quantity: inItem("Quantity.", "quantity"),
    price: inItem("Declared price of one unit, NGN.", "price"),
    excludePackingList: inItem(
      "1 when the item is left off the packing list, 0 otherwise.",
      "excludePackingList",
    ),
  },
});

const bookingChanges = described(schema.bookingChanges, {
  description:
    "Every change the worker observed in a stored booking's tracked columns. First sight is not a change, " +
    "nor is a re-read of the same values; a booking changes here only when a walk reads it again.",
  columns: {
    id: worker("Row id, in the order the changes were recorded."),
    bookingId: worker("The booking (`bookings.id`)."),
    field: worker(`The \`bookings\` column that changed: ${names(TRACKED_COLUMNS)}.`),
    oldValue: worker("The value before, as text as `bookings` stored it (flags 0/1); NULL when absent."),
    newValue: worker("The value after, as text as `bookings` stores it (flags 0/1); NULL when absent."),
    observedAt: worker(
      `When the worker read the new value (the page's read time), ${UTC}; not when the source changed it.`,
    ),
    runId: worker("The run that saw it (`sync_runs.id`), when known."),
  },
});

const stateLabels = described(schema.stateLabels, {
  description:
    "What the source's state codes mean; the contract does not say. A view shows `state <code>` for a " +
    "code without a label.",
  columns: {
    kind: imported(`Which code: ${names(LABEL_KINDS)}.`),
    code: imported("The state code."),
    label: imported("What the code means."),
  },
});

/** The booking data, in the order docs/schema.md lists it. */
export const BOOKING_TABLES: Record<string, RelationEntry> = Object.fromEntries([
  bookings,
  bookingPackages,
  bookingItems,
  bookingChanges,
  stateLabels,
]);
