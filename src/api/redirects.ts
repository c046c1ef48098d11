/**
 * Redirects are followed only within the configured origin. got's own guard drops the token for
 * another host, but still follows, and ignores the scheme (https → http keeps the token).
 */
import type { PlainResponse } from "got";

/** Where a 3xx answer points, resolved as got resolves it; undefined for any other answer. */
export function redirectTarget(res: Pick<PlainResponse, "statusCode" | "headers" | "url">): URL | undefined {
  const location = res.headers.location;
  if (res.statusCode < 300 || res.statusCode >= 400 || !location) return undefined;
  // got reads the header as latin1 bytes of UTF-8 text; the same reading gives the same URL.
  const text = Buffer.from(location, "binary").toString();
  return URL.canParse(text, res.url) ? new URL(text, res.url) : undefined;
}

/** got's `followRedirect`: true only for a target on `origin` (e.g. "https://host:8443"). */
export function sameOriginOnly(origin: string): (res: PlainResponse) => boolean {
  return (res) => redirectTarget(res)?.origin === origin;
}

/** The message for a redirect not followed (origin and path only); undefined when not a redirect. */
export function refusedRedirect(
  res: Pick<PlainResponse, "statusCode" | "headers" | "url">,
  origin: string,
): string | undefined {
  const target = redirectTarget(res);
  if (!target) return undefined;
  return (
    `the API answered a redirect to ${target.origin} (HTTP ${res.statusCode} to ${target.origin}${target.pathname}); ` +
    `booking-sync follows none outside ${origin}: set BOOKING_API_BASE_URL to the final address`
  );
}
