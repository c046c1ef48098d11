/** Every setting in one table: `loadConfig` validates from it and `--help` prints it, so they agree. */
import { z } from "zod";
import { DAEMON_SETTINGS } from "./daemon-settings.js";
import { EVENT_SETTINGS } from "./event-settings.js";
import type { Setting } from "./setting.js";
import { bool, choice, exact, httpUrl, int } from "./values.js";

const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
/** SYNC_CONCURRENCY's default: requests in flight at once (docs/performance.md says why this many). */
export const DEFAULT_CONCURRENCY = 8;
/** What the mirror stores of senders' and receivers' personal fields (store/personal-data.ts). */
export const PERSONAL_DATA_MODES = ["keep", "hash", "drop"] as const;

/** Where the mirror is: all that a command which only reads it reads, so no other setting stops it. */
export const MIRROR_SETTINGS = ["dbPath", "dbUrl", "dbPasswordFile"] as const;

const TABLE = [
  {
    key: "apiBaseUrl",
    env: "BOOKING_API_BASE_URL",
    flag: "baseUrl",
    schema: httpUrl,
    accepts: "an http(s) URL including /api/v2, e.g. https://host/api/v2",
    help: "partner API base URL (required for API commands)",
    required: true,
  },
  {
    key: "apiToken",
    env: "BOOKING_API_TOKEN",
    schema: z.string().trim().min(1),
    accepts: "a non-empty bearer token",
    help: "partner API bearer token",
    secret: true,
  },
  {
    key: "apiTokenFile",
    env: "BOOKING_API_TOKEN_FILE",
    schema: z.string().min(1),
    accepts: "a path to a file holding the token",
    help: "read the token from this file (container secrets)",
  },
  {
    key: "apiAllowInsecure",
    env: "BOOKING_API_ALLOW_INSECURE",
    schema: bool,
    default: false,
    accepts: "true or false (or yes/no, 1/0)",
    help: "allow a plain http:// base URL to a host that is not loopback (test rigs only)",
  },
  {
    key: "dbPath",
    env: "BOOKING_DB_PATH",
    flag: "db",
    schema: z.string().min(1),
    default: "./data/bookings.db",
    accepts: "a file path, or a postgres:// URL",
    help: "SQLite database file (or a postgres:// URL: see BOOKING_DB_URL)",
  },
  {
    key: "dbUrl",
    env: "BOOKING_DB_URL",
    schema: z.string().regex(/^postgres(ql)?:\/\/\S+$/i),
    accepts: "a postgres:// or postgresql:// URL, e.g. postgres://sync@db:5432/bookings",
    help: "keep the mirror in PostgreSQL instead of a SQLite file",
    secret: true,
  },
  {
    key: "dbPasswordFile",
    env: "BOOKING_DB_PASSWORD_FILE",
    schema: z.string().min(1),
    accepts: "a path to a file holding the PostgreSQL password",
    help: "read the PostgreSQL password from this file (container secrets)",
  },
  {
    key: "dbMode",
    env: "BOOKING_DB_MODE",
    // Written in octal as chmod takes it; the value is the mode itself.
    schema: z.enum(["0600", "600", "0640", "640", "0644", "644"]).transform((v) => Number.parseInt(v, 8)),
    default: 0o600,
    shownDefault: "0600",
    accepts: "0600 (owner only), 0640 (its group may read) or 0644 (every local user may read)",
    help: "mode of a new database file and its -wal/-shm: 0600, 0640 or 0644 (new folders 0700/0750/0755)",
  },
  {
    key: "bookingType",
    env: "SYNC_BOOKING_TYPE",
    flag: "bookingType",
    schema: exact(choice(["IN", "LC", "ALL"]).transform((v) => (v === "IN" || v === "LC" ? v : undefined))),
    accepts: "IN, LC, or empty/ALL for all bookings",
    unset: "to sync all booking types",
    help: "only sync this booking type",
  },
  {
    key: "pageSize",
    env: "SYNC_PAGE_SIZE",
    flag: "pageSize",
    // At least 3: the floor is seen passed by a page ending in a run of records below it (window.ts),
    // which on a page of one or two would be the whole page.
    schema: int(3, 100),
    default: 100,
    accepts: "a whole number from 3 to 100",
    help: "bookings per request",
  },
  {
    key: "lookbackSeconds",
    env: "SYNC_LOOKBACK_SECONDS",
    flag: "lookbackSeconds",
    schema: int(0, 30 * 86400),
    default: 600,
    accepts: "whole seconds from 0 to 2592000",
    help: "re-read this margin below the checkpoint for late arrivals",
  },
  {
    key: "timeoutMs",
    env: "SYNC_TIMEOUT_MS",
    flag: "timeoutMs",
    schema: int(100, 600_000),
    default: 30_000,
    accepts: "milliseconds from 100 to 600000",
    help: "timeout of one HTTP attempt",
  },
  {
    key: "maxRetries",
    env: "SYNC_MAX_RETRIES",
    flag: "maxRetries",
    schema: int(0, 20),
    default: 5,
    accepts: "a whole number from 0 to 20",
    help: "retries of a failed request before the run fails",
  },
  {
    key: "maxResponseMb",
    env: "SYNC_MAX_RESPONSE_MB",
    flag: "maxResponseMb",
    schema: int(1, 1024),
    default: 32,
    accepts: "a whole number of MB from 1 to 1024",
    help: "largest response body read, in MB; a larger page is read again in smaller pages",
  },
  {
    key: "details",
    env: "SYNC_DETAILS",
    flag: "details",
    schema: bool,
    default: true,
    accepts: "true or false (or yes/no, 1/0)",
    help: "after a sync, fill in full details (type, items) through list-bookings; false skips it",
  },
  {
    key: "detailsMaxPages",
    env: "SYNC_DETAILS_MAX_PAGES",
    flag: "detailsMaxPages",
    schema: int(1, 100_000),
    default: 50,
    accepts: "a whole number from 1 to 100000",
    help: "list-bookings pages one details pass may read",
  },
  {
    key: "concurrency",
    env: "SYNC_CONCURRENCY",
    aliases: ["BACKFILL_CONCURRENCY"],
    flag: "concurrency",
    schema: int(1, 32),
    default: DEFAULT_CONCURRENCY,
    accepts: "a whole number from 1 to 32",
    help: "HTTP requests to the partner API in flight at once, across a run's slices and pages",
  },
  {
    key: "personalData",
    env: "SYNC_PERSONAL_DATA",
    flag: "personalData",
    schema: choice(PERSONAL_DATA_MODES),
    default: "keep",
    accepts: "keep, hash or drop",
    help: "names, phones, emails and address lines of senders and receivers: keep, hash or drop them",
  },
  {
    key: "personalDataKey",
    env: "SYNC_PERSONAL_DATA_KEY",
    schema: z.string().min(16),
    accepts: "a secret of at least 16 characters",
    help: "with SYNC_PERSONAL_DATA=hash: hash with HMAC-SHA256 under this key",
    secret: true,
  },
  {
    key: "personalDataKeyFile",
    env: "SYNC_PERSONAL_DATA_KEY_FILE",
    schema: z.string().min(1),
    accepts: "a path to a file holding the key",
    help: "read SYNC_PERSONAL_DATA_KEY from this file (container secrets)",
  },
  {
    key: "logLevel",
    env: "LOG_LEVEL",
    flag: "logLevel",
    schema: choice(LOG_LEVELS),
    default: "info",
    accepts: LOG_LEVELS.join(", "),
    help: "log level",
  },
  ...DAEMON_SETTINGS,
  ...EVENT_SETTINGS,
] as const satisfies readonly Setting[];
/** The rows as written, each with its own types: `Config` is derived from them. */
export type SettingRow = (typeof TABLE)[number];
export const SETTINGS: readonly Setting[] = TABLE;
