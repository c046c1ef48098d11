import { describe, expect, it } from "vitest";
import { describeEnvironment, loadConfig, requireApi } from "../src/config/config.js";
import { DEFAULT_CONCURRENCY, MIRROR_SETTINGS } from "../src/config/settings.js";
import { configError } from "./support/config-error.js";

const env = { BOOKING_API_BASE_URL: "https://partner.example/api/v2/", BOOKING_API_TOKEN: "s3cret-token" };

describe("loadConfig", () => {
  it("applies defaults", () => {
    const c = loadConfig({ env });
    expect(c).toMatchObject({
      apiBaseUrl: "https://partner.example/api/v2",
      dbPath: "./data/bookings.db",
      bookingType: undefined,
      pageSize: 100,
      lookbackSeconds: 600,
      maxRetries: 5,
      maxResponseMb: 32,
      logLevel: "info",
      details: true,
      schedule: "* * * * *",
      httpPort: 8080,
    });
  });

  it("takes flags over environment over defaults", () => {
    const c = loadConfig({
      env: { ...env, SYNC_PAGE_SIZE: "50", BOOKING_DB_PATH: "/env.db" },
      flags: { db: "/flag.db" },
    });
    expect(c.pageSize).toBe(50);
    expect(c.dbPath).toBe("/flag.db");
  });

  it.each([
    ["SYNC_PAGE_SIZE", "500", "a whole number from 3 to 100"],
    ["SYNC_PAGE_SIZE", "ten", "a whole number from 3 to 100"],
    // Fewer, and the walk could never see it passed its floor: every sync would read the whole feed.
    ["SYNC_PAGE_SIZE", "2", "a whole number from 3 to 100"],
    ["SYNC_BOOKING_TYPE", "XX", "IN, LC"],
    ["SYNC_LOOKBACK_SECONDS", "-1", "whole seconds"],
    ["LOG_LEVEL", "loud", "trace, debug, info"],
    ["SYNC_SCHEDULE", "every minute", "a cron expression"],
    ["BOOKING_API_BASE_URL", "ftp://x", "an http(s) URL"],
    ["SYNC_DETAILS", "maybe", "true or false"],
    ["SYNC_MAX_RESPONSE_MB", "0", "a whole number of MB from 1 to 1024"],
    ["SYNC_MAX_RESPONSE_MB", "2048", "a whole number of MB from 1 to 1024"],
    ["SYNC_MAX_RESPONSE_MB", "1.5", "a whole number of MB from 1 to 1024"],
  ])("rejects %s=%s naming the variable, the value and what is accepted", (name, value, accepts) => {
    const err = configError(() => loadConfig({ env: { ...env, [name]: value } }));
    expect(err.message).toContain(name);
    expect(err.message).toContain(JSON.stringify(value));
    expect(err.message).toContain(accepts);
  });

  it("names the flag when the bad value came from a flag", () => {
    const err = configError(() => loadConfig({ env, flags: { pageSize: "0" } }));
    expect(err.message).toMatch(/^--page-size = "0"/);
  });

  it("takes the response cap from --max-response-mb over SYNC_MAX_RESPONSE_MB, and says how to fix a bad one", () => {
    const c = loadConfig({ env: { ...env, SYNC_MAX_RESPONSE_MB: "16" }, flags: { maxResponseMb: "64" } });
    expect(c.maxResponseMb).toBe(64);
    expect(loadConfig({ env: { ...env, SYNC_MAX_RESPONSE_MB: "16" } }).maxResponseMb).toBe(16);
    const err = configError(() => loadConfig({ env, flags: { maxResponseMb: "lots" } }));
    expect(err.message).toBe(
      '--max-response-mb = "lots" is not valid: expected a whole number of MB from 1 to 1024',
    );
    const fromEnv = configError(() => loadConfig({ env: { ...env, SYNC_MAX_RESPONSE_MB: "0" } }));
    expect(fromEnv.hint).toBe("fix SYNC_MAX_RESPONSE_MB, or unset it for the default (32)");
  });

  it("reads the token from BOOKING_API_TOKEN_FILE, trimmed", () => {
    const c = loadConfig({
      env: { BOOKING_API_BASE_URL: env.BOOKING_API_BASE_URL, BOOKING_API_TOKEN_FILE: "/run/secrets/t" },
      readFile: (p) => (p === "/run/secrets/t" ? "file-token\n" : ""),
    });
    expect(c.apiToken).toBe("file-token");
  });

  it("says which token file cannot be read, without a token in the message", () => {
    const err = configError(() =>
      loadConfig({
        env: { BOOKING_API_TOKEN_FILE: "/missing" },
        readFile: () => {
          throw Object.assign(new Error("nope"), { code: "ENOENT" });
        },
      }),
    );
    expect(err.message).toBe('BOOKING_API_TOKEN_FILE = "/missing" cannot be read (ENOENT)');
  });

  it("refuses a token given twice", () => {
    expect(() => loadConfig({ env: { ...env, BOOKING_API_TOKEN_FILE: "/x" }, readFile: () => "t" })).toThrow(
      /both BOOKING_API_TOKEN and BOOKING_API_TOKEN_FILE/,
    );
  });

  it("requires the API settings only where the API is used", () => {
    const c = loadConfig({ env: {} });
    expect(configError(() => requireApi(c)).message).toBe("BOOKING_API_BASE_URL is not set");
    expect(
      configError(() => requireApi(loadConfig({ env: { BOOKING_API_BASE_URL: "https://h/api/v2" } })))
        .message,
    ).toMatch(/no API token/);
  });

  describe("one rule for typed values, environment and flag alike", () => {
    // [variable, flag (also the config key), text, the value read]
    it.each([
      ["SYNC_DETAILS", "details", "true", true],
      ["SYNC_DETAILS", "details", "TRUE", true],
      ["SYNC_DETAILS", "details", "Yes", true],
      ["SYNC_DETAILS", "details", "1", true],
      ["SYNC_DETAILS", "details", "false", false],
      ["SYNC_DETAILS", "details", "NO", false],
      ["SYNC_DETAILS", "details", "0", false],
      ["SYNC_BOOKING_TYPE", "bookingType", "in", "IN"],
      ["SYNC_BOOKING_TYPE", "bookingType", "Lc", "LC"],
      ["SYNC_BOOKING_TYPE", "bookingType", "all", undefined],
      ["LOG_LEVEL", "logLevel", "WARN", "warn"],
      ["LOG_LEVEL", "logLevel", "Trace", "trace"],
      ["SYNC_PAGE_SIZE", "pageSize", "50", 50],
      ["SYNC_PAGE_SIZE", "pageSize", "007", 7],
      ["SYNC_LOOKBACK_SECONDS", "lookbackSeconds", "0", 0],
    ] as const)("%s / --%s = %j reads as %j", (name, flag, text, value) => {
      const fromEnv = loadConfig({ env: { ...env, [name]: text } }) as unknown as Record<string, unknown>;
      const fromFlag = loadConfig({ env, flags: { [flag]: text } }) as unknown as Record<string, unknown>;
      expect(fromEnv[flag]).toEqual(value);
      expect(fromFlag[flag]).toEqual(value);
    });

    it.each([
      ["SYNC_PAGE_SIZE", "pageSize", "5e1"],
      ["SYNC_PAGE_SIZE", "pageSize", "1.0"],
      ["SYNC_PAGE_SIZE", "pageSize", " 5"],
      ["SYNC_PAGE_SIZE", "pageSize", "5 "],
      ["SYNC_PAGE_SIZE", "pageSize", "0x10"],
      ["SYNC_PAGE_SIZE", "pageSize", "+5"],
      ["SYNC_PAGE_SIZE", "pageSize", "Infinity"],
      ["SYNC_CONCURRENCY", "concurrency", "4.0"],
      ["BACKFILL_CONCURRENCY", "concurrency", "4.0"],
      ["SYNC_CONCURRENCY", "concurrency", "0"],
      ["SYNC_CONCURRENCY", "concurrency", "33"],
      ["SYNC_TIMEOUT_MS", "timeoutMs", "1e4"],
      ["SYNC_DETAILS", null, "maybe"],
      ["SYNC_DETAILS", null, "y"],
      ["SYNC_DETAILS", null, " true"],
      ["SYNC_DETAILS", null, "on"],
      ["SYNC_BOOKING_TYPE", "bookingType", "XX"],
      ["SYNC_BOOKING_TYPE", "bookingType", " IN"],
      ["LOG_LEVEL", "logLevel", "verbose"],
    ] as const)("refuses %s / --%s = %j, naming what is accepted", (name, flag, text) => {
      const fromEnv = configError(() => loadConfig({ env: { ...env, [name]: text } }));
      expect(fromEnv.message.startsWith(`${name} = ${JSON.stringify(text)} is not valid: expected `)).toBe(
        true,
      );
      if (flag === null) return;
      const fromFlag = configError(() => loadConfig({ env, flags: { [flag]: text } }));
      expect(fromFlag.message).toMatch(/^--[a-z-]+ = /);
      expect(fromFlag.message).toContain(`${JSON.stringify(text)} is not valid: expected `);
    });

    it("reads a flag's own boolean (a switch such as --details)", () => {
      expect(loadConfig({ env, flags: { details: true } }).details).toBe(true);
    });

    it("still trims free text: a URL or a path with spaces around it", () => {
      const c = loadConfig({
        env: { ...env, BOOKING_API_BASE_URL: " https://h/api/v2 ", BOOKING_DB_PATH: " /x.db" },
      });
      expect(c.apiBaseUrl).toBe("https://h/api/v2");
      expect(c.dbPath).toBe("/x.db");
    });
  });

  describe("the hint of a bad value offers unsetting only where it means something", () => {
    it.each([
      ["BOOKING_API_BASE_URL", "not a url", "fix BOOKING_API_BASE_URL: it is required and has no default"],
      ["BOOKING_API_BASE_URL", "ftp://x", "fix BOOKING_API_BASE_URL: it is required and has no default"],
      ["SYNC_PAGE_SIZE", "0", "fix SYNC_PAGE_SIZE, or unset it for the default (100)"],
      ["SYNC_BOOKING_TYPE", "XX", "fix SYNC_BOOKING_TYPE, or unset it to sync all booking types"],
      [
        "RECONCILE_SCHEDULE",
        "nightly",
        "fix RECONCILE_SCHEDULE, or unset it to turn scheduled reconciles off",
      ],
    ])("%s = %j", (name, value, hint) => {
      const err = configError(() => loadConfig({ env: { ...env, [name]: value } }));
      expect(err.hint).toBe(hint);
      expect(err.hint).not.toMatch(/for the default$/);
    });

    it("names the accepted shape of a malformed base URL, from a flag too", () => {
      const err = configError(() => loadConfig({ env, flags: { baseUrl: "host/api/v2" } }));
      expect(err.message).toBe(
        '--base-url = "host/api/v2" is not valid: expected an http(s) URL including /api/v2, e.g. https://host/api/v2',
      );
      expect(err.hint).toBe("fix --base-url: it is required and has no default");
    });
  });

  it("never echoes a secret in an error", () => {
    const err = configError(() => loadConfig({ env: { ...env, BOOKING_API_TOKEN: " \t " } }));
    expect(err.message).toBe("BOOKING_API_TOKEN = (hidden) is not valid: expected a non-empty bearer token");
  });
});

describe("SYNC_CONCURRENCY, with BACKFILL_CONCURRENCY and --concurrency as its other names", () => {
  it("defaults to one constant, and reads 1 to 32 from either variable or the flag", () => {
    expect(loadConfig({ env }).concurrency).toBe(DEFAULT_CONCURRENCY);
    expect(loadConfig({ env: { ...env, SYNC_CONCURRENCY: "1" } }).concurrency).toBe(1);
    expect(loadConfig({ env: { ...env, BACKFILL_CONCURRENCY: "32" } }).concurrency).toBe(32);
    expect(loadConfig({ env: { ...env, SYNC_CONCURRENCY: "", BACKFILL_CONCURRENCY: "3" } }).concurrency).toBe(
      3,
    );
    expect(loadConfig({ env, flags: { concurrency: "16" } }).concurrency).toBe(16);
  });

  it("takes both variables when they agree, and the flag over either", () => {
    const both = { ...env, SYNC_CONCURRENCY: "12", BACKFILL_CONCURRENCY: "012" };
    expect(loadConfig({ env: both }).concurrency).toBe(12);
    const differ = { ...env, SYNC_CONCURRENCY: "12", BACKFILL_CONCURRENCY: "4" };
    expect(loadConfig({ env: differ, flags: { concurrency: "2" } }).concurrency).toBe(2);
  });

  it("refuses both variables set to different values, naming both", () => {
    const err = configError(() =>
      loadConfig({ env: { ...env, SYNC_CONCURRENCY: "12", BACKFILL_CONCURRENCY: "4" } }),
    );
    expect(err.message).toBe('SYNC_CONCURRENCY = "12" and BACKFILL_CONCURRENCY = "4" disagree');
    expect(err.hint).toBe("set only SYNC_CONCURRENCY: BACKFILL_CONCURRENCY is an older name of it");
  });

  it("names the older variable when its value is the bad one", () => {
    const err = configError(() =>
      loadConfig({ env: { ...env, SYNC_CONCURRENCY: "8", BACKFILL_CONCURRENCY: "x" } }),
    );
    expect(err.message).toBe('BACKFILL_CONCURRENCY = "x" is not valid: expected a whole number from 1 to 32');
  });

  it("--help lists it with its default and its older name", () => {
    expect(describeEnvironment()).toMatch(
      new RegExp(
        `SYNC_CONCURRENCY +.*\\(default ${DEFAULT_CONCURRENCY}; also read from BACKFILL_CONCURRENCY\\)`,
      ),
    );
  });
});

describe("the database setting", () => {
  const read = (extra: Record<string, string>, flags: Record<string, unknown> = {}, files = {}) =>
    loadConfig({
      env: { ...env, ...extra },
      flags,
      readFile: (p) => {
        const text = (files as Record<string, string>)[p];
        if (text === undefined) throw Object.assign(new Error("no such file"), { code: "ENOENT" });
        return text;
      },
    });

  it("is the SQLite file by default, and PostgreSQL when BOOKING_DB_URL or --db is a postgres URL", () => {
    expect(read({}).database).toEqual({ kind: "sqlite", path: "./data/bookings.db" });
    const url = "postgres://sync@db.internal:5432/bookings";
    expect(read({ BOOKING_DB_URL: url }).database).toEqual({ kind: "postgres", url, password: undefined });
    const flag = "postgresql://sync@db.internal/bookings?sslmode=require";
    expect(read({}, { db: flag }).database).toEqual({ kind: "postgres", url: flag, password: undefined });
  });

  it("takes --db over BOOKING_DB_URL, as every flag over the environment", () => {
    const url = "postgres://sync@db.internal/bookings";
    expect(read({ BOOKING_DB_URL: url }, { db: "/srv/other.db" }).database).toEqual({
      kind: "sqlite",
      path: "/srv/other.db",
    });
  });

  it("refuses a PostgreSQL URL that does not parse without echoing it", () => {
    const bad = configError(() => read({ BOOKING_DB_URL: "postgres://sync:hunter2@[db/bookings" }));
    expect(bad.message).toBe("the PostgreSQL URL does not parse");
    expect(JSON.stringify({ ...bad, message: bad.message, hint: bad.hint })).not.toContain("hunter2");
  });

  it("reads the password from BOOKING_DB_PASSWORD_FILE, and refuses a second one in the URL", () => {
    const files = { "/run/secrets/db": "pa55word\n" };
    const url = "postgres://sync@db/bookings";
    const config = read({ BOOKING_DB_URL: url, BOOKING_DB_PASSWORD_FILE: "/run/secrets/db" }, {}, files);
    expect(config.database).toEqual({ kind: "postgres", url, password: "pa55word" });
    const both = configError(() =>
      read(
        { BOOKING_DB_URL: "postgres://sync:other@db/bookings", BOOKING_DB_PASSWORD_FILE: "/run/secrets/db" },
        {},
        files,
      ),
    );
    expect(both.message).toMatch(/holds a password and BOOKING_DB_PASSWORD_FILE is set/);
    expect(both.message).not.toMatch(/other|pa55word/);
  });

  it("names a bad BOOKING_DB_URL without echoing it: it may hold a password", () => {
    const bad = configError(() => read({ BOOKING_DB_URL: "mysql://sync:hunter2@db/bookings" }));
    expect(bad.message).toMatch(/BOOKING_DB_URL = \(hidden\) is not valid: expected a postgres:\/\//);
    expect(`${bad.message} ${bad.hint}`).not.toMatch(/hunter2/);
  });
});

describe("loadConfig with only some settings (a reader's: where the mirror is)", () => {
  it("reads those, and leaves every other setting, even a bad one, at its default", () => {
    const bad = { SYNC_PAGE_SIZE: "many", LOG_LEVEL: "loud", BOOKING_API_BASE_URL: "ftp://x" };
    const c = loadConfig({ env: { ...bad, BOOKING_DB_PATH: "/m.db" }, only: MIRROR_SETTINGS });
    expect(c.database).toEqual({ kind: "sqlite", path: "/m.db" });
    expect(c).toMatchObject({ pageSize: 100, logLevel: "info", apiBaseUrl: undefined });
    expect(configError(() => loadConfig({ env: bad })).message).toMatch(/ is not valid: expected /);
  });
});
