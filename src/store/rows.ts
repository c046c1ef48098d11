/**
 * Maps validated API records to the flat parameter objects the prepared statements bind. Every
 * key is always present (null when absent), because better-sqlite3 rejects a missing named
 * parameter, and booleans become 0/1, because SQLite has no boolean type.
 */
import type { FullBooking, SummaryBooking } from "../api/schemas.js";
import type { BookingType } from "../sync/ports.js";

type Param = string | number | null;

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

/** Named parameters of the summary columns, in the order the statements list them. */
export const SUMMARY_COLUMNS: ReadonlyArray<readonly [column: string, param: keyof SummaryParams]> = [
  ["search_id", "searchId"],
  ["source_platform", "sourcePlatform"],
  ["created_at", "createdAt"],
  ["booking_date", "bookingDate"],
  ["paid", "paid"],
  ["booking_state", "bookingState"],
  ["order_state", "orderState"],
  ["total_amount", "totalAmount"],
  ["weight", "weight"],
  ["number_of_packages", "numberOfPackages"],
  ["sender_name", "senderName"],
  ["sender_phone", "senderPhone"],
  ["sender_email", "senderEmail"],
  ["sender_city", "senderCity"],
  ["sender_country", "senderCountry"],
  ["sender_country_code", "senderCountryCode"],
  ["receiver_name", "receiverName"],
  ["receiver_phone", "receiverPhone"],
  ["receiver_email", "receiverEmail"],
  ["receiver_city", "receiverCity"],
  ["receiver_country", "receiverCountry"],
  ["receiver_country_code", "receiverCountryCode"],
];

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

const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

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
  r: SummaryBooking | FullBooking,
  bookingType: BookingType | null,
): SummaryParams {
  const s = r.sender ?? undefined;
  const c = r.receiver ?? undefined;
  return {
    id,
    searchId: v(r.searchId),
    sourcePlatform: v(r.sourcePlatform),
    bookingType,
    createdAt,
    bookingDate: isoOrNull(r.bookingDate),
    paid: v(r.paid),
    bookingState: v(r.bookingState),
    orderState: v(r.orderState),
    totalAmount: v(r.totalAmount),
    weight: v(r.weight),
    numberOfPackages: v(r.numberOfPackages),
    senderName: v(s?.contact?.name),
    senderPhone: v(s?.contact?.phone),
    senderEmail: v(s?.contact?.email),
    senderCity: v(s?.addressDetails?.city),
    senderCountry: v(s?.addressDetails?.country),
    senderCountryCode: v(s?.addressDetails?.countryCode),
    receiverName: v(c?.contact?.name),
    receiverPhone: v(c?.contact?.phone),
    receiverEmail: v(c?.contact?.email),
    receiverCity: v(c?.addressDetails?.city),
    receiverCountry: v(c?.addressDetails?.country),
    receiverCountryCode: v(c?.addressDetails?.countryCode),
  };
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
