/**
 * The mirror's tables in SQLite, built from their one description in `tables.ts`; meanings are
 * there and in the data dictionary. Migrations under `drizzle/` are generated from this file.
 */
import { check, index, integer, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { mirrorTables } from "./tables.js";

const tables = mirrorTables({
  name: "sqlite",
  table: sqliteTable,
  text: (name) => text(name),
  integer: (name) => integer(name),
  wide: (name) => integer(name),
  real: (name) => real(name),
  flag: (name) => integer(name, { mode: "boolean" }),
  id: (name) => integer(name).primaryKey({ autoIncrement: true }),
  // INTEGER is 64-bit already; AUTOINCREMENT never hands out an id again after pruning.
  position: (name) => integer(name),
  positionId: (name) => integer(name).primaryKey({ autoIncrement: true }),
  index,
  textIndex: (name, column) => index(name).on(column as never),
  check,
  primaryKey,
});

export const { bookings, bookingPackages, bookingItems, bookingChanges, stateLabels } = tables;
export const { syncState, syncRuns, rejectedRecords, leases } = tables;
export const { bookingEvents, eventDelivery, eventReplays, eventStream } = tables;
