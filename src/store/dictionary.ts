/**
 * The mirror's data dictionary: every view, table and column, what it means and where it comes from
 * in the partner API's contract. The one source of `docs/schema.md` and the Datasette metadata
 * (dictionary-docs.ts); a test fails when it and a freshly migrated database disagree.
 */

import type { RelationEntry } from "./dictionary-entry.js";
import { EVENT_TABLES } from "./dictionary-events.js";
import { OPERATIONAL_TABLES } from "./dictionary-operations.js";
import { BOOKING_TABLES } from "./dictionary-tables.js";
import { VIEWS } from "./dictionary-views.js";

export type { ColumnEntry, RelationEntry } from "./dictionary-entry.js";

export interface Dictionary {
  /** The views analysts should start from, created by the migrations. */
  views: Readonly<Record<string, RelationEntry>>;
  /** Every table, the booking data first, then the worker's operational and internal ones. */
  tables: Readonly<Record<string, RelationEntry>>;
}

export const DICTIONARY: Dictionary = {
  views: VIEWS,
  tables: { ...BOOKING_TABLES, ...OPERATIONAL_TABLES, ...EVENT_TABLES },
};
