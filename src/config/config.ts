/**
 * Config is one pure function of flags and environment: flags over environment over defaults,
 * each value validated, and an error that names the variable, the bad value and what is accepted.
 */
import { readFileSync } from "node:fs";
import { ConfigError } from "../errors.js";
import type { BookingType } from "../sync/ports.js";
import { SETTINGS, type Setting } from "./settings.js";

export interface Config {
  /** Partner API base URL including /api/v2, without a trailing slash. */
  apiBaseUrl: string | undefined;
  /** Bearer token, from BOOKING_API_TOKEN or the file BOOKING_API_TOKEN_FILE names. */
  apiToken: string | undefined;
  /** SQLite file; default ./data/bookings.db. */
  dbPath: string;
  /** Feed scope; undefined syncs all bookings. */
  bookingType: BookingType | undefined;
  /** Bookings per request, 1–100; default 100. */
  pageSize: number;
  /** Margin re-read below the checkpoint, seconds; default 600. */
  lookbackSeconds: number;
  /** Timeout of one HTTP attempt, ms; default 30000. */
  timeoutMs: number;
  /** Retries after a failed attempt; default 5. */
  maxRetries: number;
  /** Largest response body read, MB (1 MB = 1,048,576 bytes), 1–1024; default 32. */
  maxResponseMb: number;
  /** Fill in details after a sync; default false. */
  details: boolean;
  /** list-bookings pages one details pass may read; default 50. */
  detailsMaxPages: number;
  /** Pages a backfill fetches at once; default 4. */
  concurrency: number;
  logLevel: "trace" | "debug" | "info" | "warn" | "error" | "fatal" | "silent";
  /** Cron expression of the daemon's syncs; default every minute. */
  schedule: string;
  /** Cron expression of the daemon's reconcile passes; off when undefined. */
  reconcileSchedule: string | undefined;
  /** Port of the daemon's HTTP endpoint; 0 disables; default 8080. */
  httpPort: number;
  /** Address the HTTP endpoint binds; default 127.0.0.1. */
  httpHost: string;
  /** /readyz turns unready when the last success is older, seconds; undefined = 3 schedule periods. */
  readyMaxAgeSeconds: number | undefined;
  /** Shared secret for POST /sync; open when undefined. */
  triggerToken: string | undefined;
}

export interface ConfigInput {
  /** Parsed command-line options (commander's `opts()`), camelCase. */
  flags?: Record<string, unknown>;
  env: Record<string, string | undefined>;
  /** Reads the token file; injectable so the function stays testable. */
  readFile?: (path: string) => string;
}

/** Builds and validates the config. Throws ConfigError naming the setting and the bad value. */
export function loadConfig({
  flags = {},
  env,
  readFile = (p) => readFileSync(p, "utf8"),
}: ConfigInput): Config {
  const out: Record<string, unknown> = {};
  for (const setting of SETTINGS) out[setting.key] = resolve(setting, flags, env);
  out.apiToken = resolveToken(
    out.apiToken as string | undefined,
    out.apiTokenFile as string | undefined,
    readFile,
  );
  delete out.apiTokenFile;
  return out as unknown as Config;
}

/** Like loadConfig, but the API settings must be present (commands that talk to the API). */
export function requireApi(config: Config): Config & { apiBaseUrl: string; apiToken: string } {
  if (!config.apiBaseUrl) {
    throw new ConfigError("BOOKING_API_BASE_URL is not set", {
      hint: "set BOOKING_API_BASE_URL=https://host/api/v2 (or --base-url), or try `npm run demo` for the simulator",
    });
  }
  if (!config.apiToken) {
    throw new ConfigError("no API token: set BOOKING_API_TOKEN or BOOKING_API_TOKEN_FILE", {
      hint: "export BOOKING_API_TOKEN=... or BOOKING_API_TOKEN_FILE=/run/secrets/booking_api_token",
    });
  }
  return config as Config & { apiBaseUrl: string; apiToken: string };
}

function resolve(setting: Setting, flags: Record<string, unknown>, env: Record<string, string | undefined>) {
  const fromFlag = setting.flag ? flags[setting.flag] : undefined;
  const fromEnv = setting.env ? env[setting.env] : undefined;
  const raw = fromFlag !== undefined ? fromFlag : fromEnv;
  // An empty variable means unset, as in most shells' `VAR= cmd` idiom.
  if (raw === undefined || raw === "") return setting.default;
  const parsed = setting.schema.safeParse(typeof raw === "string" ? raw.trim() : raw);
  if (parsed.success) return parsed.data;
  const name = fromFlag !== undefined ? `--${kebab(setting.flag as string)}` : (setting.env as string);
  const shown = setting.secret ? "(hidden)" : JSON.stringify(raw);
  throw new ConfigError(`${name} = ${shown} is not valid: expected ${setting.accepts}`, {
    hint: `fix ${name}, or unset it for the default${setting.default === undefined ? "" : ` (${setting.default})`}`,
  });
}

function resolveToken(token: string | undefined, file: string | undefined, readFile: (p: string) => string) {
  if (token && file) {
    throw new ConfigError("both BOOKING_API_TOKEN and BOOKING_API_TOKEN_FILE are set", {
      hint: "unset one of them",
    });
  }
  if (!file) return token;
  let text: string;
  try {
    text = readFile(file);
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? "unreadable";
    throw new ConfigError(`BOOKING_API_TOKEN_FILE = ${JSON.stringify(file)} cannot be read (${reason})`, {
      hint: "point it at a readable file that holds the token",
      cause: err,
    });
  }
  const fromFile = text.trim();
  if (!fromFile) {
    throw new ConfigError(`BOOKING_API_TOKEN_FILE = ${JSON.stringify(file)} is empty`, {
      hint: "write the token into the file",
    });
  }
  return fromFile;
}

function kebab(s: string): string {
  return s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** The environment variables, one line each, for `--help`. */
export function describeEnvironment(): string {
  const rows = SETTINGS.filter((s) => s.env).map((s) => {
    const def = s.default === undefined ? "" : ` (default ${s.default})`;
    return `  ${(s.env as string).padEnd(24)} ${s.help}${def}`;
  });
  return `Environment variables (flags override them):\n${rows.join("\n")}`;
}
