/**
 * Connections to a PostgreSQL mirror: a pool whose connections notice a dead
 * peer within seconds, and the URL as it may be logged.
 */
import pg from "pg";

/** Connections per pool: the worker writes one page at a time, and reads are few. */
export const DEFAULT_POOL_SIZE = 4;

/** How long to wait for a connection, new or from the pool, before failing, ms. */
export const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Server-side settings of every connection: TCP keepalives after 5 s idle, every 2 s, 3 missed
 * (a vanished worker's session ends within ~11 s instead of the OS's ~2 h), and a check every 2 s
 * that the client is still there while a query runs (PostgreSQL 14 and later, skipped before).
 */
const SESSION_SETTINGS: Readonly<Record<string, string>> = {
  tcp_keepalives_idle: "5",
  tcp_keepalives_interval: "2",
  tcp_keepalives_count: "3",
  client_connection_check_interval: "2000",
};

/** int8 (count(*), sum()) and numeric as JS numbers, as better-sqlite3 returns SQLite's integers. */
const NUMBER_TYPES = new Set<number>([pg.types.builtins.INT8, pg.types.builtins.NUMERIC]);

/** `url` with its password (in the authority or a `password` parameter) shown as `***`, for logs and errors. */
export function redactUrl(url: string | URL): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Unparsable: hide everything between "user:" and the last "@", more rather than less.
    return String(url).replace(/\/\/([^:/@]*):.*@/, "//$1:***@");
  }
  if (parsed.password) parsed.password = "***";
  if (parsed.searchParams.has("password")) parsed.searchParams.set("password", "***");
  return parsed.toString();
}

/**
 * A pool of connections to the database at `url`; nothing connects until the first query. `password`
 * replaces the URL's (one read from a `_FILE` variable); `max` connections, default `DEFAULT_POOL_SIZE`.
 */
export function createPool(
  url: string | URL,
  options: { password?: string | undefined; max?: number } = {},
): pg.Pool {
  const target = new URL(url);
  // Set in the URL, since pg lets the connection string's (even empty) password win over `password`.
  if (options.password !== undefined) target.password = encodeURIComponent(options.password);
  return new pg.Pool({
    connectionString: target.toString(),
    application_name: "booking-sync",
    max: options.max ?? DEFAULT_POOL_SIZE,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // Client-side keepalives, so a query to a vanished server fails in minutes rather than hours
    // (Node sets only the idle time; the probes' interval and count are the OS's).
    keepAlive: true,
    keepAliveInitialDelayMillis: 5_000,
    types: {
      getTypeParser: ((oid: number, format?: "text" | "binary") =>
        NUMBER_TYPES.has(oid) && format !== "binary"
          ? (value: string) => Number(value)
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
    onConnect: applySessionSettings,
  });
}

/** Applies `SESSION_SETTINGS` that this server knows, in one round trip. */
async function applySessionSettings(client: pg.ClientBase): Promise<void> {
  await client.query(
    `SELECT set_config(s.name, v.setting, false)
     FROM jsonb_each_text($1::jsonb) AS v(name, setting) JOIN pg_settings s ON s.name = v.name`,
    [JSON.stringify(SESSION_SETTINGS)],
  );
}
