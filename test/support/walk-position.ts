/** Where a stream's saved walk stands: its first unfinished slice's position, whatever form was saved. */
import { isFill } from "../../src/sync/fill/progress.js";
import type { StreamState } from "../../src/sync/ports.js";

export function walkPosition(walk: StreamState["walk"]): string | null | undefined {
  if (walk === null) return undefined;
  return isFill(walk) ? walk.slices[0]?.upTo : walk.upTo;
}
