/** The environment of a CLI subprocess that reads a mirror and nothing else. */
import type { BackendKind } from "./postgres.js";

/** The mirror's settings for a subprocess: the database alone, nothing of the API or the events. */
export function dbEnv(kind: BackendKind, location: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: "warn" };
  for (const name of Object.keys(env)) if (/^(BOOKING_(API|DB)_|EVENTS_)/.test(name)) delete env[name];
  if (kind === "sqlite") env.BOOKING_DB_PATH = location;
  else env.BOOKING_DB_URL = location;
  return env;
}
