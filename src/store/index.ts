/** The SQLite mirror: `openStore(path)` gives a `Store`, the core's port plus the CLI's and daemon's reads. */
export { type BatchRule, DEFAULT_BATCH } from "./batch.js";
export {
  acquireLease,
  type LeaseHolder,
  type LeaseOptions,
  type LeaseResult,
  releaseLease,
  renewLease,
} from "./lease.js";
export { type OpenOptions, openStore } from "./open.js";
export { openMirror } from "./open-mirror.js";
export type { BookingFilter } from "./reads.js";
export type { RunRow } from "./runs.js";
export * as tables from "./schema.js";
export { isSqlite, type Mirror, type Store } from "./store.js";
