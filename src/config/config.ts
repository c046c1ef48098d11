/** Config is one pure function of flags and environment: flags over environment over defaults. */
import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import type { z } from "zod";
import { ConfigError, readOrRefuse } from "../errors.js";
import { checkEventSettings } from "./event-settings.js";
import type { Setting } from "./setting.js";
import { type PERSONAL_DATA_MODES, SETTINGS, type SettingRow } from "./settings.js";
import { apiUrlProblem, maskUserinfo, postgresUrl } from "./transport.js";
import { exactSchemas } from "./values.js";

type Flags = Record<string, unknown>;

/**
 * One field per setting of the table (settings.ts says what each means), with its parsed type; the
 * files are folded into their secrets, and the database settings into `database`.
 */
export type Config = {
  [S in SettingRow as Exclude<S["key"], `${string}File` | "dbUrl">]:
    | z.output<S["schema"]>
    | (S extends { default: string | number | boolean } ? never : undefined);
} & {
  /** Where the mirror is kept: `dbPath`'s file, or PostgreSQL when BOOKING_DB_URL (or `--db`) is a URL. */
  database: Database;
};

export type Database =
  | { kind: "sqlite"; path: string }
  /** `password`, when set, was read from BOOKING_DB_PASSWORD_FILE and replaces the URL's. */
  | { kind: "postgres"; url: string; password: string | undefined };

export interface ConfigInput {
  /** Parsed command-line options (commander's `opts()`), camelCase. */
  flags?: Flags;
  env: Record<string, string | undefined>;
  /** Reads the token file; injectable so the function stays testable. */
  readFile?: (path: string) => string;
  /** Keys of the only settings read; the others keep their defaults, unread and unchecked. Default all. */
  only?: readonly string[] | undefined;
}

/** Builds and validates the config. Throws ConfigError naming the setting and the bad value. */
export function loadConfig({
  flags = {},
  env,
  readFile = (p) => readFileSync(p, "utf8"),
  only,
}: ConfigInput): Config {
  const out: Record<string, unknown> = {};
  for (const setting of SETTINGS)
    out[setting.key] = only?.includes(setting.key) === false ? setting.default : resolve(setting, flags, env);
  for (const key of ["apiToken", "triggerToken", "personalDataKey", "eventsToken", "eventsWebhookSecret"])
    out[key] = resolveToken(key, `${key}File`, out[key], out[`${key}File`], readFile);
  checkPersonalData(out, nameOf("personalData", flags));
  checkEventSettings(out);
  // `--db` wins over BOOKING_DB_URL, as every flag over the environment.
  const named = flags.db !== undefined ? (out.dbPath as string) : ((out.dbUrl as string) ?? out.dbPath);
  out.database = database(named as string, out.dbPasswordFile, readFile);
  for (const key of Object.keys(out)) if (key.endsWith("File") || key === "dbUrl") delete out[key];
  const url = out.apiBaseUrl as string | undefined;
  const problem = url === undefined ? undefined : apiUrlProblem(url, out.apiAllowInsecure === true);
  if (problem) {
    // The token must not be sent there: credentials in the URL, or http beyond loopback.
    const raw = String(flags.baseUrl ?? env.BOOKING_API_BASE_URL);
    throw new ConfigError(
      `${nameOf("apiBaseUrl", flags)} = ${JSON.stringify(maskUserinfo(raw))} is not valid: expected ${problem.expected}`,
      { hint: problem.hint },
    );
  }
  return out as unknown as Config;
}

/** A feed sync's options as the settings give them: `booking-sync sync`'s and the daemon's. */
export function syncSettings(config: Config) {
  const { bookingType, pageSize, lookbackSeconds, details, detailsMaxPages, concurrency } = config;
  return { bookingType, pageSize, lookbackSeconds, details, detailsMaxPages, concurrency };
}

/** Like loadConfig, but the API settings must be present (commands that talk to the API). */
export function requireApi(config: Config): Config & { apiBaseUrl: string; apiToken: string } {
  if (!config.apiBaseUrl) {
    throw new ConfigError("BOOKING_API_BASE_URL is not set", {
      hint:
        "set BOOKING_API_BASE_URL=https://host/api/v2 (or --base-url), or try the bundled simulator: " +
        "`booking-sync simulate` prints the command that syncs it",
    });
  }
  if (!config.apiToken) {
    throw new ConfigError("no API token: set BOOKING_API_TOKEN or BOOKING_API_TOKEN_FILE", {
      hint: "export BOOKING_API_TOKEN=... or BOOKING_API_TOKEN_FILE=/run/secrets/booking_api_token",
    });
  }
  return config as Config & { apiBaseUrl: string; apiToken: string };
}

function resolve(setting: Setting, flags: Flags, env: Record<string, string | undefined>) {
  if (setting.flag && flags[setting.flag] !== undefined)
    return parse(setting, nameOf(setting.key, flags), flags[setting.flag]);
  // An empty variable means unset, as in most shells' `VAR= cmd` idiom.
  const names = [setting.env, ...(setting.aliases ?? [])].filter((n): n is string => Boolean(n && env[n]));
  const values = names.map((name) => parse(setting, name, env[name]));
  const [first] = names;
  const other = names.find((_, i) => !isDeepStrictEqual(values[i], values[0]));
  if (first !== undefined && other !== undefined)
    throw new ConfigError(
      `${first} = ${shown(setting, env[first])} and ${other} = ${shown(setting, env[other])} disagree`,
      { hint: `set only ${setting.env}: ${other} is an older name of it` },
    );
  return values.length > 0 ? values[0] : setting.default;
}

/** The setting's value from `raw`, as given under `name` (a flag or a variable); "" means unset. */
function parse(setting: Setting, name: string, raw: unknown): unknown {
  if (raw === undefined || raw === "") return setting.default;
  // Numbers, booleans and choices are read exactly as written (values.ts); free text is trimmed.
  const parsed = setting.schema.safeParse(
    typeof raw === "string" && !exactSchemas.has(setting.schema) ? raw.trim() : raw,
  );
  if (parsed.success) return parsed.data;
  throw new ConfigError(`${name} = ${shown(setting, raw)} is not valid: expected ${setting.accepts}`, {
    hint: fixHint(setting, name),
  });
}

/** A value as an error may show it: a secret never, a URL without its password. */
function shown(setting: Setting, raw: unknown): string {
  if (setting.secret) return "(hidden)";
  return JSON.stringify(typeof raw === "string" ? maskUserinfo(raw) : raw);
}

/** The `Try:` of a bad value: unsetting is offered only where it means something. */
function fixHint(setting: Setting, name: string): string {
  if (setting.required) return `fix ${name}: it is required and has no default`;
  if (setting.default !== undefined)
    return `fix ${name}, or unset it for the default (${shownDefault(setting)})`;
  return setting.unset ? `fix ${name}, or unset it ${setting.unset}` : `fix ${name}, or unset it`;
}

/** The database the settings name: a postgres URL in BOOKING_DB_URL or `--db`, else the SQLite file. */
function database(named: string, passwordFile: unknown, readFile: (p: string) => string): Database {
  const postgres = postgresUrl(named) ? named.trim() : undefined;
  if (postgres === undefined) return { kind: "sqlite", path: named };
  const password = resolveToken("dbUrl", "dbPasswordFile", undefined, passwordFile, readFile);
  if (password !== undefined && /^[^/]*\/\/[^/@]*:[^/@]*@/.test(postgres)) {
    throw new ConfigError("the PostgreSQL URL holds a password and BOOKING_DB_PASSWORD_FILE is set", {
      hint: "keep the password in one place: remove it from the URL, or unset BOOKING_DB_PASSWORD_FILE",
    });
  }
  return { kind: "postgres", url: postgres, password };
}

/** The name the setting `key` was given under: its flag when that is set, else its variable. */
function nameOf(key: string, flags: Flags = {}): string {
  const { flag, env } = SETTINGS.find((s) => s.key === key) as Setting;
  if (flag && flags[flag] !== undefined) return `--${flag.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
  return env ?? key;
}

export type PersonalDataMode = (typeof PERSONAL_DATA_MODES)[number];

/** A key with `keep` means hashing was meant and is not happening: refused, not ignored. */
function checkPersonalData(out: Record<string, unknown>, name: string): void {
  const { personalData: mode, personalDataKey: key } = out;
  if (key !== undefined && mode === "keep") {
    throw new ConfigError(`SYNC_PERSONAL_DATA_KEY is set but ${name} is keep: the key is only used to hash`, {
      hint: "set SYNC_PERSONAL_DATA=hash to store personal fields hashed, or unset SYNC_PERSONAL_DATA_KEY(_FILE)",
    });
  }
  if (typeof key === "string" && key.length < 16) {
    throw new ConfigError(
      `SYNC_PERSONAL_DATA_KEY_FILE = ${JSON.stringify(out.personalDataKeyFile)} is not valid: expected a file holding a secret of at least 16 characters (it holds ${key.length})`,
      { hint: "write a longer key into the file, e.g. the output of `openssl rand -hex 32`" },
    );
  }
}

/** A secret given either in the variable of setting `key` or in a file the variable of `fileKey` names. */
function resolveToken(
  key: string,
  fileKey: string,
  token: unknown,
  file: unknown,
  read: (p: string) => string,
) {
  const names = { token: nameOf(key), file: nameOf(fileKey) };
  if (token && file) {
    throw new ConfigError(`both ${names.token} and ${names.file} are set`, { hint: "unset one of them" });
  }
  if (typeof file !== "string") return token as string | undefined;
  const what = `${names.file} = ${JSON.stringify(file)}`;
  const fromFile = readOrRefuse(
    what,
    () => read(file),
    "point it at a readable file that holds the token",
  ).trim();
  if (!fromFile) throw new ConfigError(`${what} is empty`, { hint: "write the token into the file" });
  return fromFile;
}

function shownDefault(setting: Setting): string {
  return setting.shownDefault ?? String(setting.default);
}

/** The environment variables, one line each, for `--help`. */
export function describeEnvironment(): string {
  const width = Math.max(...SETTINGS.map((s) => s.env?.length ?? 0));
  const rows = SETTINGS.filter((s) => s.env).map((s) => {
    const notes = [
      ...(s.default === undefined ? [] : [`default ${shownDefault(s)}`]),
      ...(s.aliases?.length ? [`also read from ${s.aliases.join(", ")}`] : []),
    ];
    const def = notes.length > 0 ? ` (${notes.join("; ")})` : "";
    return `  ${(s.env as string).padEnd(width)} ${s.help}${def}`;
  });
  return `Environment variables (flags override them):\n${rows.join("\n")}`;
}
