/**
 * The mirror's data dictionary: every view, table and column, what it means and where it comes from
 * in the partner API's contract. The one source of `docs/schema.md` and the Datasette metadata
 * (dictionary-docs.ts); a test fails when it and a freshly migrated database disagree.
 */
import { OPERATIONAL_TABLES } from "./dictionary-operations.js";
import { BOOKING_TABLES } from "./dictionary-tables.js";
import { VIEWS } from "./dictionary-views.js";

/** One column of a table or view. */
export interface ColumnEntry {
  /** What a value means, with its unit (NGN; UTC ISO 8601 text; 0/1). */
  meaning: string;
  /**
   * Where it comes from: a contract field with the views that carry it (`` `totalAmount` (summary and
   * full views) ``), a path into the full record (`` `packages.packages[].items[].hsCode` ``), or how
   * the worker or the view derives it.
   */
  source: string;
}

/** A table or view. */
export interface RelationEntry {
  description: string;
  /** The worker's own bookkeeping, not for analysis: hidden in Datasette, marked in docs/schema.md. */
  internal: boolean;
  /** Every column, in the database's order. */
  columns: Readonly<Record<string, ColumnEntry>>;
}

export interface Dictionary {
  /** The views analysts should start from, created by the migrations. */
  views: Readonly<Record<string, RelationEntry>>;
  /** Every table, the booking data first, then the worker's operational and internal ones. */
  tables: Readonly<Record<string, RelationEntry>>;
}

export const DICTIONARY: Dictionary = {
  views: VIEWS,
  tables: { ...BOOKING_TABLES, ...OPERATIONAL_TABLES },
};
