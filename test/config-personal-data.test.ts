/**
 * The personal-data settings: SYNC_PERSONAL_DATA (flag --personal-data) and the hashing key from
 * SYNC_PERSONAL_DATA_KEY or the file SYNC_PERSONAL_DATA_KEY_FILE names, validated like every
 * other setting: the error names the variable and the value, and says what is accepted.
 */
import { describe, expect, it } from "vitest";
import { describeEnvironment, loadConfig } from "../src/config/config.js";
import { configError } from "./support/config-error.js";

const env = { BOOKING_API_BASE_URL: "https://partner.example/api/v2", BOOKING_API_TOKEN: "s3cret-token" };
const KEY = "k3y-of-at-least-16-chars";

describe("SYNC_PERSONAL_DATA", () => {
  it("defaults to keep, with no key", () => {
    expect(loadConfig({ env })).toMatchObject({ personalData: "keep", personalDataKey: undefined });
  });

  it.each(["keep", "hash", "drop"])("accepts %s; the flag wins over the environment", (mode) => {
    expect(loadConfig({ env: { ...env, SYNC_PERSONAL_DATA: mode } }).personalData).toBe(mode);
    const flagged = loadConfig({
      env: { ...env, SYNC_PERSONAL_DATA: "keep" },
      flags: { personalData: mode },
    });
    expect(flagged.personalData).toBe(mode);
  });

  it.each([
    [{ SYNC_PERSONAL_DATA: "pseudonymise" }, {}, 'SYNC_PERSONAL_DATA = "pseudonymise"'],
    [{}, { personalData: "remove" }, '--personal-data = "remove"'],
  ])("refuses a mode it does not know, naming where it came from", (extraEnv, flags, named) => {
    const err = configError(() => loadConfig({ env: { ...env, ...extraEnv }, flags }));
    expect(err.message).toBe(`${named} is not valid: expected keep, hash or drop`);
    expect(err.hint).toMatch(/unset it for the default \(keep\)/);
  });

  it("takes the key from the environment or, trimmed, from its file; never both", () => {
    const fromEnv = loadConfig({ env: { ...env, SYNC_PERSONAL_DATA: "hash", SYNC_PERSONAL_DATA_KEY: KEY } });
    expect(fromEnv.personalDataKey).toBe(KEY);
    const fromFile = loadConfig({
      env: { ...env, SYNC_PERSONAL_DATA: "hash", SYNC_PERSONAL_DATA_KEY_FILE: "/run/secrets/pd" },
      readFile: (p) => (p === "/run/secrets/pd" ? `${KEY}\n` : ""),
    });
    expect(fromFile.personalDataKey).toBe(KEY);
    expect(fromFile).not.toHaveProperty("personalDataKeyFile");
    const both = configError(() =>
      loadConfig({
        env: { ...env, SYNC_PERSONAL_DATA_KEY: KEY, SYNC_PERSONAL_DATA_KEY_FILE: "/k" },
        readFile: () => KEY,
      }),
    );
    expect(both.message).toContain("both SYNC_PERSONAL_DATA_KEY and SYNC_PERSONAL_DATA_KEY_FILE are set");
  });

  it("refuses a short key without showing it, from either source", () => {
    const short = configError(() =>
      loadConfig({ env: { ...env, SYNC_PERSONAL_DATA: "hash", SYNC_PERSONAL_DATA_KEY: "short" } }),
    );
    expect(short.message).toBe(
      "SYNC_PERSONAL_DATA_KEY = (hidden) is not valid: expected a secret of at least 16 characters",
    );
    const file = configError(() =>
      loadConfig({
        env: { ...env, SYNC_PERSONAL_DATA: "hash", SYNC_PERSONAL_DATA_KEY_FILE: "/k" },
        readFile: () => "short\n",
      }),
    );
    expect(file.message).toContain('SYNC_PERSONAL_DATA_KEY_FILE = "/k" is not valid');
    expect(file.message).toContain("at least 16 characters");
    expect(file.message + file.hint).not.toContain("short");
  });

  it("refuses a key with keep, where hashing was meant and would not happen; drop ignores it", () => {
    const err = configError(() => loadConfig({ env: { ...env, SYNC_PERSONAL_DATA_KEY: KEY } }));
    expect(err.message).toContain("SYNC_PERSONAL_DATA_KEY is set but SYNC_PERSONAL_DATA is keep");
    expect(err.hint).toContain("SYNC_PERSONAL_DATA=hash");
    expect(err.message + err.hint).not.toContain(KEY);
    const flagged = configError(() =>
      loadConfig({ env: { ...env, SYNC_PERSONAL_DATA_KEY: KEY }, flags: { personalData: "keep" } }),
    );
    expect(flagged.message).toContain("--personal-data is keep");
    const dropped = loadConfig({ env: { ...env, SYNC_PERSONAL_DATA: "drop", SYNC_PERSONAL_DATA_KEY: KEY } });
    expect(dropped.personalData).toBe("drop");
  });

  it("is listed in --help with its key variables", () => {
    const help = describeEnvironment();
    for (const name of ["SYNC_PERSONAL_DATA ", "SYNC_PERSONAL_DATA_KEY ", "SYNC_PERSONAL_DATA_KEY_FILE"])
      expect(help).toContain(name);
    expect(help).toContain("(default keep)");
  });
});
