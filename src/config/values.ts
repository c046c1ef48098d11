/**
 * How a setting's text becomes a typed value (README, "Configuration"): whole numbers are digits only,
 * booleans and choices are words in any case, none with spaces around; free text is trimmed.
 */
import cron from "node-cron";
import { z } from "zod";

/** The schemas whose values are read exactly as written (no trimming): those `exact` marked. */
export const exactSchemas = new WeakSet<z.ZodType>();
/** Marks a schema of the rule above (the outermost one): `loadConfig` hands it the value untrimmed. */
export function exact<T extends z.ZodType>(schema: T): T {
  exactSchemas.add(schema);
  return schema;
}

const digits = z
  .string()
  .regex(/^-?\d+$/)
  .transform(Number);
/** A whole number from `min` to `max`, written in digits (a number given as such passes too). */
export const int = (min: number, max: number) =>
  exact(z.union([z.number(), digits]).pipe(z.number().int().min(min).max(max)));
const BOOLEAN_WORDS = { true: true, yes: true, "1": true, false: false, no: false, "0": false } as const;
/** true/false, yes/no, 1/0 in any letter case (or a flag's own boolean). */
export const bool = exact(
  z.union([
    z.boolean(),
    z
      .string()
      .transform((s) => s.toLowerCase())
      .pipe(z.enum(Object.keys(BOOLEAN_WORDS) as [keyof typeof BOOLEAN_WORDS]))
      .transform((w) => BOOLEAN_WORDS[w]),
  ]),
);
/** One of `words` in any letter case, returned as listed (all of one case: upper or lower). */
export const choice = <const T extends readonly [string, ...string[]]>(words: T) => {
  const upper = words.every((w) => w === w.toUpperCase());
  return exact(
    z
      .string()
      .transform((s) => (upper ? s.toUpperCase() : s.toLowerCase()))
      .pipe(z.enum(words)),
  );
};
/** An http(s) URL, without trailing slashes. */
export const httpUrl = z
  .string()
  .url()
  .refine((s) => /^https?:\/\//.test(s))
  .transform((s) => s.replace(/\/+$/, ""));
/** A cron expression node-cron accepts. */
export const cronExpr = z.string().refine((s) => cron.validate(s));
/** A percentage from 0 to 100, with or without its sign: "0.1" is 0.1 %, the safer of its two readings. */
export const percent = exact(
  z
    .union([z.number(), z.string().regex(/^\d{1,3}(\.\d+)?%?$/)])
    .transform((v) => (typeof v === "number" ? v : Number.parseFloat(v)))
    .pipe(z.number().min(0).max(100)),
);
