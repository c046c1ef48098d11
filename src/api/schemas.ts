/**
 * Runtime shapes of the partner API (contract 2.1, 2.2, 2.6, 2.7). Unknown fields are never rejected;
 * identity and time fields are strict, since the walk and the keys depend on them. Every other field
 * is optional here: one that fails its check costs its column, never the booking (response.ts).
 */
import { z } from "zod";

/**
 * The time that steers the walk: a string here, read strictly once by `checkRecord` (times.ts).
 * Other times are only stored, so a bad one costs its column.
 */
const createdAt = z.string();

const str = z.string();
const optStr = z.string().nullish();
/** Longest `_id` taken as a booking key, characters: keys are indexed, and no database indexes any length. */
export const MAX_ID_LENGTH = 256;
const optNum = z.number().finite().nullish();
const optBool = z.boolean().nullish();
const optInt = z.number().int().nullish();

/** Fields every booking has by the contract: one absent is noted as a problem, its column NULL. */
export const REQUIRED_FIELDS = ["totalAmount", "paid", "bookingState", "orderState"] as const;

const summaryParty = z.object({
  contact: z.object({ name: optStr, phone: optStr, email: optStr }).nullish(),
  addressDetails: z.object({ city: optStr, country: optStr, countryCode: optStr }).nullish(),
});

/** A booking's key: a short string in practice; a longer one is refused rather than stored as a key. */
const bookingId = str
  .min(1)
  .max(MAX_ID_LENGTH)
  .refine((id) => !id.includes("\u0000"), "holds a NUL character, which no database key can");

/** Summary view: an element of `data.bookings` in fetch-recent-bookings (contract 2.6). */
export const summaryBookingSchema = z.object({
  _id: bookingId,
  searchId: optStr,
  sourcePlatform: optStr,
  receiver: summaryParty.nullish(),
  sender: summaryParty.nullish(),
  weight: optNum,
  numberOfPackages: z.number().int().nonnegative().nullish(),
  totalAmount: optNum,
  paid: optBool,
  bookingState: optInt,
  orderState: optInt,
  bookingDate: optStr,
  createdAt,
});
export type SummaryBooking = z.infer<typeof summaryBookingSchema>;

// Only what the mirror reads into columns (store/rows.ts): checking the rest, stored unread in
// `detail_json`, would reject bookings over fields nothing uses.
const amount = z.object({ amount: optNum });
const item = z.object({
  quantity: optNum,
  price: optNum,
  hsCode: optStr,
  name: optStr,
  id: optStr,
  excludePackingList: optBool,
  _id: optStr,
});
const pkg = z.object({
  actualWeight: optNum,
  packageDimension: z
    .object({ length: optNum, width: optNum, height: optNum, weight: optNum, price: optNum })
    .nullish(),
  predefinedDimension: optStr,
  items: z.array(item).nullish(),
  _id: optStr,
  multiple: optNum,
});

/** Full view: an element of `data` in list-bookings (contract 2.2), as far as the mirror reads it. */
export const fullBookingSchema = z.object({
  _id: bookingId,
  searchId: optStr,
  sourcePlatform: optStr,
  receiver: summaryParty.nullish(),
  sender: summaryParty.nullish(),
  packageInsurance: optStr,
  packages: z.object({ packages: z.array(pkg).nullish() }).nullish(),
  weight: optNum,
  collectionMode: z
    .object({
      collectionType: optStr,
      pickupDetails: z
        .object({
          pickupDate: optStr,
          pickupTimeRange: z.object({ from: optStr, to: optStr }).nullish(),
        })
        .nullish(),
    })
    .nullish(),
  customerAcceptanceState: optInt,
  branchName: optStr,
  servedBy: optStr,
  shipmentRate: optStr,
  orderState: optInt,
  bookingState: optInt,
  numberOfPackages: z.number().int().nonnegative().nullish(),
  subTotal: optNum,
  totalAmount: optNum,
  promoCode: optStr,
  paid: optBool,
  deliveryType: optStr,
  deliveryMode: optStr,
  insuredValue: optNum,
  serviceType: optStr,
  carrier: optStr,
  bookingDate: optStr,
  createdAt,
  updatedAt: optStr,
  type: optStr,
  extraCharges: z.object({ fuelSurcharge: amount.nullish(), packagingFee: amount.nullish() }).nullish(),
  source: z.object({ name: optStr, branch: optStr }).nullish(),
  bookingVat: optNum,
  bookingInsurance: z.object({ type: optStr, fee: optNum }).nullish(),
});
export type FullBooking = z.infer<typeof fullBookingSchema>;

/** Envelope of fetch-recent-bookings; records are checked one by one so one bad record cannot sink a page. */
export const feedEnvelopeSchema = z.looseObject({
  success: z.literal(true),
  data: z.looseObject({
    bookings: z.array(z.unknown()),
    // Never used: the walk derives its cursor from the records (sync/feed/window.ts).
    nextCursor: z.unknown(),
    hasMore: z.boolean(),
  }),
});

/** Envelope of list-bookings. */
export const listEnvelopeSchema = z.looseObject({
  success: z.literal(true),
  data: z.array(z.unknown()),
  pagination: z.looseObject({
    total: z.number().int().nonnegative(),
    page: z.number().int().positive(),
    pageSize: z.number().int().positive(),
    totalPages: z.number().int().nonnegative(),
  }),
});

/** Error envelope (contract section 7); used only to read the server's message. */
export const errorEnvelopeSchema = z.looseObject({
  success: z.literal(false),
  status: z.number().optional(),
  message: z.string().optional(),
});

/** Describes a zod failure in one line: the path and the problem of the first few issues. */
export function describeIssues(error: Pick<z.ZodError, "issues">, max = 3): string {
  return error.issues
    .slice(0, max)
    .map((i) => `${i.path.length ? i.path.join(".") : "(record)"}: ${i.message}`)
    .join("; ");
}
