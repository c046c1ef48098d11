/**
 * Maps validated API records to the flat parameter objects the prepared statements bind. Every
 * key is always present (null when absent), because better-sqlite3 rejects a missing named
 * parameter, and booleans become 0/1, because SQLite has no boolean type.
 */
import type { FullBooking, SummaryBooking } from "../api/schemas.js";
import type { BookingType } from "../sync/ports.js";

/** A value SQLite binds: booleans are stored as 0/1 and absent values as null. */
export type Param = string | number | null;

/** Column values shared by the summary and full views (the summary columns of `bookings`). */
export interface SummaryParams {
  id: string;
  searchId: Param;
  sourcePlatform: Param;
  bookingType: Param;
  createdAt: string;
  bookingDate: Param;
  paid: Param;
  bookingState: Param;
  orderState: Param;
  totalAmount: Param;
  weight: Param;
  numberOfPackages: Param;
  senderName: Param;
  senderPhone: Param;
  senderEmail: Param;
  senderCity: Param;
  senderCountry: Param;
  senderCountryCode: Param;
  receiverName: Param;
  receiverPhone: Param;
  receiverEmail: Param;
  receiverCity: Param;
  receiverCountry: Param;
  receiverCountryCode: Param;
}

type Source = SummaryBooking | FullBooking;

/**
 * The summary columns, each with its named parameter and how it is read from a record of either
 * view: the one list both the named (details) and the positional (feed) bindings are built from.
 */
const SUMMARY_FIELDS: ReadonlyArray<
  readonly [column: string, param: keyof SummaryParams, read: (r: Source, createdAt: string) => Param]
> = [
  ["search_id", "searchId", (r) => v(r.searchId)],
  ["source_platform", "sourcePlatform", (r) => v(r.sourcePlatform)],
  ["created_at", "createdAt", (_r, createdAt) => createdAt],
  ["booking_date", "bookingDate", (r) => isoOrNull(r.bookingDate)],
  ["paid", "paid", (r) => v(r.paid)],
  ["booking_state", "bookingState", (r) => v(r.bookingState)],
  ["order_state", "orderState", (r) => v(r.orderState)],
  ["total_amount", "totalAmount", (r) => v(r.totalAmount)],
  ["weight", "weight", (r) => v(r.weight)],
  ["number_of_packages", "numberOfPackages", (r) => v(r.numberOfPackages)],
  ["sender_name", "senderName", (r) => v(r.sender?.contact?.name)],
  ["sender_phone", "senderPhone", (r) => v(r.sender?.contact?.phone)],
  ["sender_email", "senderEmail", (r) => v(r.sender?.contact?.email)],
  ["sender_city", "senderCity", (r) => v(r.sender?.addressDetails?.city)],
  ["sender_country", "senderCountry", (r) => v(r.sender?.addressDetails?.country)],
  ["sender_country_code", "senderCountryCode", (r) => v(r.sender?.addressDetails?.countryCode)],
  ["receiver_name", "receiverName", (r) => v(r.receiver?.contact?.name)],
  ["receiver_phone", "receiverPhone", (r) => v(r.receiver?.contact?.phone)],
  ["receiver_email", "receiverEmail", (r) => v(r.receiver?.contact?.email)],
  ["receiver_city", "receiverCity", (r) => v(r.receiver?.addressDetails?.city)],
  ["receiver_country", "receiverCountry", (r) => v(r.receiver?.addressDetails?.country)],
  ["receiver_country_code", "receiverCountryCode", (r) => v(r.receiver?.addressDetails?.countryCode)],
];

/** Named parameters of the summary columns, in the order the statements list them. */
export const SUMMARY_COLUMNS: ReadonlyArray<readonly [column: string, param: keyof SummaryParams]> =
  SUMMARY_FIELDS.map(([column, param]) => [column, param] as const);

/** Column values only the full view has (the detail columns of `bookings`). */
export interface DetailParams extends SummaryParams {
  remoteUpdatedAt: Param;
  subTotal: Param;
  bookingVat: Param;
  insuranceType: Param;
  insuranceFee: Param;
  insuredValue: Param;
  packageInsurance: Param;
  fuelSurchargeAmount: Param;
  packagingFeeAmount: Param;
  deliveryType: Param;
  deliveryMode: Param;
  serviceType: Param;
  carrier: Param;
  shipmentRate: Param;
  branchName: Param;
  servedBy: Param;
  collectionType: Param;
  pickupDate: Param;
  pickupTimeFrom: Param;
  pickupTimeTo: Param;
  promoCode: Param;
  customerAcceptanceState: Param;
  sourceName: Param;
  sourceBranch: Param;
}

/** Named parameters of the detail-only columns. */
export const DETAIL_COLUMNS: ReadonlyArray<readonly [column: string, param: keyof DetailParams]> = [
  ["remote_updated_at", "remoteUpdatedAt"],
  ["sub_total", "subTotal"],
  ["booking_vat", "bookingVat"],
  ["insurance_type", "insuranceType"],
  ["insurance_fee", "insuranceFee"],
  ["insured_value", "insuredValue"],
  ["package_insurance", "packageInsurance"],
  ["fuel_surcharge_amount", "fuelSurchargeAmount"],
  ["packaging_fee_amount", "packagingFeeAmount"],
  ["delivery_type", "deliveryType"],
  ["delivery_mode", "deliveryMode"],
  ["service_type", "serviceType"],
  ["carrier", "carrier"],
  ["shipment_rate", "shipmentRate"],
  ["branch_name", "branchName"],
  ["served_by", "servedBy"],
  ["collection_type", "collectionType"],
  ["pickup_date", "pickupDate"],
  ["pickup_time_from", "pickupTimeFrom"],
  ["pickup_time_to", "pickupTimeTo"],
  ["promo_code", "promoCode"],
  ["customer_acceptance_state", "customerAcceptanceState"],
  ["source_name", "sourceName"],
  ["source_branch", "sourceBranch"],
];

/** null for absent values; 0/1 for booleans. */
function v(x: string | number | boolean | null | undefined): Param {
  if (x === undefined || x === null) return null;
  if (typeof x === "boolean") return x ? 1 : 0;
  return x;
}

// Text already as `toISOString()` writes it. Days past 28 and hour 24 are left to Date, which rolls
// them over (2024-02-30 is 2024-03-01), so a match is exactly what the round trip would return.
const CANONICAL = /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1\d|2[0-8])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;

/** A timestamp in UTC with milliseconds, so text order is time order; unparseable text is kept as is. */
export function isoOrNull(s: string | null | undefined): string | null {
  if (s === undefined || s === null) return null;
  // Most timestamps arrive in this form already; skipping the Date round trip is measurable per row.
  if (CANONICAL.test(s)) return s;
  const ms = Date.parse(s);
  return Number.isNaN(ms) ? s : new Date(ms).toISOString();
}

function bookingTypeOf(type: string | null | undefined): BookingType | null {
  return type === "IN" || type === "LC" ? type : null;
}

/** The summary columns of a record from either view. */
export function summaryParams(
  id: string,
  createdAt: string,
  r: Source,
  bookingType: BookingType | null,
): SummaryParams {
  const out: Record<string, Param> = { id, bookingType };
  for (const [, param, read] of SUMMARY_FIELDS) out[param] = read(r, createdAt);
  return out as unknown as SummaryParams;
}

/**
 * The summary columns as positional values, in `SUMMARY_COLUMNS` order, appended to `out`: the
 * feed's hot path binds arrays, which better-sqlite3 does faster than named objects.
 */
export function pushSummaryValues(out: Param[], createdAt: string, r: Source): void {
  for (const [, , read] of SUMMARY_FIELDS) out.push(read(r, createdAt));
}

/** All typed columns of a full record: the summary columns derived from it, and the detail columns. */
export function detailParams(id: string, createdAt: string, r: FullBooking): DetailParams {
  const pickup = r.collectionMode?.pickupDetails;
  return {
    ...summaryParams(id, createdAt, r, bookingTypeOf(r.type)),
    remoteUpdatedAt: isoOrNull(r.updatedAt),
    subTotal: v(r.subTotal),
    bookingVat: v(r.bookingVat),
    insuranceType: v(r.bookingInsurance?.type),
    insuranceFee: v(r.bookingInsurance?.fee),
    insuredValue: v(r.insuredValue),
    packageInsurance: v(r.packageInsurance),
    fuelSurchargeAmount: v(r.extraCharges?.fuelSurcharge?.amount),
    packagingFeeAmount: v(r.extraCharges?.packagingFee?.amount),
    deliveryType: v(r.deliveryType),
    deliveryMode: v(r.deliveryMode),
    serviceType: v(r.serviceType),
    carrier: v(r.carrier),
    shipmentRate: v(r.shipmentRate),
    branchName: v(r.branchName),
    servedBy: v(r.servedBy),
    collectionType: v(r.collectionMode?.collectionType),
    pickupDate: isoOrNull(pickup?.pickupDate),
    pickupTimeFrom: v(pickup?.pickupTimeRange?.from),
    pickupTimeTo: v(pickup?.pickupTimeRange?.to),
    promoCode: v(r.promoCode),
    customerAcceptanceState: v(r.customerAcceptanceState),
    sourceName: v(r.source?.name),
    sourceBranch: v(r.source?.branch),
  };
}

/** Rows of `booking_packages` and `booking_items` for a full record, positions 0-based. */
export function childRows(id: string, r: FullBooking) {
  const packages: Array<Record<string, Param>> = [];
  const items: Array<Record<string, Param>> = [];
  (r.packages?.packages ?? []).forEach((p, position) => {
    const d = p.packageDimension ?? undefined;
    packages.push({
      bookingId: id,
      position,
      packageId: v(p._id),
      actualWeight: v(p.actualWeight),
      length: v(d?.length),
      width: v(d?.width),
      height: v(d?.height),
      dimensionWeight: v(d?.weight),
      dimensionPrice: v(d?.price),
      predefinedDimension: v(p.predefinedDimension),
      multiple: v(p.multiple),
    });
    (p.items ?? []).forEach((it, itemPosition) => {
      items.push({
        bookingId: id,
        packagePosition: position,
        position: itemPosition,
        itemId: v(it._id ?? it.id),
        name: v(it.name),
        hsCode: v(it.hsCode),
        quantity: v(it.quantity),
        price: v(it.price),
        excludePackingList: v(it.excludePackingList),
      });
    });
  });
  return { packages, items };
}
