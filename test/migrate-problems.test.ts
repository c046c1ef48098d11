/**
 * A mirror made by the version before `created_at` could be NULL opens with nothing lost: the
 * rebuild of `bookings` keeps every booking, its packages, items and changes, and the views.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { drizzle } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../src/store/index.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** The migrations folder as it stood before `0004_problems`. */
function migrationsBefore(dir: string): string {
  const out = path.join(dir, "drizzle-before");
  fs.mkdirSync(path.join(out, "meta"), { recursive: true });
  const journal = JSON.parse(fs.readFileSync("drizzle/meta/_journal.json", "utf8"));
  journal.entries = journal.entries.filter((e: { idx: number }) => e.idx <= 3);
  fs.writeFileSync(path.join(out, "meta", "_journal.json"), JSON.stringify(journal));
  for (const e of journal.entries as Array<{ tag: string }>)
    fs.copyFileSync(path.join("drizzle", `${e.tag}.sql`), path.join(out, `${e.tag}.sql`));
  return out;
}

describe("migration 0004: bookings may lack a time, and note their problems", () => {
  it("keeps every booking, package, item and change of an existing mirror", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "booking-sync-migrate-"));
    dirs.push(dir);
    const file = path.join(dir, "old.db");
    const old = new Database(file);
    old.pragma("foreign_keys = ON");
    migrate(drizzle({ client: old }), { migrationsFolder: migrationsBefore(dir) });
    const t = "2026-11-01T10:00:00.000Z";
    old
      .prepare(
        `INSERT INTO bookings (id, created_at, paid, total_amount, first_seen_at, summary_synced_at, detail_synced_at)
         VALUES ('b1', ?, 1, 1500, ?, ?, ?)`,
      )
      .run(t, t, t, t);
    old
      .prepare("INSERT INTO booking_packages (booking_id, position, package_id) VALUES ('b1', 0, 'p1')")
      .run();
    old
      .prepare(
        "INSERT INTO booking_items (booking_id, package_position, position, name) VALUES ('b1', 0, 0, 'shoe')",
      )
      .run();
    old
      .prepare(
        `INSERT INTO booking_changes (booking_id, field, old_value, new_value, observed_at) VALUES ('b1', 'paid', '0', '1', ?)`,
      )
      .run(t);
    // An analyst's own view on `bookings` does not stop the rebuild, and works after it.
    old.exec("CREATE VIEW my_paid AS SELECT id FROM bookings WHERE paid = 1");
    old.close();

    const store = openStore(file);
    store.close();

    const db = new Database(file, { readonly: true });
    try {
      const count = (table: string) =>
        (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
      expect([
        count("bookings"),
        count("booking_packages"),
        count("booking_items"),
        count("booking_changes"),
      ]).toEqual([1, 1, 1, 1]);
      expect(
        db.prepare("SELECT booking_id, total_amount, has_details, problems FROM bookings_v").all(),
      ).toEqual([{ booking_id: "b1", total_amount: 1500, has_details: 1, problems: null }]);
      const createdAt = (db.pragma("table_info(bookings)") as Array<{ name: string; notnull: number }>).find(
        (c) => c.name === "created_at",
      );
      expect(createdAt?.notnull).toBe(0);
      expect(db.pragma("foreign_key_check")).toEqual([]);
      expect(db.prepare("SELECT id FROM my_paid").all()).toEqual([{ id: "b1" }]);
    } finally {
      db.close();
    }
  });

  it("names no rebuilt table's temporary name in a constraint, which the rename (legacy rule) would not rewrite", () => {
    for (const file of fs.readdirSync("drizzle").filter((f) => f.endsWith(".sql"))) {
      expect(fs.readFileSync(path.join("drizzle", file), "utf8"), file).not.toMatch(/CHECK\s*\(\s*"__new_/);
    }
  });
});
