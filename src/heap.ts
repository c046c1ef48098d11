/**
 * The process's memory profile. booking-sync runs as a sidecar beside its partner's app, so a small,
 * flat footprint is worth a little speed. V8 sizes the old generation's next collection as a
 * multiple of what survived the last one, and picks a large multiple when it sees a fast mutator:
 * during a backfill that let about 40 MB of already-dead page records pile up before each
 * collection. A fixed 30% margin keeps them collected sooner; it cost no measurable time in
 * `npm run bench:backfill` and takes 25–55 MB off the peak.
 *
 * The flag is read whenever a collection sizes the next one, so setting it once the process runs
 * works (the young generation's size, by contrast, is fixed at start-up and cannot be set here).
 */
import { setFlagsFromString } from "node:v8";

/** How far the old generation may grow past what the last full collection kept, in percent. */
const HEAP_GROWING_PERCENT = 30;

/** Applies the memory profile; call once, as early as possible. */
export function tuneHeap(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
