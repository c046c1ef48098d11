/**
 * Maps validated records to the positional values the statements bind. Each column is listed once,
 * with how it is read, so the statements' column lists and the values cannot drift apart.
 */

import { getTableColumns, type Table } from "drizzle-orm";
import { problemText } from "../api/response.js";
import type { FullBooking, SummaryBooking } from "../api/schemas.js";
import { readSourceTime } from "../api/times.js";
import type { BookingType, Checked, Reject } from "../sync/ports.js";
import { bookingItems, bookingPackages } from "./schema.js";

/** A value SQLite binds: booleans are stored as 0/1 and absent values as null. */
export type Param = string | number | null;

type Source = SummaryBooking | FullBooking;

/** A column and how its value is read from a validated record. */
type Field<R> = readonly [column: string, read: (r: R, createdAt: string | null) => Param];

/** The summary columns of `bookings`, read from a record of either view. */
const SUMMARY_FIELDS: ReadonlyArray<Field<Source>> = [
  ["search_id", (r) => v(r.searchId)],
  ["source_platform", (r) => v(r.sourcePlatform)],
  ["created_at", (_r, createdAt) => createdAt],
  ["booking_date", (r) => isoOrNull(r.bookingDate)],
  ["paid", (r) => v(r.paid)],
  ["booking_state", (r) => v(r.bookingState)],
  ["order_state", (r) => v(r.orderState)],
  ["total_amount", (r) => v(r.totalAmount)],
  ["weight", (r) => v(r.weight)],
  ["number_of_packages", (r) => v(r.numberOfPackages)],
  ["sender_name", (r) => v(r.sender?.contact?.name)],
  ["sender_phone", (r) => v(r.sender?.contact?.phone)],
  ["sender_email", (r) => v(r.sender?.contact?.email)],
  ["sender_city", (r) => v(r.sender?.addressDetails?.city)],
  ["sender_country", (r) => v(r.sender?.addressDetails?.country)],
  ["sender_country_code", (r) => v(r.sender?.addressDetails?.countryCode)],
  ["receiver_name", (r) => v(r.receiver?.contact?.name)],
  ["receiver_phone", (r) => v(r.receiver?.contact?.phone)],
  ["receiver_email", (r) => v(r.receiver?.contact?.email)],
  ["receiver_city", (r) => v(r.receiver?.addressDetails?.city)],
  ["receiver_country", (r) => v(r.receiver?.addressDetails?.country)],
  ["receiver_country_code", (r) => v(r.receiver?.addressDetails?.countryCode)],
];

/**
 * Columns a NULL does not overwrite: the summary view carries no sender email (contract 2.6), so the
 * one the full view gave stays; and a booking's creation time does not change, so a later read whose
 * `createdAt` fails its check (noted in its problems) keeps the time a good read gave, and with it
 * the booking's place in every walk and reconcile by time.
 */
export const KEPT_IF_NULL: ReadonlySet<string> = new Set(["sender_email", "created_at"]);

/** The summary columns, in the order the statements list them and the values are pushed. */
export const SUMMARY_COLUMNS: readonly string[] = SUMMARY_FIELDS.map(([column]) => column);

/** The columns only the full view fills, read from a full record. */
const DETAIL_FIELDS: ReadonlyArray<Field<FullBooking>> = [
  ["remote_updated_at", (r) => isoOrNull(r.updatedAt)],
  ["sub_total", (r) => v(r.subTotal)],
  ["booking_vat", (r) => v(r.bookingVat)],
  ["insurance_type", (r) => v(r.bookingInsurance?.type)],
  ["insurance_fee", (r) => v(r.bookingInsurance?.fee)],
  ["insured_value", (r) => v(r.insuredValue)],
  ["package_insurance", (r) => v(r.packageInsurance)],
  ["fuel_surcharge_amount", (r) => v(r.extraCharges?.fuelSurcharge?.amount)],
  ["packaging_fee_amount", (r) => v(r.extraCharges?.packagingFee?.amount)],
  ["delivery_type", (r) => v(r.deliveryType)],
  ["delivery_mode", (r) => v(r.deliveryMode)],
  ["service_type", (r) => v(r.serviceType)],
  ["carrier", (r) => v(r.carrier)],
  ["shipment_rate", (r) => v(r.shipmentRate)],
  ["branch_name", (r) => v(r.branchName)],
  ["served_by", (r) => v(r.servedBy)],
  ["collection_type", (r) => v(r.collectionMode?.collectionType)],
  ["pickup_date", (r) => isoOrNull(r.collectionMode?.pickupDetails?.pickupDate)],
  ["pickup_time_from", (r) => v(r.collectionMode?.pickupDetails?.pickupTimeRange?.from)],
  ["pickup_time_to", (r) => v(r.collectionMode?.pickupDetails?.pickupTimeRange?.to)],
  ["promo_code", (r) => v(r.promoCode)],
  ["customer_acceptance_state", (r) => v(r.customerAcceptanceState)],
  ["source_name", (r) => v(r.source?.name)],
  ["source_branch", (r) => v(r.source?.branch)],
];

/** The detail-only columns, in the order the statements list them and the values are pushed. */
export const DETAIL_COLUMNS: readonly string[] = DETAIL_FIELDS.map(([column]) => column);

/** null for absent values; 0/1 for booleans. */
function v(x: string | number | boolean | null | undefined): Param {
  if (x === undefined || x === null) return null;
  if (typeof x === "boolean") return x ? 1 : 0;
  return x;
}

/** A time in UTC with milliseconds (text order is time order); anything else is kept as is. */
export function isoOrNull(s: string | null | undefined): string | null {
  if (s === undefined || s === null) return null;
  return readSourceTime(s)?.createdAt ?? s;
}

/** The summary columns as positional values, in `SUMMARY_COLUMNS` order, appended to `out`. */
export function pushSummaryValues(out: Param[], createdAt: string | null, r: Source): void {
  for (const [, read] of SUMMARY_FIELDS) out.push(read(r, createdAt));
}

/** The detail-only columns as positional values, in `DETAIL_COLUMNS` order, appended to `out`. */
export function pushDetailValues(out: Param[], createdAt: string | null, r: FullBooking): void {
  for (const [, read] of DETAIL_FIELDS) out.push(read(r, createdAt));
}

/**
 * Whether a stored record's JSON holds the same record as `json`: by value when the texts differ, so
 * a change of layout or escapes alone (rows stored by an older version) is no change.
 */
export function sameRecordJson(stored: string | null, json: string): boolean {
  if (stored === json) return true;
  if (stored === null) return false;
  try {
    return JSON.stringify(JSON.parse(stored)) === JSON.stringify(JSON.parse(json));
  } catch {
    return false;
  }
}

/** A booking of a page as the writers store it. */
export interface KeyedBooking<T> {
  id: string;
  createdAt: string | null;
  record: T;
  raw: unknown;
  /** `raw` as served, when the client kept its text. */
  text?: string | undefined;
  problems: string | null;
}

/**
 * The bookings of a page as the writers store them: each steering record, then each reject that is
 * still a booking (a usable `_id`; no valid `createdAt`, so `created_at` is NULL). `problems` is the
 * note kept beside the row, null when nothing was wrong.
 */
export function keyedBookings<T>(
  records: ReadonlyArray<Extract<Checked<T>, { ok: true }>>,
  rejects: readonly Reject[],
): KeyedBooking<T>[] {
  const out = records.map(
    (r): KeyedBooking<T> => ({ ...r, problems: r.problems.length > 0 ? problemText(r.problems) : null }),
  );
  for (const r of rejects)
    if (r.booking !== undefined && r.id !== null)
      out.push({
        id: r.id,
        createdAt: null,
        record: r.booking as T,
        raw: r.raw,
        text: r.text,
        problems: r.reason,
      });
  return out;
}

/** The rejects that cannot be bookings: quarantined in `rejected_records` alone. */
export function quarantined(rejects: readonly Reject[]): Reject[] {
  return rejects.filter((r) => r.booking === undefined || r.id === null);
}

/** The booking type a full record states, when it is one the mirror knows. */
export function bookingTypeOf(type: string | null | undefined): BookingType | null {
  return type === "IN" || type === "LC" ? type : null;
}

const columnsOf = (table: Table) => Object.values(getTableColumns(table)).map((c) => c.name);

/** Columns of `booking_packages` in tables.ts's order, the order `childValues` lists a package's values in. */
export const PACKAGE_COLUMNS = columnsOf(bookingPackages);

/** Columns of `booking_items` in tables.ts's order, the order `childValues` lists an item's values in. */
export const ITEM_COLUMNS = columnsOf(bookingItems);

/** The `booking_packages` and `booking_items` rows of a full record as positional values. */
export function childValues(id: string, r: FullBooking): { packages: Param[][]; items: Param[][] } {
  const packages: Param[][] = [];
  const items: Param[][] = [];
  const list = r.packages?.packages ?? [];
  for (let position = 0; position < list.length; position++) {
    const p = list[position] as (typeof list)[number];
    const d = p.packageDimension;
    const dimension = [d?.length, d?.width, d?.height, d?.weight, d?.price];
    packages.push([
      id,
      position,
      ...[p._id, p.actualWeight, ...dimension, p.predefinedDimension, p.multiple].map(v),
    ]);
    const contents = p.items ?? [];
    for (let i = 0; i < contents.length; i++) {
      const it = contents[i] as (typeof contents)[number];
      const fields = [it._id ?? it.id, it.name, it.hsCode, it.quantity, it.price, it.excludePackingList];
      items.push([id, position, i, ...fields.map(v)]);
    }
  }
  return { packages, items };
}
