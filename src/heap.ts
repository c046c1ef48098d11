/**
 * The process's memory profile. booking-sync runs as a sidecar beside its partner's app, so a small,
 * flat footprint is worth a little speed. Two V8 settings, both set once the process runs:
 *
 * - The old generation: V8 sizes its next collection as a multiple of what survived the last one,
 *   and picks a large multiple when it sees a fast mutator; during a backfill that let about 40 MB
 *   of already-dead page records pile up before each collection. A fixed 30% margin keeps them
 *   collected sooner; it cost no measurable time in `npm run bench:backfill` and takes 25–55 MB off
 *   the peak.
 * - The young generation: V8 doubles its semi-spaces whenever as much as they hold has survived
 *   since the last doubling, up to a maximum it fixes at start-up from the memory it sees (16 MB
 *   each with several GB; less on a small host or in a small container), so a busy process (or
 *   loading the program's modules alone) soon holds 32 MB of them. The maximum cannot change
 *   once running (`--max-semi-space-size`), but the growth factor is read at each doubling, so
 *   after every collection it is set to 2 while they are below 4 MB and to 1 (no growth) from
 *   then on: this only ever stops growth, never adds any. In `npm run bench:backfill` at
 *   concurrency 8, 4 MB semi-spaces take about 30 MB off the peak and cost about 8% of the
 *   speed: four times the scavenges (160 against 41 for 20,000 bookings), and more promoted,
 *   since a page's records now outlive one. The factor is the process's, so it also keeps the
 *   writer thread's young generation at the size it starts with, which V8 takes from a process
 *   flag when the thread's instance starts: 1 MB semi-spaces by default, where the batches queued
 *   for the writer outlived collection after collection (240 scavenges promoting about 60 MB, and
 *   6 full collections, per 20,000 bookings). Threads start with 4 MB ones instead: 45 scavenges,
 *   2 MB promoted, no full collection.
 *
 * Call `tuneHeap` before importing the program, so that the modules load under it.
 */
import { PerformanceObserver } from "node:perf_hooks";
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8";

/** How far the old generation may grow past what the last full collection kept, in percent. */
const HEAP_GROWING_PERCENT = 30;
/** The young generation's semi-space size it may grow to, bytes. */
const SEMI_SPACE_BYTES = 4 * 1024 * 1024;
/**
 * The semi-space size a worker thread's young generation starts at under the profile, MB: where it
 * stays, since the growth factor that holds the main thread's is the process's.
 */
const THREAD_SEMI_SPACE_MB = 4;

/** Both semi-spaces, as V8 reports the young generation's size. */
function youngGenerationBytes(): number {
  return getHeapSpaceStatistics().find((s) => s.space_name === "new_space")?.space_size ?? 0;
}

/** Whether `tuneHeap` has run. */
let tuned = false;

function setGrowthFactor(factor: 1 | 2): void {
  setFlagsFromString(`--semi-space-growth-factor=${factor}`);
}

/** Applies the memory profile; call once, before importing the program. */
export function tuneHeap(): void {
  if (tuned) return;
  tuned = true;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  // After each collection: a doubling needs a whole young generation's worth of survivors since
  // the last one, so with every collection seen before the next stretch of work, growth by 2
  // stops at the target. Observers see a collection a turn or two of the event loop late, so
  // collections with no turn between them can still double it past the target, rarely; V8
  // shrinks it again only when the process goes quiet. (Observers never keep a process alive.)
  const steer = () => setGrowthFactor(youngGenerationBytes() < 2 * SEMI_SPACE_BYTES ? 2 : 1);
  new PerformanceObserver(steer).observe({ entryTypes: ["gc"] });
}

/**
 * Starts a worker thread with `start`, under the profile when `tuneHeap` ran (else it only starts
 * it). The thread's young generation starts at `THREAD_SEMI_SPACE_MB` semi-spaces, since the
 * profile keeps it from growing. And V8 sets the growth factor back to 2 whenever a V8 instance
 * starts, as a thread's does, so a caller that works on without yielding would let its own young
 * generation double before the next collection is seen: `waitForThread` (which must not allocate)
 * blocks until the thread's V8 instance runs, then growth stops until the next collection is seen,
 * which resumes it if the young generation is below its target.
 */
export function startThread<T>(start: () => T, waitForThread: () => void): T {
  if (!tuned) return start();
  setFlagsFromString(`--min-semi-space-size=${THREAD_SEMI_SPACE_MB}`);
  const thread = start();
  waitForThread();
  setGrowthFactor(1);
  return thread;
}
