/** Opens the mirror where the config says: a SQLite file by default, or PostgreSQL. */
import type { Database } from "../config/config.js";
import { type OpenOptions, openStore } from "./open.js";
import type { Mirror } from "./store.js";

/**
 * The mirror `database` names. PostgreSQL's driver and drizzle's pg parts are imported only for a
 * postgres URL, so a SQLite sidecar never holds them (docs/performance.md, idle memory).
 */
export async function openMirror(database: Database, options: OpenOptions = {}): Promise<Mirror> {
  if (database.kind === "sqlite") return openStore(database.path, options);
  const { openPostgresStore } = await import("./postgres/store.js");
  const { logger, batch, personalData, readonly } = options;
  return openPostgresStore(database.url, {
    logger,
    batch,
    personalData,
    readonly,
    password: database.password,
  });
}
