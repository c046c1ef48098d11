/** A generated booking's parties and packages, drawn from its seeded generator (a function of (seed, i)). */
import {
  EMAIL_DOMAINS,
  FIRST_NAMES,
  GOODS,
  LANDMARKS,
  LAST_NAMES,
  NG_MOBILE_PREFIXES,
  type Place,
} from "./catalog.js";
import { objectId, type Rng } from "./random.js";

/** Kinds of derived ids, so ids of different entities never share a stream. */
export const ID_KIND = {
  booking: 0,
  package: 1,
  item: 2,
  dimension: 3,
  owner: 4,
  staff: 5,
  category: 6,
  customer: 7,
  rate: 8,
  org: 9,
  predefined: 10,
} as const;

/** A phone number in international format for the place's country. */
function phoneFor(rng: Rng, place: Place): string {
  if (place.countryCode === "NG") return `+234${rng.pick(NG_MOBILE_PREFIXES)}${rng.digits(7)}`;
  return `+${place.dial}${rng.int(2, 9)}${rng.digits(place.dial === "1" ? 9 : 8)}`;
}

/** A sender or receiver (contract 2.3) living at `place`; `owner` (an account id) is given for senders. */
export function makeParty(rng: Rng, place: Place, owner?: string) {
  const first = rng.pick(FIRST_NAMES);
  const last = rng.pick(LAST_NAMES);
  const addressLine1 = `${rng.int(1, 250)} ${rng.pick(place.streets)}`;
  const landmark = place.countryCode === "NG" ? rng.pick(LANDMARKS) : "";
  return {
    contact: {
      name: `${first} ${last}`,
      phone: phoneFor(rng, place),
      email: `${first}.${last}${rng.int(1, 99)}@${rng.pick(EMAIL_DOMAINS)}`.toLowerCase(),
      ...(owner === undefined ? {} : { owner }),
    },
    addressDetails: {
      addressLine1,
      apartmentNumber: rng.chance(0.3) ? `Flat ${rng.int(1, 24)}` : "",
      city: place.city,
      state: place.state,
      country: place.country,
      stateOrProvinceCode: place.stateCode,
      countryCode: place.countryCode,
      postalCode: rng.pick(place.postalCodes),
      landmark,
      streetLines: landmark ? [addressLine1, landmark] : [addressLine1],
    },
  };
}

/**
 * The Packages object (contract 2.4), with `itemsValue` (the items' declared value, NGN) for pricing:
 * 1 to 3 packages of 1 to 3 items each; weights in kg with one decimal, prices in whole NGN.
 */
export function makePackages(rng: Rng, seed: number, i: number, at: string) {
  const count = rng.chance(0.6) ? 1 : rng.chance(0.75) ? 2 : 3;
  let itemsValue = 0;
  let documentsOnly = true;
  const packages = Array.from({ length: count }, (_, k) => {
    const items = Array.from({ length: rng.int(1, 3) }, (_, j) => {
      const good = rng.pick(GOODS);
      const quantity = good.name === "Documents" ? 1 : rng.int(1, 5);
      const price = Math.round(rng.int(good.min, good.max) / 100) * 100;
      itemsValue += quantity * price;
      if (good.name !== "Documents") documentsOnly = false;
      return {
        quantity,
        price,
        hsCode: good.hsCode,
        name: good.name,
        id: null,
        excludePackingList: false,
        _id: objectId(seed, i * 16 + k * 4 + j, ID_KIND.item),
        createdAt: at,
        updatedAt: at,
      };
    });
    const actualWeight = rng.int(5, 200) / 10;
    return {
      actualWeight,
      packageDimension: {
        length: rng.int(10, 80),
        width: rng.int(10, 60),
        height: rng.int(5, 50),
        weight: actualWeight,
        price: 0,
        _id: objectId(seed, i * 4 + k, ID_KIND.dimension),
        createdAt: at,
        updatedAt: at,
      },
      predefinedDimension: objectId(seed, rng.int(0, 5), ID_KIND.predefined),
      items,
      _id: objectId(seed, i * 4 + k, ID_KIND.package),
      createdAt: at,
      updatedAt: at,
      multiple: 1,
    };
  });
  return {
    packages,
    itemsValue,
    packageType: documentsOnly ? "document" : "non-document",
    createMultiple: false,
    type: "parcel",
    addOns: [] as never[],
    items: [] as never[],
  };
}

/** Total weight of the packages in kg, rounded to one decimal (float sums drift otherwise). */
export function totalWeight(packages: ReturnType<typeof makePackages>): number {
  return Math.round(packages.packages.reduce((sum, p) => sum + p.actualWeight * 10, 0)) / 10;
}
