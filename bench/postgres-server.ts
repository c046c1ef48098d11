/**
 * A throwaway PostgreSQL server, for the tests' globalSetup (test/support/postgres-server.ts) and
 * the sync benchmark: initdb into a fresh folder under the OS temp dir, trust auth, 127.0.0.1 on a
 * free port, run as the `postgres` OS user when we are root; `stop` ends it and removes the folder.
 * It lives in bench/ because tsconfig.bench.json compiles bench/ alone, and the tests can import
 * from here, not the other way round.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";

/** For initdb and pg_ctl on a loaded 2-core machine: generous, since a hang is still caught. */
const START_TIMEOUT_S = 120;

export interface PostgresServer {
  /** The server's `postgres` database. */
  url: string;
  /** Stops the server and removes its folder; a no-op for a server we did not start. Idempotent. */
  stop: () => void;
  /** The postmaster's process id, when we started it (to read its CPU time). */
  pid?: number | undefined;
}

/** The bin folder of the newest /usr/lib/postgresql/N, else the one on PATH holding initdb. */
export function postgresBinDir(): string | undefined {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).filter((v) => /^\d+(\.\d+)?$/.test(v)) : [];
  for (const v of versions.sort((a, b) => Number(b) - Number(a))) {
    if (existsSync(path.join(root, v, "bin", "initdb"))) return path.join(root, v, "bin");
  }
  return (process.env.PATH ?? "").split(path.delimiter).find((d) => d && existsSync(path.join(d, "initdb")));
}

/**
 * Starts a server from the initdb in `bin`, with `settings` (`-c name=value` each) added to the
 * ones that place it. Should this process exit without calling `stop`, the server still goes.
 */
export async function startThrowawayPostgres(
  bin: string,
  settings: readonly string[],
): Promise<PostgresServer> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "booking-sync-pg-"));
  // initdb refuses root: the server runs as `postgres`, which must own its folder.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) chownSync(dir, uidOf("postgres"), gidOf("postgres"));
  const data = path.join(dir, "data");
  const run = (tool: string, args: string[]) => {
    const [cmd, argv] = asRoot
      ? ["runuser", ["-u", "postgres", "--", path.join(bin, tool), ...args]]
      : [path.join(bin, tool), args];
    const r = spawnSync(cmd, argv, { encoding: "utf8", timeout: (START_TIMEOUT_S + 30) * 1000 });
    if (r.status !== 0) {
      const log = existsSync(path.join(dir, "log")) ? readFileSync(path.join(dir, "log"), "utf8") : "";
      throw new Error(`${tool} failed (${r.error?.message ?? `exit ${r.status}`}): ${r.stderr}${log}`.trim());
    }
  };
  const remove = () => rmSync(dir, { recursive: true, force: true });
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    process.removeListener("exit", stop);
    try {
      run("pg_ctl", ["-D", data, "-w", "-t", String(START_TIMEOUT_S), "stop", "-m", "fast"]);
    } finally {
      remove();
    }
  };
  try {
    run("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-locale", "--no-sync"]);
    // A port the OS just handed out may be taken before the server binds it: try again with another.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const options = [
        "-c listen_addresses=127.0.0.1",
        `-c port=${port}`,
        `-c unix_socket_directories='${dir}'`,
        ...settings,
      ].join(" ");
      try {
        run(
          "pg_ctl",
          ["-D", data, "-l", path.join(dir, "log"), "-w", "-t", String(START_TIMEOUT_S)].concat([
            "-o",
            options,
            "start",
          ]),
        );
        process.once("exit", stop);
        const pid = Number(readFileSync(path.join(data, "postmaster.pid"), "utf8").split("\n")[0]);
        return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, stop, pid };
      } catch (err) {
        if (attempt >= 3) throw err;
      }
    }
  } catch (err) {
    remove();
    throw err;
  }
}

/** Fails, naming `source` (where the URL came from), unless the server at `url` answers. */
export async function pingPostgres(url: string, source: string): Promise<void> {
  try {
    await onServer(url, "SELECT 1");
  } catch (err) {
    throw new Error(`${source} does not answer: ${(err as Error).message}`, { cause: err });
  }
}

/** A new, empty database on the server at `url`, named at random, and how to drop it. */
export async function createDatabase(
  url: string,
  prefix: string,
): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  await onServer(url, `CREATE DATABASE ${name}`);
  const target = new URL(url);
  target.pathname = `/${name}`;
  return {
    url: target.toString(),
    drop: () => onServer(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

/**
 * CPU time (ms) of the postmaster `pid` and its processes so far: its own, its live children's,
 * and that of the children it has reaped. Linux only; undefined where /proc cannot tell.
 */
export function serverCpuMs(pid: number): number | undefined {
  const stat = (p: number | string) => {
    // Fields after the command's closing parenthesis; utime is field 14 of stat(5), so index 11 here.
    const text = readFileSync(`/proc/${p}/stat`, "utf8");
    return text.slice(text.lastIndexOf(")") + 2).split(" ");
  };
  try {
    const ticks = (f: string[], from: number, to: number) =>
      f.slice(from, to + 1).reduce((sum, v) => sum + Number(v), 0);
    const own = stat(pid);
    let total = ticks(own, 11, 14); // utime, stime, cutime, cstime
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry) || Number(entry) === pid) continue;
      try {
        const f = stat(entry);
        if (Number(f[1]) === pid) total += ticks(f, 11, 12);
      } catch {
        // Gone between the listing and the read: reaped, so counted in the postmaster's cutime.
      }
    }
    // USER_HZ is 100 on every Linux Node runs on.
    return total * 10;
  } catch {
    return undefined;
  }
}

/** A port that was free a moment ago: bound on 127.0.0.1:0, read, released. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const address = s.address();
      s.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

async function onServer(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 30_000 });
  try {
    await client.connect();
    await client.query(statement);
  } finally {
    await client.end().catch(() => {});
  }
}

const uidOf = (user: string) => Number(execFileSync("id", ["-u", user], { encoding: "utf8" }).trim());
const gidOf = (user: string) => Number(execFileSync("id", ["-g", user], { encoding: "utf8" }).trim());
