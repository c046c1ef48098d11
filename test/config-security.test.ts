/**
 * The security settings as `loadConfig` reads them: the base URLs refused before any connection,
 * the trigger token's file, the database's file mode. Errors follow the config module's style:
 * the variable, its value (any password masked), what is accepted, then what to do.
 */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/config.js";
import { isLoopbackHost, maskUserinfo } from "../src/config/transport.js";
import { configError } from "./support/config-error.js";

const TOKEN = { BOOKING_API_TOKEN: "s3cret-token" };

const baseUrl = (url: string, extra: Record<string, string> = {}) =>
  loadConfig({ env: { ...TOKEN, BOOKING_API_BASE_URL: url, ...extra } }).apiBaseUrl;

describe("API base URLs refused at config time", () => {
  it.each([
    "https://partner.example/api/v2",
    "http://127.0.0.1:8080/api/v2",
    "http://127.42.0.9/api/v2",
    "http://localhost:3000/api/v2",
    "http://LOCALHOST/api/v2",
    "http://[::1]:8080/api/v2",
  ])("accepts %s", (url) => {
    expect(baseUrl(url)).toBe(url);
  });

  it.each([
    "http://partner.example/api/v2",
    "http://10.0.0.5:8080/api/v2",
    "http://128.0.0.1/api/v2",
    "http://localhost.partner.example/api/v2",
    "http://[::2]/api/v2",
  ])(
    "refuses plain http to %s, a host that is not loopback, naming the variable, the value and what is accepted",
    (url) => {
      const err = configError(() => baseUrl(url));
      expect(err.message).toBe(
        `BOOKING_API_BASE_URL = ${JSON.stringify(url)} is not valid: expected an https URL ` +
          "(plain http only to localhost, 127.0.0.0/8 or ::1, or with BOOKING_API_ALLOW_INSECURE=true)",
      );
      expect(err.hint).toMatch(/^use https:\/\/.*, or set BOOKING_API_ALLOW_INSECURE=true for a test rig/);
    },
  );

  it("accepts plain http beyond loopback with BOOKING_API_ALLOW_INSECURE=true, and only then", () => {
    const url = "http://partner.example/api/v2";
    expect(baseUrl(url, { BOOKING_API_ALLOW_INSECURE: "true" })).toBe(url);
    configError(() => baseUrl(url, { BOOKING_API_ALLOW_INSECURE: "false" }));
    const bad = configError(() => baseUrl(url, { BOOKING_API_ALLOW_INSECURE: "please" }));
    expect(bad.message).toMatch(
      /^BOOKING_API_ALLOW_INSECURE = "please" is not valid: expected true or false/,
    );
  });

  it("suggests the https form of the same address", () => {
    const err = configError(() => baseUrl("http://partner.example:8443/api/v2/"));
    expect(err.hint).toContain("use https://partner.example:8443/api/v2,");
  });

  it.each([
    ["https://user:hunter2-pw@partner.example/api/v2", "https://***@partner.example/api/v2"],
    ["https://hunter2-pw@partner.example/api/v2", "https://***@partner.example/api/v2"],
    ["http://user:hunter2-pw@127.0.0.1:8080/api/v2", "http://***@127.0.0.1:8080/api/v2"],
  ])("always refuses credentials in the URL (%s), without echoing them", (url, shown) => {
    const extras: Record<string, string>[] = [{}, { BOOKING_API_ALLOW_INSECURE: "true" }];
    for (const extra of extras) {
      const err = configError(() => baseUrl(url, extra));
      expect(err.message).toBe(
        `BOOKING_API_BASE_URL = ${JSON.stringify(shown)} is not valid: expected a URL without user:password@ ` +
          "(booking-sync authenticates with BOOKING_API_TOKEN or BOOKING_API_TOKEN_FILE)",
      );
      expect(`${err.message}\n${err.hint}`).not.toContain("hunter2");
      expect(err.hint).toMatch(
        /^remove the credentials, e\.g\. https?:\/\/(partner\.example|127\.0\.0\.1:8080)\/api\/v2,/,
      );
    }
  });

  it("names --base-url when the URL came from the flag, and masks a password even in a URL refused for another reason", () => {
    const flag = configError(() =>
      loadConfig({ env: TOKEN, flags: { baseUrl: "https://u:hunter2-pw@partner.example/api/v2" } }),
    );
    expect(flag.message).toMatch(/^--base-url = "https:\/\/\*\*\*@partner\.example\/api\/v2" is not valid/);
    for (const [url, shown] of [
      ["ftp://u:hunter2-pw@partner.example/api/v2", "ftp://***@partner.example/api/v2"],
      ["https:u:hunter2-pw@partner.example/api/v2", "https:***@partner.example/api/v2"],
    ]) {
      const err = configError(() => baseUrl(url as string));
      expect(err.message).toContain(JSON.stringify(shown));
      expect(`${err.message}\n${err.hint}`).not.toContain("hunter2");
    }
  });
});

describe("transport helpers", () => {
  it.each([
    ["localhost", true],
    ["127.0.0.1", true],
    ["127.255.255.254", true],
    ["::1", true],
    ["[::1]", true],
    ["::ffff:127.0.0.1", true],
    ["0.0.0.0", false],
    ["::", false],
    ["10.1.2.3", false],
    ["partner.example", false],
    ["localhost.example", false],
  ])("isLoopbackHost(%s) is %s", (host, loopback) => {
    expect(isLoopbackHost(host)).toBe(loopback);
  });

  it.each([
    ["https://host/api/v2", "https://host/api/v2"],
    ["https://u:p@host/api/v2", "https://***@host/api/v2"],
    ["https://u:p@h@host/api/v2", "https://***@host/api/v2"],
    [" https://u:p@host", " https://***@host"],
    ["https://host/a@b", "https://host/a@b"],
  ])("maskUserinfo(%s) is %s", (raw, masked) => {
    expect(maskUserinfo(raw)).toBe(masked);
  });
});

describe("TRIGGER_TOKEN_FILE", () => {
  const env = { ...TOKEN, BOOKING_API_BASE_URL: "https://partner.example/api/v2" };

  it("reads the trigger token from the file, trimmed, as BOOKING_API_TOKEN_FILE does", () => {
    const c = loadConfig({
      env: { ...env, TRIGGER_TOKEN_FILE: "/run/secrets/trigger" },
      readFile: (p) => (p === "/run/secrets/trigger" ? "trigger-from-file\n" : ""),
    });
    expect(c.triggerToken).toBe("trigger-from-file");
    expect(c).not.toHaveProperty("triggerTokenFile");
  });

  it("refuses both TRIGGER_TOKEN and TRIGGER_TOKEN_FILE, an unreadable file and an empty one", () => {
    const both = configError(() =>
      loadConfig({ env: { ...env, TRIGGER_TOKEN: "t", TRIGGER_TOKEN_FILE: "/x" }, readFile: () => "t" }),
    );
    expect(both.message).toBe("both TRIGGER_TOKEN and TRIGGER_TOKEN_FILE are set");
    const missing = configError(() =>
      loadConfig({
        env: { ...env, TRIGGER_TOKEN_FILE: "/missing" },
        readFile: () => {
          throw Object.assign(new Error("nope"), { code: "ENOENT" });
        },
      }),
    );
    expect(missing.message).toBe('TRIGGER_TOKEN_FILE = "/missing" cannot be read (ENOENT)');
    const empty = configError(() =>
      loadConfig({ env: { ...env, TRIGGER_TOKEN_FILE: "/empty" }, readFile: () => " \n" }),
    );
    expect(empty.message).toBe('TRIGGER_TOKEN_FILE = "/empty" is empty');
  });
});

describe("BOOKING_DB_MODE", () => {
  it("defaults to 0600 and takes 0640 or 0644, with or without the leading zero", () => {
    expect(loadConfig({ env: {} }).dbMode).toBe(0o600);
    expect(loadConfig({ env: { BOOKING_DB_MODE: "640" } }).dbMode).toBe(0o640);
    expect(loadConfig({ env: { BOOKING_DB_MODE: "0644" } }).dbMode).toBe(0o644);
  });

  it.each(["0666", "0755", "0400", "rw-r-----", "640x"])("refuses %s, saying what is accepted", (mode) => {
    const err = configError(() => loadConfig({ env: { BOOKING_DB_MODE: mode } }));
    expect(err.message).toBe(
      `BOOKING_DB_MODE = ${JSON.stringify(mode)} is not valid: expected 0600 (owner only), ` +
        "0640 (its group may read) or 0644 (every local user may read)",
    );
  });
});
