/**
 * docs/compose.postgres.yaml, checked without a Docker engine: the workers' environment is read from
 * the file and given to the worker's own config, with the secrets it names written where it names.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/config.js";

const COMPOSE = readFileSync(join(import.meta.dirname, "../docs/compose.postgres.yaml"), "utf8");

/** The `key: value` lines of the block under `header` (indented deeper than it), as a map. */
function block(text: string, header: RegExp): Record<string, string> {
  const lines = text.split("\n");
  const start = lines.findIndex((l) => header.test(l));
  if (start < 0) throw new Error(`no ${header} in the compose file`);
  const indent = (l: string) => l.length - l.trimStart().length;
  const own = indent(lines[start] ?? "");
  const out: Record<string, string> = {};
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === "" || line.trim().startsWith("#")) continue;
    if (indent(line) <= own) break;
    const m = /^\s*([A-Z_]+):\s*(.*)$/.exec(line);
    if (m?.[1]) out[m[1]] = (m[2] ?? "").replace(/^"(.*)"$/, "$1");
  }
  return out;
}

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("docs/compose.postgres.yaml", () => {
  it("gives both workers one environment, which the worker reads as a PostgreSQL mirror", () => {
    expect(COMPOSE).toMatch(/^ {2}worker-a:\n {4}<<: \*worker$/m);
    expect(COMPOSE).toMatch(/^ {2}worker-b:\n {4}<<: \*worker$/m);
    const environment = block(COMPOSE.slice(COMPOSE.indexOf("x-worker")), /^ {2}environment:/);
    dir = mkdtempSync(join(tmpdir(), "booking-sync-compose-"));
    const secrets = dir;
    writeFileSync(join(secrets, "db_password"), "s3cret-from-file\n");
    writeFileSync(join(secrets, "booking_api_token"), "token-from-file\n");
    const local = (value: string) => value.replace("/run/secrets", secrets);
    const config = loadConfig({
      env: {
        ...environment,
        BOOKING_API_BASE_URL: "https://partner.example/api/v2",
        BOOKING_API_TOKEN_FILE: local(environment.BOOKING_API_TOKEN_FILE ?? ""),
        BOOKING_DB_PASSWORD_FILE: local(environment.BOOKING_DB_PASSWORD_FILE ?? ""),
      },
    });
    expect(config.database).toEqual({
      kind: "postgres",
      url: "postgres://booking_sync@db:5432/bookings",
      password: "s3cret-from-file",
    });
    expect(config.apiToken).toBe("token-from-file");
  });

  it("gives the database the password file the workers read, and its user and database", () => {
    const dbEnv = block(COMPOSE.slice(COMPOSE.indexOf("\n  db:")), /^ {4}environment:/);
    expect(dbEnv.POSTGRES_PASSWORD_FILE).toBe("/run/secrets/db_password");
    const url = new URL(block(COMPOSE, /^x-worker: &worker/).BOOKING_DB_URL ?? "");
    expect(url.username).toBe(dbEnv.POSTGRES_USER);
    expect(url.pathname).toBe(`/${dbEnv.POSTGRES_DB}`);
    expect(url.password).toBe("");
  });
});
