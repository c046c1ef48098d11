/** Seeded randomness: every value is a pure function of its inputs, so bookings regenerate on demand. */

/** murmur3's 32-bit finaliser: a bijection on 32-bit integers, so distinct inputs stay distinct. */
export function fmix32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Hashes a few integers (seed, index, salt, ...) into one well-mixed 32-bit value. */
export function hash32(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const part of parts) {
    // Fold doubles beyond 32 bits in too, so large seeds or indexes do not collide.
    const lo = part >>> 0;
    const hi = Math.floor(part / 4_294_967_296) >>> 0;
    h = fmix32(h ^ lo) + 0x7f4a7c15;
    h = fmix32(h ^ hi);
  }
  return h >>> 0;
}

/** A seeded generator with the draws booking generation needs. */
export type Rng = ReturnType<typeof createRng>;

/** mulberry32: tiny, fast and good enough to make fake bookings look varied. */
export function createRng(seed: number) {
  let state = seed >>> 0;
  /** Uniform in [0, 1). */
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  /** Uniform integer in [min, max], both inclusive. */
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  return {
    next,
    int,
    /** True with probability `p`. */
    chance: (p: number) => next() < p,
    /** One element of a non-empty list. */
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T,
    /** `count` random decimal digits. */
    digits: (count: number) => {
      let s = "";
      for (let k = 0; k < count; k++) s += String(int(0, 9));
      return s;
    },
  };
}

const HEX_BYTE = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

/** 8 lowercase hex digits of a 32-bit value (a table lookup: ids are on every page's hot path). */
export function hex8(value: number): string {
  const v = value >>> 0;
  return (
    (HEX_BYTE[v >>> 24] as string) +
    (HEX_BYTE[(v >>> 16) & 255] as string) +
    (HEX_BYTE[(v >>> 8) & 255] as string) +
    (HEX_BYTE[v & 255] as string)
  );
}

/** The parts of an id that depend on (seed, kind) only, per kind, for the seed last asked about. */
const idParts = { seed: Number.NaN, byKind: new Map<number, { middle: string; tailKey: number }>() };

/**
 * A Mongo-like 24-hex id, unique per (seed, index, kind) for index below 2^32. Given `createdAtMs`,
 * it starts with that time in Unix seconds as an ObjectId does; otherwise with a hash.
 */
export function objectId(seed: number, index: number, kind = 0, createdAtMs?: number): string {
  // A booking has some 20 ids of a dozen kinds in one seed: hashing (seed, kind) once saves 2 of 3 hashes.
  if (seed !== idParts.seed) {
    idParts.seed = seed;
    idParts.byKind.clear();
  }
  let parts = idParts.byKind.get(kind);
  if (parts === undefined) {
    parts = { middle: hex8(hash32(seed, kind, 0x2c)), tailKey: hash32(seed, kind, 0x1d) };
    idParts.byKind.set(kind, parts);
  }
  // The last 8 digits are a bijection of the index, which is what makes ids unique.
  const tail = fmix32((index ^ parts.tailKey) >>> 0);
  const head = createdAtMs === undefined ? hash32(seed, index, kind, 0x0b) : Math.floor(createdAtMs / 1000);
  return hex8(head) + parts.middle + hex8(tail);
}
