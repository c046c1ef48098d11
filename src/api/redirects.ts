/**
 * Redirects are followed only within the configured origin, scheme and port included, so the token
 * never leaves it (https → http would send it in clear).
 */
import type { HttpHead } from "./http-get.js";

/** Where a 3xx answer points, resolved against its URL; undefined for any other answer. */
export function redirectTarget(res: HttpHead): URL | undefined {
  const location = res.headers.location;
  if (res.statusCode < 300 || res.statusCode >= 400 || !location) return undefined;
  // Node reads the header as latin1 bytes of UTF-8 text; http-get.ts follows the same reading.
  const text = Buffer.from(location, "binary").toString();
  return URL.canParse(text, res.url) ? new URL(text, res.url) : undefined;
}

/** http-get.ts's `follow`: true only for a target on `origin` (e.g. "https://host:8443"). */
export function sameOriginOnly(origin: string): (res: HttpHead) => boolean {
  return (res) => redirectTarget(res)?.origin === origin;
}

/** The message for a redirect not followed (origin and path only); undefined when not a redirect. */
export function refusedRedirect(res: HttpHead, origin: string): string | undefined {
  const target = redirectTarget(res);
  if (!target) return undefined;
  return (
    `the API answered a redirect to ${target.origin} (HTTP ${res.statusCode} to ${target.origin}${target.pathname}); ` +
    `booking-sync follows none outside ${origin}: set BOOKING_API_BASE_URL to the final address`
  );
}
