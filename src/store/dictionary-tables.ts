/**
 * The dictionary's booking data: `bookings`, its packages, items and change history, and the state
 * labels. "Summary view" is Fetch Recent Bookings' `data.bookings[]` (contract 2.6), "full view" is
 * List Bookings' `data[]` (contract 2.2).
 */
import { TRACKED_COLUMNS } from "./changes.js";
import { LABEL_KINDS } from "./labels.js";

const BOTH = "(summary and full views)";
const FULL = "(full view)";
const PERSONAL = "Personal data: hashed or NULL under `SYNC_PERSONAL_DATA=hash` or `drop`.";
const UTC = "UTC ISO 8601 text with milliseconds";
const UNIT_NOT_STATED = "unit not stated by the contract";
const PACKAGE = "`packages.packages[]";
const ITEM = "`packages.packages[].items[]";

const both = (field: string) => `\`${field}\` ${BOTH}`;
const full = (field: string) => `\`${field}\` ${FULL}`;
const state = (what: string) =>
  `${what} code; the contract does not define the codes: their meanings are in \`state_labels\`.`;
const bookings = {
  description:
    "One row per booking the worker has read: the summary columns from the feed (or the list), the detail " +
    "columns once the full record is fetched. Rows are never deleted: a booking the source stops serving " +
    "gets `missing_since`. Analysts start from `bookings_v`.",
  internal: false,
  columns: {
    id: { meaning: "The booking's unique identifier.", source: both("_id") },
    search_id: { meaning: "Short identifier for quick lookup.", source: both("searchId") },
    source_platform: { meaning: "Platform where the booking originated.", source: both("sourcePlatform") },
    booking_type: {
      meaning: "`IN` (international) or `LC` (local); NULL until known.",
      source: `${full("type")}, or the \`bookingType\` of a type-scoped feed stream (\`feed:IN\`, \`feed:LC\`)`,
    },
    created_at: {
      meaning: `When the booking was created, ${UTC}: the order the walks follow. NULL when the source never served a real one (see \`summary_problems\`, \`detail_problems\`); a later read without one keeps it.`,
      source: `${both("createdAt")}, converted to UTC`,
    },
    booking_date: {
      meaning: `When the booking was made, ${UTC} when readable, else as received.`,
      source: both("bookingDate"),
    },
    paid: {
      meaning: "Whether payment is complete: 1 paid, 0 unpaid, NULL not stated.",
      source: both("paid"),
    },
    booking_state: { meaning: state("Booking state"), source: both("bookingState") },
    order_state: { meaning: state("Order state"), source: both("orderState") },
    total_amount: { meaning: "Total including VAT and fees, NGN.", source: both("totalAmount") },
    weight: { meaning: `Total weight of all packages (${UNIT_NOT_STATED}).`, source: both("weight") },
    number_of_packages: { meaning: "Number of packages.", source: both("numberOfPackages") },
    sender_name: { meaning: `The sender's name. ${PERSONAL}`, source: both("sender.contact.name") },
    sender_phone: { meaning: `The sender's phone number. ${PERSONAL}`, source: both("sender.contact.phone") },
    sender_email: {
      meaning: `The sender's email address. ${PERSONAL}`,
      source: `${full("sender.contact.email")}; the summary's sender has none, so a feed update keeps it`,
    },
    sender_city: { meaning: "The sender's city.", source: both("sender.addressDetails.city") },
    sender_country: { meaning: "The sender's country.", source: both("sender.addressDetails.country") },
    sender_country_code: {
      meaning: "The sender's country code.",
      source: both("sender.addressDetails.countryCode"),
    },
    receiver_name: { meaning: `The receiver's name. ${PERSONAL}`, source: both("receiver.contact.name") },
    receiver_phone: {
      meaning: `The receiver's phone number. ${PERSONAL}`,
      source: both("receiver.contact.phone"),
    },
    receiver_email: {
      meaning: `The receiver's email address. ${PERSONAL}`,
      source: both("receiver.contact.email"),
    },
    receiver_city: { meaning: "The receiver's city.", source: both("receiver.addressDetails.city") },
    receiver_country: { meaning: "The receiver's country.", source: both("receiver.addressDetails.country") },
    receiver_country_code: {
      meaning: "The receiver's country code.",
      source: both("receiver.addressDetails.countryCode"),
    },
    summary_json: {
      meaning:
        "The feed's record, every field kept, as `JSON.stringify` writes it; NULL until the feed serves the booking.",
      source: "The whole summary-view record",
    },
    first_seen_at: {
      meaning: `When the worker first stored the booking (the page's read time), ${UTC}.`,
      source: "Worker",
    },
    summary_synced_at: {
      meaning: `When the summary columns last changed, or the row was created, ${UTC}.`,
      source: "Worker",
    },
    detail_json: {
      meaning:
        "The list's full record, every field kept, as `JSON.stringify` writes it; NULL until details are fetched.",
      source: "The whole full-view record",
    },
    detail_synced_at: {
      meaning: `When the details were last stored or confirmed current, ${UTC}; NULL until fetched.`,
      source: "Worker",
    },
    remote_updated_at: {
      meaning: `When the source last updated the booking, ${UTC}: an older copy never overwrites a newer one.`,
      source: full("updatedAt"),
    },
    sub_total: { meaning: "Subtotal before taxes, NGN.", source: full("subTotal") },
    booking_vat: { meaning: "VAT, NGN.", source: full("bookingVat") },
    insurance_type: { meaning: "Insurance type.", source: full("bookingInsurance.type") },
    insurance_fee: { meaning: "Insurance fee, NGN.", source: full("bookingInsurance.fee") },
    insured_value: { meaning: "Insured value, NGN.", source: full("insuredValue") },
    package_insurance: { meaning: "Insurance code.", source: full("packageInsurance") },
    fuel_surcharge_amount: {
      meaning: "Fuel surcharge, NGN.",
      source: full("extraCharges.fuelSurcharge.amount"),
    },
    packaging_fee_amount: {
      meaning: "Packaging fee, NGN.",
      source: full("extraCharges.packagingFee.amount"),
    },
    delivery_type: { meaning: "`DROP_OFF` or `SIGNATURE_REQUIRED`.", source: full("deliveryType") },
    delivery_mode: { meaning: "`DOOR_STEP` or `PICKUP`.", source: full("deliveryMode") },
    service_type: { meaning: "Service type, e.g. `AIR_EXPORT`.", source: full("serviceType") },
    carrier: { meaning: "Carrier code.", source: full("carrier") },
    shipment_rate: { meaning: "Rate code.", source: full("shipmentRate") },
    branch_name: { meaning: "Branch handling the booking.", source: full("branchName") },
    served_by: { meaning: "The partner's staff member who handled the booking.", source: full("servedBy") },
    collection_type: {
      meaning: "How the shipment is collected, e.g. `PICKUP`.",
      source: full("collectionMode.collectionType"),
    },
    pickup_date: {
      meaning: `Pickup date, ${UTC} when readable, else as received.`,
      source: full("collectionMode.pickupDetails.pickupDate"),
    },
    pickup_time_from: {
      meaning: "Start of the pickup window: a clock time with AM/PM, as received, no zone.",
      source: full("collectionMode.pickupDetails.pickupTimeRange.from"),
    },
    pickup_time_to: {
      meaning: "End of the pickup window: a clock time with AM/PM, as received, no zone.",
      source: full("collectionMode.pickupDetails.pickupTimeRange.to"),
    },
    promo_code: { meaning: "Promotion code; may be empty.", source: full("promoCode") },
    customer_acceptance_state: {
      meaning: state("Customer acceptance state"),
      source: full("customerAcceptanceState"),
    },
    source_name: { meaning: "Name of the source organisation.", source: full("source.name") },
    source_branch: { meaning: "Branch of the source organisation.", source: full("source.branch") },
    listed_by_run: {
      meaning: "The last run (`sync_runs.id`) whose list-bookings pass served the booking.",
      source: "Worker",
    },
    missing_since: {
      meaning: `When \`reconcile\` found the source no longer serves the booking, ${UTC}; NULL while served, cleared if it returns.`,
      source: "Worker (`reconcile`)",
    },
    summary_problems: {
      meaning:
        "What was wrong with the feed's record, `; `-separated, one `path: problem` each (a field that failed its " +
        "check and is NULL in its column, a value over 64 KiB or a record over 1 MiB kept as a marker in " +
        "`summary_json`, a `createdAt` that is no real time); NULL when nothing was.",
      source: "Worker, from the summary-view record",
    },
    detail_problems: {
      meaning: "As `summary_problems`, for the list's full record; NULL when nothing was.",
      source: "Worker, from the full-view record",
    },
  },
};

const bookingPackages = {
  description:
    "One row per package of a booking with details, replaced whenever the booking's details change.",
  internal: false,
  columns: {
    booking_id: { meaning: "The booking (`bookings.id`).", source: full("_id") },
    position: { meaning: "0-based position of the package in `packages.packages`.", source: "Worker" },
    package_id: { meaning: "The package's identifier.", source: `${PACKAGE}._id\` ${FULL}` },
    actual_weight: {
      meaning: `Actual weight (${UNIT_NOT_STATED}).`,
      source: `${PACKAGE}.actualWeight\` ${FULL}`,
    },
    length: {
      meaning: `Length (${UNIT_NOT_STATED}).`,
      source: `${PACKAGE}.packageDimension.length\` ${FULL}`,
    },
    width: { meaning: `Width (${UNIT_NOT_STATED}).`, source: `${PACKAGE}.packageDimension.width\` ${FULL}` },
    height: {
      meaning: `Height (${UNIT_NOT_STATED}).`,
      source: `${PACKAGE}.packageDimension.height\` ${FULL}`,
    },
    dimension_weight: {
      meaning: `Weight of the package's dimension (${UNIT_NOT_STATED}).`,
      source: `${PACKAGE}.packageDimension.weight\` ${FULL}`,
    },
    dimension_price: {
      meaning: "Price of the package's dimension, NGN.",
      source: `${PACKAGE}.packageDimension.price\` ${FULL}`,
    },
    predefined_dimension: {
      meaning: "Identifier of a predefined dimension.",
      source: `${PACKAGE}.predefinedDimension\` ${FULL}`,
    },
    multiple: {
      meaning: "As received; the contract does not say what it counts.",
      source: `${PACKAGE}.multiple\` ${FULL}`,
    },
  },
};

const bookingItems = {
  description:
    "One row per item of each package, replaced whenever the booking's details change; only bookings with " +
    "details have items. The contract's top-level `packages.items` is kept in `detail_json` only.",
  internal: false,
  columns: {
    booking_id: { meaning: "The booking (`bookings.id`).", source: full("_id") },
    package_position: {
      meaning: "0-based position of the item's package in `packages.packages`.",
      source: "Worker",
    },
    position: { meaning: "0-based position of the item in its package's `items`.", source: "Worker" },
    item_id: {
      meaning: "The item's identifier.",
      source: `${ITEM}._id\`, or \`id\` when \`_id\` is absent ${FULL}`,
    },
    name: { meaning: "The item's name, free text.", source: `${ITEM}.name\` ${FULL}` },
    hs_code: { meaning: "Harmonized System code, as declared.", source: `${ITEM}.hsCode\` ${FULL}` },
    quantity: { meaning: "Quantity.", source: `${ITEM}.quantity\` ${FULL}` },
    price: { meaning: "Declared price of one unit, NGN.", source: `${ITEM}.price\` ${FULL}` },
    exclude_packing_list: {
      meaning: "1 when the item is left off the packing list, 0 otherwise.",
      source: `${ITEM}.excludePackingList\` ${FULL}`,
    },
  },
};

const bookingChanges = {
  description:
    "Every change the worker observed in a stored booking's tracked columns. First sight is not a change, " +
    "nor is a re-read of the same values; a booking changes here only when a walk reads it again.",
  internal: false,
  columns: {
    id: { meaning: "Row id, in the order the changes were recorded.", source: "Worker" },
    booking_id: { meaning: "The booking (`bookings.id`).", source: "Worker" },
    field: {
      meaning: `The \`bookings\` column that changed: ${TRACKED_COLUMNS.map((c) => `\`${c}\``).join(", ")}.`,
      source: "Worker",
    },
    old_value: {
      meaning: "The value before, as text as `bookings` stored it (flags 0/1); NULL when absent.",
      source: "Worker",
    },
    new_value: {
      meaning: "The value after, as text as `bookings` stores it (flags 0/1); NULL when absent.",
      source: "Worker",
    },
    observed_at: {
      meaning: `When the worker read the new value (the page's read time), ${UTC}; not when the source changed it.`,
      source: "Worker",
    },
    run_id: { meaning: "The run that saw it (`sync_runs.id`), when known.", source: "Worker" },
  },
};

const stateLabels = {
  description:
    "What the source's state codes mean; the contract does not say. A view shows `state <code>` for a " +
    "code without a label.",
  internal: false,
  columns: {
    kind: {
      meaning: `Which code: ${LABEL_KINDS.map((k) => `\`${k}\``).join(", ")}.`,
      source: "`booking-sync labels import FILE.json`",
    },
    code: { meaning: "The state code.", source: "`booking-sync labels import FILE.json`" },
    label: { meaning: "What the code means.", source: "`booking-sync labels import FILE.json`" },
  },
};

/** The booking data, in the order docs/schema.md lists it. */
export const BOOKING_TABLES = {
  bookings,
  booking_packages: bookingPackages,
  booking_items: bookingItems,
  booking_changes: bookingChanges,
  state_labels: stateLabels,
};
