/** Opens the mirror where the config says: a SQLite file by default, or PostgreSQL. */
import type { Database } from "../config/config.js";
import { type OpenOptions, openStore } from "./open.js";
import { openPostgresStore } from "./postgres/store.js";
import type { Mirror } from "./store.js";

export async function openMirror(database: Database, options: OpenOptions = {}): Promise<Mirror> {
  if (database.kind === "sqlite") return openStore(database.path, options);
  const { logger, batch, personalData, readonly } = options;
  return openPostgresStore(database.url, {
    logger,
    batch,
    personalData,
    readonly,
    password: database.password,
  });
}
