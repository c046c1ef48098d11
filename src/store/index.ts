/** The SQLite mirror: `openStore(path)` gives a `Store`, the core's port plus the CLI's and daemon's reads. */
export { acquireLease, releaseLease, renewLease } from "./lease.js";
export { openStore } from "./open.js";
export { openMirror } from "./open-mirror.js";
export type { Mirror, Store } from "./store.js";
