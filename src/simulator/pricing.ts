/** Booking prices in NGN as a rate card computes them: subTotal, VAT and fees add up to totalAmount. */
import type { SimBookingType } from "./catalog.js";
import type { Rng } from "./random.js";

/** VAT rate applied to `subTotal`. */
export const VAT_RATE = 0.075;

/**
 * Prices a booking from type, weight (kg), rate and item value (NGN); each `version` adds NGN 250.
 * Amounts in kobo (integers), so subTotal + VAT + fees = total holds exactly after dividing by 100.
 */
export function price(
  rng: Rng,
  type: SimBookingType,
  weightKg: number,
  rate: string,
  itemsValue: number,
  version: number,
) {
  const [base, perKg] = type === "IN" ? [15_000, 9_500] : [2_500, 1_200];
  const multiplier = rate === "EXPRESS" ? 1.4 : rate === "ECONOMY" ? 0.85 : 1;
  // Whole naira, rounded to 50 like a rate card.
  const subTotal = Math.round(((base + perKg * weightKg) * multiplier) / 50) * 50 * 100;
  const fuelPct = rng.pick([5, 8]);
  const insuranceType = rng.pick(["none", "none", "basic", "premium"]);
  const insuranceFee = Math.round(itemsValue * 100 * (insuranceType === "basic" ? 0.01 : 0.025));
  const p = {
    subTotal,
    vat: Math.round(subTotal * VAT_RATE),
    fuel: { value: fuelPct, amount: Math.round((subTotal * fuelPct) / 100) },
    packaging: rng.pick([0, 500, 1_500]) * 100,
    // An update re-prices the booking, which is how totalAmount changes between versions.
    onShipping: (rng.pick([0, 200, 500]) + version * 250) * 100,
    insurance: { type: insuranceType, fee: insuranceType === "none" ? 0 : insuranceFee },
    total: 0,
  };
  p.total = p.subTotal + p.vat + p.fuel.amount + p.packaging + p.onShipping + p.insurance.fee;
  return p;
}

/** Kobo to naira. */
export const naira = (kobo: number): number => kobo / 100;
