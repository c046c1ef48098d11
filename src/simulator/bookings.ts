/** Deterministic bookings: a pure function of (seed, i, version) and times, so none is held in memory. */
import {
  BRANCHES,
  CARRIERS,
  FIRST_NAMES,
  INTERNATIONAL_PLACES,
  LAST_NAMES,
  NIGERIAN_PLACES,
  PARTNER_ORGS,
  PAYMENT_METHODS,
  PICKUP_WINDOWS,
  SHIPMENT_RATES,
  type SimBookingType,
} from "./catalog.js";
import { ID_KIND, makePackages, makeParty, totalWeight } from "./parts.js";
import { naira, price } from "./pricing.js";
import { createRng, hash32, objectId, type Rng } from "./random.js";

/** Every `sourcePlatform` a generated booking can have. */
export const SOURCE_PLATFORMS = ["web", "mobile", "api", "partner-portal"] as const;
export type SourcePlatform = (typeof SOURCE_PLATFORMS)[number];

/** Creation time of booking 0 when no times are given: 2025-01-01T00:00:00.000Z. */
export const DEFAULT_EPOCH_MS = Date.UTC(2025, 0, 1);

const SALT = { type: 0x7e, platform: 0x9f, body: 0xb0 } as const;

/** Booking i's type, cheap on its own so filter indexes can be built over a million bookings. */
export function bookingTypeOf(seed: number, i: number): SimBookingType {
  return hash32(seed, i, SALT.type) % 100 < 35 ? "IN" : "LC";
}

/** Booking i's source platform (web 40%, mobile 35%, api 15%, partner-portal 10%); cheap like `bookingTypeOf`. */
export function sourcePlatformOf(seed: number, i: number): SourcePlatform {
  const r = hash32(seed, i, SALT.platform) % 100;
  return r < 40 ? "web" : r < 75 ? "mobile" : r < 90 ? "api" : "partner-portal";
}

/** When booking i was created and last updated (epoch milliseconds). */
export interface BookingTimes {
  createdAtMs: number;
  /** Defaults to `createdAtMs` (a booking never updated). */
  updatedAtMs?: number;
}

const DAY_MS = 86_400_000;

/** The day after `ms`, at midnight UTC, as ISO. */
function nextDay(ms: number): string {
  // A UTC day is exactly DAY_MS, so midnight is the time rounded down to it (NaN still throws).
  const t = new Date(ms + DAY_MS).getTime();
  return new Date(t - (((t % DAY_MS) + DAY_MS) % DAY_MS)).toISOString();
}

/** Parties, packages and pricing of booking i: the draws the rest of the booking depends on. */
function drawCore(seed: number, i: number, version: number, times: BookingTimes | undefined) {
  const createdAtMs = times?.createdAtMs ?? DEFAULT_EPOCH_MS + i * 60_000;
  const createdAt = new Date(createdAtMs).toISOString();
  const rng = createRng(hash32(seed, i, SALT.body));
  const type = bookingTypeOf(seed, i);
  // Lagos sends a large share of all shipments.
  const from = rng.chance(0.4)
    ? (NIGERIAN_PLACES[0] ?? rng.pick(NIGERIAN_PLACES))
    : rng.pick(NIGERIAN_PLACES);
  const to = rng.pick(type === "IN" ? INTERNATIONAL_PLACES : NIGERIAN_PLACES);
  const sender = makeParty(rng, from, objectId(seed, i, ID_KIND.owner));
  const receiver = makeParty(rng, to);
  const packages = makePackages(rng, seed, i, createdAt);
  const weight = totalWeight(packages);
  const shipmentRate = rng.pick(SHIPMENT_RATES);
  const pricing = price(rng, type, weight, shipmentRate, packages.itemsValue, version);
  const updatedAtMs = times?.updatedAtMs ?? createdAtMs;
  const updatedAt = updatedAtMs === createdAtMs ? createdAt : new Date(updatedAtMs).toISOString();
  return {
    rng,
    type,
    createdAtMs,
    createdAt,
    updatedAt,
    from,
    to,
    sender,
    receiver,
    packages,
    weight,
    shipmentRate,
    pricing,
  };
}

/** The remaining draws: handling, payment and carrier details. */
function drawDetails(seed: number, i: number, rng: Rng, type: SimBookingType) {
  const staff = rng.int(0, 11);
  const org = rng.int(0, PARTNER_ORGS.length - 1);
  const carrier = rng.pick(CARRIERS[type]);
  const rateId = objectId(seed, i, ID_KIND.rate);
  return {
    branch: rng.pick(BRANCHES),
    servedBy: `${FIRST_NAMES[staff % FIRST_NAMES.length]} ${LAST_NAMES[(staff * 7) % LAST_NAMES.length]}`,
    generatedBy: objectId(seed, staff, ID_KIND.staff),
    collectionType: rng.chance(0.6) ? "PICKUP" : "DROP_OFF",
    pickupTimeRange: { ...rng.pick(PICKUP_WINDOWS) },
    customerAcceptanceState: rng.int(0, 2),
    orderState: rng.int(0, 6),
    bookingState: rng.int(0, 5),
    promoCode: rng.chance(0.15) ? rng.pick(["NAIJA10", "SENDLOVE", "EASTER5", "DETTY25"]) : "",
    paid: rng.chance(0.7),
    deliveryType: rng.chance(0.5) ? "DROP_OFF" : "SIGNATURE_REQUIRED",
    deliveryMode: rng.chance(0.7) ? "DOOR_STEP" : "PICKUP",
    category: objectId(seed, rng.int(0, 5), ID_KIND.category),
    shipaOrEcommerce: rng.chance(0.1),
    payments: {
      transaction: {
        method: rng.pick(PAYMENT_METHODS),
        generateTransaction: rng.chance(0.5) ? "AUTO" : "MANUAL",
        allowAsynchronousTransaction: rng.chance(0.3),
      },
      accountNumber: `0${rng.digits(9)}`,
      customerId: objectId(seed, i, ID_KIND.customer),
    },
    carrier,
    courier: { rateId, token: carrier.label, rateIds: [rateId, objectId(seed, i + 1, ID_KIND.rate)] },
    getAcknowledgementCopy: rng.chance(0.2),
    claim: rng.chance(0.05),
    source: {
      oid: objectId(seed, org, ID_KIND.org),
      name: PARTNER_ORGS[org] ?? "",
      accountNumber: `1${rng.digits(9)}`,
    },
  };
}

/**
 * Booking i (0 = oldest) in the full view (contract 2.2). Each `version` (update count) flips `paid`,
 * moves the states and re-prices; `times` default to `DEFAULT_EPOCH_MS` + i minutes, never updated.
 */
export function fullBooking(seed: number, i: number, version = 0, times?: BookingTimes) {
  const c = drawCore(seed, i, version, times);
  const d = drawDetails(seed, i, c.rng, c.type);
  const { pricing, packages } = c;
  const sourcePlatform = sourcePlatformOf(seed, i);
  const id = objectId(seed, i, ID_KIND.booking, c.createdAtMs);
  // One literal in contract order: V8 builds a record this wide far slower from spread partial objects.
  return {
    _id: id,
    // The lookup code, such as "SBD0C53EB5": the id's index-unique last 8 hex digits.
    searchId: `SB${id.slice(16).toUpperCase()}`,
    new: version === 0,
    sourcePlatform,
    senderHasNoNigerianAddress: false,
    receiver: c.receiver,
    sender: c.sender,
    packageInsurance: pricing.insurance.type.toUpperCase(),
    packages,
    weight: c.weight,
    addOns: [] as never[],
    collectionMode: {
      collectionType: d.collectionType,
      pickupDetails: { pickupDate: nextDay(c.createdAtMs), pickupTimeRange: d.pickupTimeRange },
    },
    customerAcceptanceState: d.customerAcceptanceState,
    branchName: d.branch.name,
    servedBy: d.servedBy,
    generatedBy: d.generatedBy,
    shipmentRate: c.shipmentRate,
    // Each update moves the states and flips payment, so tests can see a change arrive.
    orderState: (d.orderState + version) % 7,
    bookingState: (d.bookingState + version) % 6,
    partner: sourcePlatform === "partner-portal",
    numberOfPackages: packages.packages.length,
    subTotal: naira(pricing.subTotal),
    totalAmount: naira(pricing.total),
    promoCode: d.promoCode,
    description: `${packages.packages.length} package(s) from ${c.from.city} to ${c.to.city}`,
    paid: d.paid !== (version % 2 === 1),
    deliveryType: d.deliveryType,
    deliveryMode: d.deliveryMode,
    category: d.category,
    shipaOrEcommerce: d.shipaOrEcommerce,
    insuredValue: pricing.insurance.type === "none" ? 0 : packages.itemsValue,
    payments: d.payments,
    serviceType: d.carrier.serviceType,
    carrier: d.carrier.carrier,
    courier: d.courier,
    getAcknowledgementCopy: d.getAcknowledgementCopy,
    bookingDate: c.createdAt,
    collectionEvents: [] as never[],
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
    type: c.type,
    location: d.branch.location,
    packageValueClaim: d.claim ? packages.itemsValue : 0,
    __v: version,
    extraCharges: {
      fuelSurcharge: { value: pricing.fuel.value, type: "percentage", amount: naira(pricing.fuel.amount) },
      onShippingFee: naira(pricing.onShipping),
      packagingFee: { value: naira(pricing.packaging), type: "price", amount: naira(pricing.packaging) },
    },
    source: {
      oid: d.source.oid,
      name: d.source.name,
      branch: d.branch.name,
      accountNumber: d.source.accountNumber,
    },
    hasDispatch: null,
    shipmentId: null,
    bookingVat: naira(pricing.vat),
    bookingInsurance: { type: pricing.insurance.type, fee: naira(pricing.insurance.fee) },
  };
}

/** A generated booking in the full view. */
export type SimFullBooking = ReturnType<typeof fullBooking>;

/** The summary view (contract 2.6) of a full booking, so both views of a booking agree. */
export function summaryOf(full: SimFullBooking) {
  return {
    _id: full._id,
    searchId: full.searchId,
    sourcePlatform: full.sourcePlatform,
    receiver: {
      contact: {
        name: full.receiver.contact.name,
        phone: full.receiver.contact.phone,
        email: full.receiver.contact.email,
      },
      addressDetails: pickAddress(full.receiver.addressDetails),
    },
    sender: {
      contact: { name: full.sender.contact.name, phone: full.sender.contact.phone },
      addressDetails: pickAddress(full.sender.addressDetails),
    },
    weight: full.weight,
    numberOfPackages: full.numberOfPackages,
    totalAmount: full.totalAmount,
    paid: full.paid,
    bookingState: full.bookingState,
    orderState: full.orderState,
    bookingDate: full.bookingDate,
    createdAt: full.createdAt,
  };
}

/** A generated booking in the summary view. */
export type SimSummaryBooking = ReturnType<typeof summaryOf>;

function pickAddress(a: { city: string; country: string; countryCode: string }) {
  return { city: a.city, country: a.country, countryCode: a.countryCode };
}
