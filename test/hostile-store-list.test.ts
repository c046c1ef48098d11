/**
 * list-bookings' hostile scenarios (a misbehaving `backfill` or `reconcile`) on SQLite and
 * PostgreSQL, the CLI's `main` in-process: see support/hostile-scenarios.ts for the rule each row
 * must keep.
 */
import { SCENARIOS } from "./support/hostile-scenarios.js";
import { describeHostileStore } from "./support/hostile-store.js";

describeHostileStore(
  "a misbehaving list-bookings never silently loses a booking",
  SCENARIOS.filter((s) => s.command !== "sync"),
);
