/** The status lines of the mirror's source and of withheld missing marks, for a terminal and the page. */
import { printable } from "../printable.js";
import type { SourceState } from "../store/status.js";
import { type WithheldMarks, withheldText } from "../sync/list/missing-share.js";
import type { SourceRecord } from "../sync/source.js";

/** The remembered source, or null when there is none or its record cannot be read. */
export function knownSource(source: SourceState["source"]): SourceRecord | null {
  return source === null || "unreadable" in source ? null : source;
}

/** What is shown instead of a source the mirror does not know: a figure and why. */
export function unknownSource(source: SourceState["source"]): { value: string; note: string } {
  if (source === null)
    return { value: "not known yet", note: "remembered by the first command that reads the API" };
  return {
    value: "unreadable source record",
    note: "not one this version wrote (edited by hand?): the next command checks the source against the mirror's bookings and remembers it anew",
  };
}

/** "https://host/api/v2 since … · by 3 bookings (a, b, c)", or why none is known. */
export function sourceLine(source: SourceState["source"]): string {
  const known = knownSource(source);
  if (known === null) {
    const { value, note } = unknownSource(source);
    return `${value}: ${note}`;
  }
  // Ids come from the source: shown with their controls made visible.
  const ids = known.bookings.map((b) => printable(b.id)).join(", ");
  const by = ids ? `by ${known.bookings.length} bookings (${ids})` : "its bookings not read yet";
  return `${printable(known.baseUrl)} since ${known.since} · ${by}`;
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
