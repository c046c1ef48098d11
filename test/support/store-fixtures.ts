/**
 * Records and batches for the store tests, run through the real zod schemas so the store sees what
 * the API client would hand it. Each test opens a real SQLite file in its own temp folder.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach } from "vitest";
import {
  type FullBooking,
  fullBookingSchema,
  type SummaryBooking,
  summaryBookingSchema,
} from "../../src/api/schemas.js";
import { readSourceTime } from "../../src/api/times.js";
import { openStore, type Store } from "../../src/store/index.js";
import type { BookingType, Checked, PageWrite, Reject, WalkProgress } from "../../src/sync/ports.js";

type Ok<T> = Extract<Checked<T>, { ok: true }>;

/** A temp folder for one test's database files; `cleanup` removes it. */
export function tempDir(): { dir: string; file: (name?: string) => string; cleanup: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "booking-sync-store-"));
  return {
    dir,
    file: (name = "mirror.db") => path.join(dir, name),
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/** A temp folder as `tempDir` makes it. */
export type TempDir = ReturnType<typeof tempDir>;

/**
 * Before each test of the file, opens a new store in a temp folder and hands both to `use`; after
 * it, closes the store and removes the folder.
 */
export function storeEachTest(use: (store: Store, tmp: TempDir) => void): void {
  let opened: { store: Store; tmp: TempDir } | undefined;
  beforeEach(() => {
    const tmp = tempDir();
    opened = { store: openStore(tmp.file()), tmp };
    use(opened.store, tmp);
  });
  afterEach(() => {
    opened?.store.close();
    opened?.tmp.cleanup();
    opened = undefined;
  });
}

/** `createdAt` of booking `i`: one second apart from a fixed base. */
export function at(i: number): string {
  return new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString();
}

/** A raw summary as fetch-recent-bookings serves it. */
export function summaryRaw(i: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    _id: `bk${String(i).padStart(6, "0")}`,
    searchId: `S${i}`,
    sourcePlatform: i % 2 ? "web" : "mobile",
    receiver: {
      contact: { name: "Ada Obi", phone: "+447700900123", email: "ada@example.com" },
      addressDetails: { city: "London", country: "United Kingdom", countryCode: "GB" },
    },
    sender: {
      contact: { name: "Chidi Eze", phone: "+2348031234567" },
      addressDetails: { city: "Lagos", country: "Nigeria", countryCode: "NG" },
    },
    weight: 2.5,
    numberOfPackages: 1,
    totalAmount: 15234.57,
    paid: false,
    bookingState: 1,
    orderState: 0,
    bookingDate: at(i),
    createdAt: at(i),
    ...overrides,
  };
}

/** A raw full record as list-bookings serves it: two packages, three items. */
export function fullRaw(i: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const item = (n: number, hsCode: string) => ({
    quantity: n,
    price: 1000 * n,
    hsCode,
    name: `item ${n}`,
    id: null,
    excludePackingList: n === 2,
    _id: `it${i}-${n}`,
  });
  return {
    ...summaryRaw(i),
    sender: {
      contact: { name: "Chidi Eze", phone: "+2348031234567", email: "chidi@example.com", owner: "u1" },
      addressDetails: { city: "Lagos", country: "Nigeria", countryCode: "NG", state: "Lagos" },
    },
    type: "IN",
    updatedAt: at(i + 100),
    subTotal: 14000,
    bookingVat: 1050,
    bookingInsurance: { type: "BASIC", fee: 184.57 },
    insuredValue: 50000,
    packageInsurance: "BASIC",
    extraCharges: {
      fuelSurcharge: { value: 2, type: "percentage", amount: 280 },
      onShippingFee: 0,
      packagingFee: { value: 500, type: "price", amount: 500 },
    },
    deliveryType: "DROP_OFF",
    deliveryMode: "DOOR_STEP",
    serviceType: "AIR_EXPORT",
    carrier: "DHL",
    shipmentRate: "STANDARD",
    branchName: "Ikeja",
    servedBy: "staff-7",
    collectionMode: {
      collectionType: "PICKUP",
      pickupDetails: {
        pickupDate: "2025-01-02T09:00:00Z",
        pickupTimeRange: { from: "9:00 AM", to: "12:00 PM" },
      },
    },
    promoCode: "",
    customerAcceptanceState: 2,
    source: { oid: "o1", name: "Acme Exports", branch: "Ikeja", accountNumber: "001" },
    packages: {
      packages: [
        {
          actualWeight: 1.5,
          packageDimension: { length: 30, width: 20, height: 10, weight: 1.2, price: 300 },
          predefinedDimension: "BOX_S",
          items: [item(1, "6109.10"), item(2, "4202.22")],
          _id: `pk${i}-0`,
          multiple: 1,
        },
        { actualWeight: 1, items: [item(3, "8517.12")], _id: `pk${i}-1`, multiple: 1 },
      ],
    },
    ...overrides,
  };
}

/** A validated summary, as the API client hands it to the core. */
export function okSummary(raw: Record<string, unknown>): Ok<SummaryBooking> {
  const record = summaryBookingSchema.parse(raw);
  return {
    ok: true,
    id: record._id,
    ...times(record.createdAt),
    record: raw as SummaryBooking,
    raw,
    problems: [],
  };
}

/** A validated full record. */
export function okFull(raw: Record<string, unknown>): Ok<FullBooking> {
  const record = fullBookingSchema.parse(raw);
  return {
    ok: true,
    id: record._id,
    ...times(record.createdAt),
    record: raw as FullBooking,
    raw,
    problems: [],
  };
}

function times(text: string): { createdAt: string; at: string } {
  const time = readSourceTime(text);
  if (!time) throw new Error(`not a source time: ${text}`);
  return { createdAt: time.createdAt, at: time.instant };
}

/** What a feed page may carry besides its records; the walk's progress is that of stream `feed`. */
export interface FeedExtra {
  stream?: string;
  walk?: WalkProgress | null;
  checkpoint?: string;
  bookingType?: BookingType;
  rejects?: Reject[];
}

/** A feed page for stream `feed` (no walk in progress unless given), read at `syncedAt`. */
export function feedBatch(
  records: Array<Ok<SummaryBooking>>,
  syncedAt: string,
  extra: FeedExtra = {},
): Extract<PageWrite, { source: "feed" }> {
  const { stream = "feed", walk = null, checkpoint, bookingType, rejects = [] } = extra;
  return {
    source: "feed",
    records,
    rejects,
    bookingType,
    progress: { stream, value: walk, checkpoint },
    syncedAt,
  };
}

/** A list page, read at `syncedAt`. */
export function listBatch(
  records: Array<Ok<FullBooking>>,
  syncedAt: string,
  extra: Partial<Extract<PageWrite, { source: "list" }>> = {},
): Extract<PageWrite, { source: "list" }> {
  return { source: "list", records, rejects: [], syncedAt, ...extra };
}
