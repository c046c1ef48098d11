/** The status lines of the mirror's source and of withheld missing marks, for a terminal. */
import { printable } from "../printable.js";
import type { SourceState } from "../store/source-status.js";
import { type WithheldMarks, withheldText } from "../sync/list/missing-share.js";

/** "https://host/api/v2 since … · by 3 bookings (a, b, c)", or why none is known yet. */
export function sourceLine(source: SourceState["source"]): string {
  if (source === null) return "not known yet: remembered by the first command that reads the API";
  // Ids come from the source: shown with their controls made visible.
  const ids = source.bookings.map((b) => printable(b.id)).join(", ");
  const by = ids ? `by ${source.bookings.length} bookings (${ids})` : "its bookings not read yet";
  return `${printable(source.baseUrl)} since ${source.since} · ${by}`;
}

/** The line shown while a reconcile's missing marks wait for a person. */
export function withheldLine(withheld: WithheldMarks): string {
  return `${withheldText(withheld)}; decide with \`booking-sync reconcile --apply-missing\``;
}

/** The host of a remembered base URL, short enough for a card. */
export function sourceHost(baseUrl: string): string {
  try {
    return new URL(baseUrl).host;
  } catch {
    return baseUrl;
  }
}
