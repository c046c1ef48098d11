/**
 * What an installed CLI (no checkout, no npm scripts) tells a newcomer, run as a subprocess: the route
 * it suggests works, and the packed tarball holds what the README links.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CLI, runCli } from "./support/harness.js";

const ROOT = join(import.meta.dirname, "..");
let dir: string | undefined;
let simulator: ChildProcess | undefined;
afterEach(async () => {
  if (simulator && simulator.exitCode === null) {
    const exited = once(simulator, "exit");
    simulator.kill("SIGTERM");
    await exited;
  }
  simulator = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** The environment without any booking-sync setting, as a newcomer's shell has it. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of Object.keys(env)) if (/^(BOOKING_|SYNC_)/.test(key)) delete env[key];
  return env;
}

describe("an installed CLI's advice", () => {
  it("--help and a missing base URL point at `booking-sync simulate`, never at an npm script", async () => {
    const help = await runCli(["--help"], cleanEnv());
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Try: booking-sync simulate");
    expect(help.stdout).not.toContain("npm run");

    const unset = await runCli(["sync"], cleanEnv());
    expect(unset.code).toBe(2);
    expect(unset.stderr).toMatch(/^Try: .*`booking-sync simulate` prints the command that syncs it$/m);
    expect(unset.stderr).not.toContain("npm run");
  });

  it("`booking-sync simulate` prints a command that syncs it, as printed", async () => {
    dir = mkdtempSync(join(tmpdir(), "booking-sync-installed-"));
    const child = spawn(process.execPath, [CLI, "simulate", "--bookings", "40"], {
      env: cleanEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    simulator = child;
    let out = "";
    const tryLine = await new Promise<string>((resolve, reject) => {
      child.stdout.on("data", (d) => {
        out += d;
        const line = /^\s*try: (.*)$/m.exec(out)?.[1];
        if (line) resolve(line);
      });
      child.on("exit", (code) => reject(new Error(`simulate exited ${code}: ${out}`)));
    });
    // "A=1 B=2 booking-sync sync": the assignments as the shell would make them, then the command.
    const words = tryLine.trim().split(/\s+/);
    const assignments = Object.fromEntries(
      words
        .filter((w) => /^[A-Z_]+=/.test(w))
        .map((w) => [w.slice(0, w.indexOf("=")), w.slice(w.indexOf("=") + 1)]),
    );
    expect(words.slice(-2)).toEqual(["booking-sync", "sync"]);
    const r = await runCli(["sync", "--db", join(dir, "demo.db")], { ...cleanEnv(), ...assignments });
    expect(r.stderr).not.toMatch(/"level":50/);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^sync feed: 40 new, /);
  });
});

describe("the packed tarball", () => {
  it("holds the LICENSE, SECURITY.md and every file under docs/ that the README links", () => {
    const pack = spawnSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
      cwd: ROOT,
      encoding: "utf8",
    });
    expect(pack.status, pack.stderr).toBe(0);
    const files = (JSON.parse(pack.stdout) as Array<{ files: Array<{ path: string }> }>)[0]?.files.map(
      (f) => f.path,
    );
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const linked = [...readme.matchAll(/\]\(((?:docs\/|SECURITY\.md)[^)#\s]*)/g)].map((m) => m[1]);
    expect(linked.length).toBeGreaterThan(0);
    expect(files).toEqual(expect.arrayContaining(["LICENSE", "SECURITY.md", ...linked]));
    expect(readFileSync(join(ROOT, "LICENSE"), "utf8")).toContain(
      "Copyright (c) 2026 booking-sync contributors",
    );
  });
});
