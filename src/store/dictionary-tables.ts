/**
 * The dictionary's booking data: `bookings`, its packages, items and change history, and the state
 * labels. "Summary view" is Fetch Recent Bookings' `data.bookings[]` (contract 2.6), "full view" is
 * List Bookings' `data[]` (contract 2.2). Names, columns and their order are `tables.ts`'s: an entry
 * only says what each column means, keyed as the code names it.
 */
import { TRACKED_COLUMNS } from "./changes.js";
import { type ColumnEntry, described, type RelationEntry } from "./dictionary-entry.js";
import { LABEL_KINDS } from "./labels.js";
import * as schema from "./schema.js";

/** A value the sync worker sets itself. */
export const worker = (meaning: string): ColumnEntry => ({ meaning, source: "Worker" });

const BOTH = "(summary and full views)";
const FULL = "(full view)";
const PERSONAL = "Personal data: hashed or NULL under `SYNC_PERSONAL_DATA=hash` or `drop`.";
const UTC = "UTC ISO 8601 text with milliseconds";
const UNIT_NOT_STATED = "unit not stated by the contract";
const LABELS_IMPORT = "`booking-sync labels import FILE.json`";

const both = (field: string) => `\`${field}\` ${BOTH}`;
const full = (field: string) => `\`${field}\` ${FULL}`;
const inPackage = (field: string) => full(`packages.packages[].${field}`);
const inItem = (field: string) => inPackage(`items[].${field}`);
const state = (what: string) =>
  `${what} code; the contract does not define the codes: their meanings are in \`state_labels\`.`;
const bookings = described(schema.bookings, {
  description:
    "One row per booking the worker has read: the summary columns from the feed (or the list), the detail " +
    "columns once the full record is fetched. Rows are never deleted: a booking the source stops serving " +
    "gets `missing_since`. Analysts start from `bookings_v`.",
  columns: {
    id: { meaning: "The booking's unique identifier.", source: both("_id") },
    searchId: { meaning: "Short identifier for quick lookup.", source: both("searchId") },
    sourcePlatform: { meaning: "Platform where the booking originated.", source: both("sourcePlatform") },
    bookingType: {
      meaning: "`IN` (international) or `LC` (local); NULL until known.",
      source: `${full("type")}, or the \`bookingType\` of a type-scoped feed stream (\`feed:IN\`, \`feed:LC\`)`,
    },
    createdAt: {
      meaning: `When the booking was created, ${UTC}: the order the walks follow. NULL when the source never served a real one (see \`summary_problems\`, \`detail_problems\`); a later read without one keeps it.`,
      source: `${both("createdAt")}, converted to UTC`,
    },
    bookingDate: {
      meaning: `When the booking was made, ${UTC} when readable, else as received.`,
      source: both("bookingDate"),
    },
    paid: {
      meaning: "Whether payment is complete: 1 paid, 0 unpaid, NULL not stated.",
      source: both("paid"),
    },
    bookingState: { meaning: state("Booking state"), source: both("bookingState") },
    orderState: { meaning: state("Order state"), source: both("orderState") },
    totalAmount: { meaning: "Total including VAT and fees, NGN.", source: both("totalAmount") },
    weight: { meaning: `Total weight of all packages (${UNIT_NOT_STATED}).`, source: both("weight") },
    numberOfPackages: { meaning: "Number of packages.", source: both("numberOfPackages") },
    senderName: { meaning: `The sender's name. ${PERSONAL}`, source: both("sender.contact.name") },
    senderPhone: { meaning: `The sender's phone number. ${PERSONAL}`, source: both("sender.contact.phone") },
    senderEmail: {
      meaning: `The sender's email address. ${PERSONAL}`,
      source: `${full("sender.contact.email")}; the summary's sender has none, so a feed update keeps it`,
    },
    senderCity: { meaning: "The sender's city.", source: both("sender.addressDetails.city") },
    senderCountry: { meaning: "The sender's country.", source: both("sender.addressDetails.country") },
    senderCountryCode: {
      meaning: "The sender's country code.",
      source: both("sender.addressDetails.countryCode"),
    },
    receiverName: { meaning: `The receiver's name. ${PERSONAL}`, source: both("receiver.contact.name") },
    receiverPhone: {
      meaning: `The receiver's phone number. ${PERSONAL}`,
      source: both("receiver.contact.phone"),
    },
    receiverEmail: {
      meaning: `The receiver's email address. ${PERSONAL}`,
      source: both("receiver.contact.email"),
    },
    receiverCity: { meaning: "The receiver's city.", source: both("receiver.addressDetails.city") },
    receiverCountry: { meaning: "The receiver's country.", source: both("receiver.addressDetails.country") },
    receiverCountryCode: {
      meaning: "The receiver's country code.",
      source: both("receiver.addressDetails.countryCode"),
    },
    summaryJson: {
      meaning:
        "The feed's record, every field kept, as `JSON.stringify` writes it; NULL until the feed serves the booking.",
      source: "The whole summary-view record",
    },
    firstSeenAt: worker(`When the worker first stored the booking (the page's read time), ${UTC}.`),
    summarySyncedAt: worker(`When the summary columns last changed, or the row was created, ${UTC}.`),
    detailJson: {
      meaning:
        "The list's full record, every field kept, as `JSON.stringify` writes it; NULL until details are fetched.",
      source: "The whole full-view record",
    },
    detailSyncedAt: worker(
      `When the details were last stored or confirmed current, ${UTC}; NULL until fetched.`,
    ),
    remoteUpdatedAt: {
      meaning: `When the source last updated the booking, ${UTC}: an older copy never overwrites a newer one.`,
      source: full("updatedAt"),
    },
    subTotal: { meaning: "Subtotal before taxes, NGN.", source: full("subTotal") },
    bookingVat: { meaning: "VAT, NGN.", source: full("bookingVat") },
    insuranceType: { meaning: "Insurance type.", source: full("bookingInsurance.type") },
    insuranceFee: { meaning: "Insurance fee, NGN.", source: full("bookingInsurance.fee") },
    insuredValue: { meaning: "Insured value, NGN.", source: full("insuredValue") },
    packageInsurance: { meaning: "Insurance code.", source: full("packageInsurance") },
    fuelSurchargeAmount: {
      meaning: "Fuel surcharge, NGN.",
      source: full("extraCharges.fuelSurcharge.amount"),
    },
    packagingFeeAmount: {
      meaning: "Packaging fee, NGN.",
      source: full("extraCharges.packagingFee.amount"),
    },
    deliveryType: { meaning: "`DROP_OFF` or `SIGNATURE_REQUIRED`.", source: full("deliveryType") },
    deliveryMode: { meaning: "`DOOR_STEP` or `PICKUP`.", source: full("deliveryMode") },
    serviceType: { meaning: "Service type, e.g. `AIR_EXPORT`.", source: full("serviceType") },
    carrier: { meaning: "Carrier code.", source: full("carrier") },
    shipmentRate: { meaning: "Rate code.", source: full("shipmentRate") },
    branchName: { meaning: "Branch handling the booking.", source: full("branchName") },
    servedBy: { meaning: "The partner's staff member who handled the booking.", source: full("servedBy") },
    collectionType: {
      meaning: "How the shipment is collected, e.g. `PICKUP`.",
      source: full("collectionMode.collectionType"),
    },
    pickupDate: {
      meaning: `Pickup date, ${UTC} when readable, else as received.`,
      source: full("collectionMode.pickupDetails.pickupDate"),
    },
    pickupTimeFrom: {
      meaning: "Start of the pickup window: a clock time with AM/PM, as received, no zone.",
      source: full("collectionMode.pickupDetails.pickupTimeRange.from"),
    },
    pickupTimeTo: {
      meaning: "End of the pickup window: a clock time with AM/PM, as received, no zone.",
      source: full("collectionMode.pickupDetails.pickupTimeRange.to"),
    },
    promoCode: { meaning: "Promotion code; may be empty.", source: full("promoCode") },
    customerAcceptanceState: {
      meaning: state("Customer acceptance state"),
      source: full("customerAcceptanceState"),
    },
    sourceName: { meaning: "Name of the source organisation.", source: full("source.name") },
    sourceBranch: { meaning: "Branch of the source organisation.", source: full("source.branch") },
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
  },
});

const bookingPackages = described(schema.bookingPackages, {
  description:
    "One row per package of a booking with details, replaced whenever the booking's details change.",
  columns: {
    bookingId: { meaning: "The booking (`bookings.id`).", source: full("_id") },
    position: worker("0-based position of the package in `packages.packages`."),
    packageId: { meaning: "The package's identifier.", source: inPackage("_id") },
    actualWeight: {
      meaning: `Actual weight (${UNIT_NOT_STATED}).`,
      source: inPackage("actualWeight"),
    },
    length: {
      meaning: `Length (${UNIT_NOT_STATED}).`,
      source: inPackage("packageDimension.length"),
    },
    width: { meaning: `Width (${UNIT_NOT_STATED}).`, source: inPackage("packageDimension.width") },
    height: {
      meaning: `Height (${UNIT_NOT_STATED}).`,
      source: inPackage("packageDimension.height"),
    },
    dimensionWeight: {
      meaning: `Weight of the package's dimension (${UNIT_NOT_STATED}).`,
      source: inPackage("packageDimension.weight"),
    },
    dimensionPrice: {
      meaning: "Price of the package's dimension, NGN.",
      source: inPackage("packageDimension.price"),
    },
    predefinedDimension: {
      meaning: "Identifier of a predefined dimension.",
      source: inPackage("predefinedDimension"),
    },
    multiple: {
      meaning: "As received; the contract does not say what it counts.",
      source: inPackage("multiple"),
    },
  },
});

const bookingItems = described(schema.bookingItems, {
  description:
    "One row per item of each package, replaced whenever the booking's details change; only bookings with " +
    "details have items. The contract's top-level `packages.items` is kept in `detail_json` only.",
  columns: {
    bookingId: { meaning: "The booking (`bookings.id`).", source: full("_id") },
    packagePosition: worker("0-based position of the item's package in `packages.packages`."),
    position: worker("0-based position of the item in its package's `items`."),
    itemId: {
      meaning: "The item's identifier.",
      source: `\`packages.packages[].items[]._id\`, or \`id\` when \`_id\` is absent ${FULL}`,
    },
    name: { meaning: "The item's name, free text.", source: inItem("name") },
    hsCode: { meaning: "Harmonized System code, as declared.", source: inItem("hsCode") },
    quantity: { meaning: "Quantity.", source: inItem("quantity") },
    price: { meaning: "Declared price of one unit, NGN.", source: inItem("price") },
    excludePackingList: {
      meaning: "1 when the item is left off the packing list, 0 otherwise.",
      source: inItem("excludePackingList"),
    },
  },
});

const bookingChanges = described(schema.bookingChanges, {
  description:
    "Every change the worker observed in a stored booking's tracked columns. First sight is not a change, " +
    "nor is a re-read of the same values; a booking changes here only when a walk reads it again.",
  columns: {
    id: worker("Row id, in the order the changes were recorded."),
    bookingId: worker("The booking (`bookings.id`)."),
    field: worker(
      `The \`bookings\` column that changed: ${TRACKED_COLUMNS.map((c) => `\`${c}\``).join(", ")}.`,
    ),
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
    kind: {
      meaning: `Which code: ${LABEL_KINDS.map((k) => `\`${k}\``).join(", ")}.`,
      source: LABELS_IMPORT,
    },
    code: { meaning: "The state code.", source: LABELS_IMPORT },
    label: { meaning: "What the code means.", source: LABELS_IMPORT },
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
