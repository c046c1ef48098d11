/** `booking-sync status`: what the mirror holds and how fresh it is, read-only; `--max-age` makes it a check. */
import { existsSync } from "node:fs";
import type { Command } from "commander";
import { type Database, loadConfig } from "../config/config.js";
import { ConfigError } from "../errors.js";
import { escapeJsonControls, printable } from "../printable.js";
import { checkDatabasePath } from "../store/access.js";
import { isSqlite, type Mirror, openMirror } from "../store/index.js";
import { hasMirrorTables, type Status } from "../store/status.js";
import { EXIT, reportError } from "./output.js";
import { statusText } from "./status-text.js";

const UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;

export function registerStatus(program: Command): void {
  program
    .command("status")
    .description(
      "show the mirror: size, bookings, checkpoints, last runs, rejects and drift; reads only, " +
        "works while a sync runs; with --max-age, exits 1 when the last successful sync is older",
    )
    .option("--json", "print one JSON object instead of text")
    .option(
      "--max-age <duration>",
      "exit 1 when the last successful sync finished longer ago: 90s, 15m, 2h, 1d",
    )
    .action(function (this: Command) {
      return statusAction(this.optsWithGlobals()).then((code) => {
        (this as Command & { exitCode?: number }).exitCode = code;
      });
    });
}

/** `90s`, `15m`, `2h`, `1d` or plain whole seconds, as seconds (more than 0). */
export function parseMaxAge(text: string): number {
  const m = /^(\d+)([smhd]?)$/.exec(text.trim());
  const seconds = m ? Number(m[1]) * UNIT_SECONDS[(m[2] || "s") as keyof typeof UNIT_SECONDS] : 0;
  if (seconds > 0) return seconds;
  throw new ConfigError(
    `--max-age = ${JSON.stringify(text)} is not valid: expected a duration like 90s, 15m, 2h or 1d, or whole seconds`,
    { hint: "booking-sync status --max-age 15m" },
  );
}

/** Why the mirror is older than `maxAgeSeconds`, or undefined when it is fresh enough. */
export function staleness(status: Status, maxAgeSeconds: number): string | undefined {
  const last = status.lastSuccess;
  const failed = status.runs.find(
    (r) => r.kind === "sync" && r.status !== "success" && r.status !== "running" && r.id > (last?.runId ?? 0),
  );
  const since = failed
    ? `; the last sync ${failed.status} at ${failed.startedAt}: ${failed.error ?? "no error"}`
    : "";
  if (!last) return `never synced: no successful sync run in ${status.database.path}${since}`;
  const ageMs = Date.parse(status.at) - Date.parse(last.finishedAt);
  if (ageMs <= maxAgeSeconds * 1000) return undefined;
  return (
    `the last successful sync finished at ${last.finishedAt}, ${last.ageSeconds} s ago ` +
    `(more than --max-age ${maxAgeSeconds} s)${since}`
  );
}

async function statusAction(flags: Record<string, unknown>): Promise<number> {
  let mirror: Mirror | undefined;
  try {
    const maxAge = flags.maxAge === undefined ? undefined : parseMaxAge(String(flags.maxAge));
    // Only the database: status reads no API, so API settings are neither needed nor checked.
    const { BOOKING_DB_PATH, BOOKING_DB_URL, BOOKING_DB_PASSWORD_FILE } = process.env;
    const env = { BOOKING_DB_PATH, BOOKING_DB_URL, BOOKING_DB_PASSWORD_FILE };
    mirror = await openReadOnly(loadConfig({ flags: { db: flags.db }, env }).database);
    const status = await mirror.readStatus(new Date());
    const stale = maxAge === undefined ? undefined : staleness(status, maxAge);
    if (flags.json) {
      const check =
        maxAge === undefined
          ? null
          : { maxAgeSeconds: maxAge, stale: stale !== undefined, reason: stale ?? null };
      // Exact JSON, with DEL and C1 controls escaped too, so a terminal shows them.
      process.stdout.write(`${escapeJsonControls(JSON.stringify({ ...status, check }, null, 2))}\n`);
    } else {
      process.stdout.write(statusText(status));
    }
    if (stale === undefined) return EXIT.ok;
    process.stderr.write(`booking-sync: mirror is stale: ${printable(stale)}\n`);
    return EXIT.failed;
  } catch (err) {
    return reportError(err);
  } finally {
    await mirror?.close();
  }
}

/**
 * The mirror, opened to read only: nothing created or migrated. A SQLite file that is missing or
 * lacks the tables is refused here; PostgreSQL refuses a database without them on open.
 */
async function openReadOnly(database: Database): Promise<Mirror> {
  const path = database.kind === "sqlite" ? database.path : undefined;
  if (path !== undefined) checkDatabasePath(path);
  if (path !== undefined && !existsSync(path)) {
    throw new ConfigError(`database ${path} does not exist`, {
      hint: "point --db or BOOKING_DB_PATH at the mirror, or create it with `booking-sync sync`",
    });
  }
  const mirror = await openMirror(database, { readonly: true });
  if (isSqlite(mirror) && !hasMirrorTables(mirror.db)) {
    mirror.close();
    throw new ConfigError(`database ${mirror.path} has no booking-sync tables`, {
      hint: "point --db or BOOKING_DB_PATH at the mirror, or create the tables with `booking-sync migrate`",
    });
  }
  return mirror;
}
