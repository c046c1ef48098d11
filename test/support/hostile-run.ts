/**
 * The CLI as a user runs it against the hostile server (a subprocess of the build, or its `main` in
 * this process), and the mirror as an analyst reads it (a connection of its own), for the hostile tests.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { type CliResult, runCli as runHarnessCli } from "./harness.js";
import type { HostileServer } from "./hostile-server.js";
import { mirrorSql } from "./mirror-harness.js";
import type { BackendKind } from "./postgres.js";

/** The built CLI (`npx tsc -p tsconfig.build.json`); HOSTILE_CLI points the tests at another build. */
export const CLI = process.env.HOSTILE_CLI ?? join(import.meta.dirname, "../../dist/cli.js");

export type { CliResult } from "./harness.js";

/** Runs the CLI asynchronously (the server runs in this process, so a synchronous spawn would block it). */
export function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return runHarnessCli(args, env, undefined, CLI);
}

/** The environment a hostile run's CLI gets: the server, the file, 100 a page, 2 retries, warnings only. */
export function hostileEnv(
  server: Pick<HostileServer, "url" | "token">,
  dbPath: string,
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
  return {
    ...process.env,
    TZ: "UTC",
    BOOKING_API_BASE_URL: server.url,
    BOOKING_API_TOKEN: server.token,
    BOOKING_DB_PATH: dbPath,
    SYNC_PAGE_SIZE: "100",
    SYNC_MAX_RETRIES: "2",
    LOG_LEVEL: "warn",
    ...extra,
  };
}

/** The variable that puts the mirror at `location` on `kind` (hostileEnv's BOOKING_DB_PATH names SQLite's). */
export function databaseEnv(kind: BackendKind, location: string): Record<string, string> {
  return kind === "postgres" ? { BOOKING_DB_URL: location } : {};
}

/** What the mirror holds. */
export interface Mirror {
  /** `sync_state.checkpoint` of the stream `feed`. */
  checkpoint: string | null;
  /** Ids of bookings present (not marked missing by reconcile). */
  live: Set<string>;
  /** Ids of bookings marked missing. */
  missing: Set<string>;
  /** Ids of quarantined records. */
  rejected: Set<string>;
  /** The last sync's drift check. */
  drift: { source_total: number | null; local_total: number | null } | undefined;
}

const empty = (): Mirror => ({
  checkpoint: null,
  live: new Set(),
  missing: new Set(),
  rejected: new Set(),
  drift: undefined,
});

/**
 * Reads the mirror at `location` (a SQLite file, or a PostgreSQL URL when `kind` says so) through a
 * connection of its own; an empty one before the first command made it.
 */
export async function readMirror(location: string, kind: BackendKind = "sqlite"): Promise<Mirror> {
  if (kind === "sqlite" && !existsSync(location)) return empty();
  const sql = mirrorSql(kind, location);
  try {
    if (kind === "postgres") {
      const [made] = await sql.query<{ t: string | null }>("SELECT to_regclass('sync_state')::text AS t");
      if (!made?.t) return empty();
    }
    const ids = async (where: string, column = "id", table = "bookings") =>
      new Set(
        (await sql.query<{ id: string }>(`SELECT ${column} AS id FROM ${table} WHERE ${where}`)).map(
          (r) => r.id,
        ),
      );
    const [checkpoint] = await sql.query<{ checkpoint: string | null }>(
      "SELECT checkpoint FROM sync_state WHERE stream = 'feed'",
    );
    const [drift] = await sql.query<NonNullable<Mirror["drift"]>>(
      "SELECT source_total, local_total FROM sync_runs WHERE kind = 'sync' ORDER BY id DESC LIMIT 1",
    );
    return {
      checkpoint: checkpoint?.checkpoint ?? null,
      live: await ids("missing_since IS NULL"),
      missing: await ids("missing_since IS NOT NULL"),
      rejected: await ids("booking_id IS NOT NULL", "booking_id", "rejected_records"),
      drift,
    };
  } finally {
    await sql.close();
  }
}

/** The exit and the last lines of a run's output, for failure messages. */
export function tail(r: CliResult): string {
  const lines = `${r.stdout}${r.stderr}`.trim().split("\n").slice(-6);
  return `exit ${r.code}${r.signal ? ` (${r.signal})` : ""}:\n${lines.join("\n").slice(0, 3000)}`;
}

/** The CLI's own error lines (`booking-sync: ...`), not its JSON log. */
export function errorLines(r: CliResult): string {
  return r.stderr
    .split("\n")
    .filter((line) => line.startsWith("booking-sync:"))
    .join("\n");
}

/**
 * Which bookings, by position from the newest: "3 bookings (positions 97-98, 412 of 1500
 * from the newest): 6775…, …", so a failure shows what went missing at a glance.
 */
export function describeIds(ids: readonly string[], server: HostileServer): string {
  if (ids.length === 0) return "none";
  const list = server.data.newestFirst();
  const at = new Map(list.map((b, k) => [b.id, k]));
  const positions = ids.map((id) => at.get(id) ?? -1).sort((a, b) => a - b);
  const ranges: string[] = [];
  for (let k = 0; k < positions.length; ) {
    let end = k;
    while (positions[end + 1] === (positions[end] as number) + 1) end++;
    ranges.push(end === k ? `${positions[k]}` : `${positions[k]}-${positions[end]}`);
    k = end + 1;
  }
  const shown = ranges.slice(0, 8).join(", ") + (ranges.length > 8 ? ", …" : "");
  return `${ids.length} bookings (positions ${shown} of ${list.length} from the newest; -1: not served): ${ids.slice(0, 3).join(", ")}`;
}
