/**
 * The data dictionary against the real thing: a freshly migrated mirror has exactly the tables, views
 * and columns it describes, in the same order, and the generated docs are the files committed.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DICTIONARY, type Dictionary } from "../src/store/dictionary.js";
import { DATASETTE_DATABASE, datasetteMetadata, SCHEMA_DOCS } from "../src/store/dictionary-docs.js";
import { openStore, type Store } from "../src/store/index.js";

const root = join(import.meta.dirname, "..");

let dir: string;
let store: Store;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "booking-sync-dictionary-"));
  store = openStore(join(dir, "bookings.db"));
});
afterAll(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Each table's and view's columns, keyed `kind name`, in the database's order. */
function databaseRelations(db: Database.Database): Map<string, string[]> {
  const relations = db
    .prepare("SELECT type, name FROM sqlite_schema WHERE type IN ('table', 'view') ORDER BY type, name")
    .all() as Array<{ type: string; name: string }>;
  const columns = db.prepare("SELECT name FROM pragma_table_xinfo(?)").pluck();
  return new Map(relations.map(({ type, name }) => [`${type} ${name}`, columns.all(name) as string[]]));
}

/** The same from the dictionary, each relation's columns in its order. */
function describedRelations(dictionary: Dictionary): Map<string, string[]> {
  const list = (kind: string, relations: Dictionary["views"]) =>
    Object.entries(relations).map(
      ([name, entry]) => [`${kind} ${name}`, Object.keys(entry.columns)] as const,
    );
  return new Map([...list("table", dictionary.tables), ...list("view", dictionary.views)]);
}

/** `kind name.column` for every column. */
const flat = (relations: Map<string, string[]>) =>
  [...relations].flatMap(([relation, columns]) => columns.map((column) => `${relation}.${column}`));

/** What the database has and the dictionary lacks, and the reverse. */
function drift(db: Database.Database, dictionary: Dictionary) {
  const inDatabase = flat(databaseRelations(db));
  const described = flat(describedRelations(dictionary));
  return {
    undescribed: inDatabase.filter((c) => !described.includes(c)),
    notInDatabase: described.filter((c) => !inDatabase.includes(c)),
  };
}

describe("data dictionary", () => {
  it("describes every table, view and column of a migrated mirror, and nothing else", () => {
    expect(drift(store.db, DICTIONARY)).toEqual({ undescribed: [], notInDatabase: [] });
    // In the database's order too, so the docs list columns as `SELECT *` shows them.
    const described = describedRelations(DICTIONARY);
    for (const [relation, columns] of databaseRelations(store.db))
      expect(described.get(relation), relation).toEqual(columns);
  });

  it("reports a column the dictionary lacks, and one the database lacks", () => {
    const { carrier: _dropped, ...rest } = DICTIONARY.views.bookings_v?.columns ?? {};
    const edited: Dictionary = {
      views: { ...DICTIONARY.views, bookings_v: { description: "", internal: false, columns: rest } },
      tables: {
        ...DICTIONARY.tables,
        leases: {
          description: "",
          internal: true,
          columns: { ...DICTIONARY.tables.leases?.columns, renewed_by: { meaning: "x", source: "y" } },
        },
      },
    };
    expect(drift(store.db, edited)).toEqual({
      undescribed: ["view bookings_v.carrier"],
      notInDatabase: ["table leases.renewed_by"],
    });
  });

  it("marks internal only what an analyst should not query, and describes every column", () => {
    const all = { ...DICTIONARY.views, ...DICTIONARY.tables };
    const internal = Object.keys(all).filter((name) => all[name]?.internal);
    expect(internal.sort()).toEqual([
      "__drizzle_migrations",
      "event_delivery",
      "event_replays",
      "event_stream",
      "leases",
      "sqlite_sequence",
      "sync_state",
    ]);
    for (const [name, entry] of Object.entries(all)) {
      expect(entry.description, name).not.toBe("");
      for (const [column, { meaning, source }] of Object.entries(entry.columns))
        expect(
          [meaning, source].every((text) => text.trim().length > 0),
          `${name}.${column}`,
        ).toBe(true);
    }
  });

  it("gives Datasette every table and view, with a description per column, internal ones hidden", () => {
    const metadata = JSON.parse(datasetteMetadata()) as {
      databases: Record<
        string,
        { tables: Record<string, { description: string; columns: Record<string, string>; hidden?: true }> }
      >;
    };
    const tables = metadata.databases[DATASETTE_DATABASE]?.tables ?? {};
    const all = { ...DICTIONARY.views, ...DICTIONARY.tables };
    expect(Object.keys(tables).sort()).toEqual(Object.keys(all).sort());
    for (const [name, entry] of Object.entries(all)) {
      const table = tables[name];
      expect(Object.keys(table?.columns ?? {}), name).toEqual(Object.keys(entry.columns));
      expect(table?.hidden ?? false, name).toBe(entry.internal);
      expect(JSON.stringify(table), `${name}: plain text, no code marks`).not.toContain("`");
    }
  });

  it.each(SCHEMA_DOCS)("$path is what the dictionary renders (npm run docs:schema)", ({ path, render }) => {
    const committed = readFileSync(join(root, path), "utf8");
    expect(committed === render(), `${path} is stale: run \`npm run docs:schema\``).toBe(true);
  });
});
