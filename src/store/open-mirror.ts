/** Opens the mirror where the config says: a SQLite file by default, or PostgreSQL. */
import { existsSync } from "node:fs";
import type { Database } from "../config/config.js";
import { ConfigError } from "../errors.js";
import { checkDatabasePath } from "./access.js";
import { type OpenOptions, openStore } from "./open.js";
import { hasMirrorTables } from "./status.js";
import type { Mirror, Store } from "./store.js";

/**
 * The mirror `database` names. PostgreSQL's driver and drizzle's pg parts are imported only for a
 * postgres URL, so a SQLite sidecar never holds them (docs/performance.md, idle memory). One opened
 * `readonly` is neither created nor migrated: a database without the mirror's tables is refused.
 */
export async function openMirror(database: Database, options: OpenOptions = {}): Promise<Mirror> {
  if (database.kind === "sqlite")
    return options.readonly ? openSqliteReader(database.path) : openStore(database.path, options);
  const { openPostgresStore } = await import("./postgres/store.js");
  return openPostgresStore(database.url, { ...options, password: database.password });
}

/** A SQLite file that is missing or lacks the tables is refused, saying where the mirror comes from. */
function openSqliteReader(path: string): Store {
  checkDatabasePath(path);
  if (!existsSync(path)) {
    throw new ConfigError(`database ${path} does not exist`, {
      hint: "point --db or BOOKING_DB_PATH at the mirror, or create it with `booking-sync sync`",
    });
  }
  const store = openStore(path, { readonly: true });
  if (!hasMirrorTables(store.db)) {
    store.close();
    throw new ConfigError(`database ${path} has no booking-sync tables`, {
      hint: "point --db or BOOKING_DB_PATH at the mirror, or create the tables with `booking-sync migrate`",
    });
  }
  return store;
}
