/**
 * The container image's steps, proven without a Docker engine: the Dockerfile is read, its
 * production install (`deps` stage) is performed in a clean temporary directory, the runtime
 * stage's files are copied beside it, and its ENTRYPOINT + CMD start the daemon there with the
 * runtime's environment, against the simulator. Its HEALTHCHECK command probes the result.
 */
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../src/simulator/index.js";
import { type DaemonProcess, freePort, http, pollUntil, spawnDaemon } from "./support/daemon-process.js";
import { analyst } from "./support/harness.js";

const ROOT = join(import.meta.dirname, "..");

interface Stage {
  from: string;
  name: string;
  /** Instructions with continuation lines joined, comments dropped, e.g. "RUN npm ci". */
  steps: string[];
}

/** Splits a Dockerfile into stages of instructions (enough of the syntax for this Dockerfile). */
function parseDockerfile(text: string): { args: string[]; stages: Stage[] } {
  const joined = text.replace(/\\\n/g, " ");
  const steps = joined
    .split("\n")
    .map((line) => line.trim().replace(/\s+/g, " "))
    .filter((line) => line !== "" && !line.startsWith("#"));
  const args: string[] = [];
  const stages: Stage[] = [];
  for (const step of steps) {
    const from = /^FROM (\S+)(?: AS (\S+))?$/i.exec(step);
    if (from) stages.push({ from: from[1] ?? "", name: from[2] ?? "", steps: [] });
    else if (stages.length === 0) args.push(step);
    else stages.at(-1)?.steps.push(step);
  }
  return { args, stages };
}

function stage(stages: Stage[], name: string): Stage {
  const found = stages.find((s) => s.name === name);
  if (!found) throw new Error(`the Dockerfile has no stage named ${name}`);
  return found;
}

/**
 * The JSON array of an exec-form instruction, e.g. `ENTRYPOINT ["node", "dist/cli.js"]`, or of the
 * CMD of `HEALTHCHECK [options] CMD [...]`.
 */
function execForm(steps: string[], instruction: string): string[] {
  const step = steps.find((s) => s.split(" ")[0] === instruction && s.includes("["));
  if (!step) throw new Error(`no exec-form ${instruction} in the runtime stage`);
  return JSON.parse(step.slice(step.indexOf("["))) as string[];
}

/** `ENV A=1 B=2` instructions as one record. */
function envOf(steps: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const step of steps.filter((s) => s.startsWith("ENV "))) {
    for (const pair of step.slice(4).split(" ")) {
      const [key = "", ...value] = pair.split("=");
      env[key] = value.join("=");
    }
  }
  return env;
}

/** This process's environment without what npm and vitest add, as a fresh shell would have it. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !/^(npm_|VITEST|NODE_OPTIONS$|NODE_ENV$|BOOKING_|SYNC_|HTTP_PORT$|HTTP_HOST$)/i.test(k),
    ),
  );
}

/** Runs a command to its end; resolves with its exit code and output. */
function run(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }) {
  return new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

/** The head (npm's verdict) and tail (a compiler's error) of a long output. */
const excerpt = (text: string): string =>
  text.length <= 4000 ? text : `${text.slice(0, 2000)}\n…\n${text.slice(-2000)}`;

/** Exec-form `node ...` as this machine runs it. */
const nodeCommand = (argv: string[]): [string, string[]] =>
  argv[0] === "node" ? [process.execPath, argv.slice(1)] : [argv[0] ?? "", argv.slice(1)];

let dir: string | undefined;
let sim: Simulator | undefined;
let daemon: DaemonProcess | undefined;
afterEach(async () => {
  if (daemon && daemon.child.exitCode === null && daemon.child.signalCode === null)
    daemon.child.kill("SIGKILL");
  await daemon?.exited;
  await sim?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  daemon = sim = dir = undefined;
});

describe("the container image's install-and-start sequence", () => {
  const { args, stages } = parseDockerfile(readFileSync(join(ROOT, "Dockerfile"), "utf8"));
  const runtime = stages.at(-1) as Stage;
  const deps = stage(stages, "deps");

  it("is what the Dockerfile says: an LTS slim base, production dependencies only, non-root, /data", () => {
    expect(args).toContain("ARG NODE_VERSION=24");
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the Dockerfile's ARG reference, not a template
    expect(runtime.from).toBe("node:${NODE_VERSION}-slim");
    expect(stage(stages, "build").steps).toContain("RUN npm run build");
    // The production install sees the lockfile and package.json only, as the test's clean directory does.
    expect(deps.steps.filter((s) => s.startsWith("COPY"))).toEqual([
      "COPY package.json package-lock.json ./",
    ]);
    expect(deps.steps.some((s) => s.startsWith("RUN npm ci --omit=dev"))).toBe(true);
    expect(runtime.steps).toEqual(
      expect.arrayContaining([
        "COPY package.json package-lock.json ./",
        "COPY --from=deps /app/node_modules ./node_modules",
        "COPY --from=build /app/dist ./dist",
        "COPY drizzle ./drizzle",
        "USER node",
        "VOLUME /data",
        "EXPOSE 8080",
      ]),
    );
    expect(runtime.steps.filter((s) => s.startsWith("RUN npm"))).toEqual([]);
    expect(envOf(runtime.steps)).toMatchObject({ BOOKING_DB_PATH: "/data/bookings.db", HTTP_PORT: "8080" });
    const entrypoint = execForm(runtime.steps, "ENTRYPOINT");
    expect(entrypoint).toEqual([
      "node",
      "--max-semi-space-size=4",
      "--heap-growing-percent=30",
      "dist/cli.js",
    ]);
    // The image starts Node as the package's launcher does (src/cli.ts's first line).
    const launcher = readFileSync(join(ROOT, "src/cli.ts"), "utf8").split("\n", 1)[0];
    const malloc = "MALLOC_MMAP_THRESHOLD_=131072";
    expect(envOf(runtime.steps)).toMatchObject({ MALLOC_MMAP_THRESHOLD_: "131072" });
    expect(launcher).toBe(`#!/usr/bin/env -S ${malloc} ${entrypoint.slice(0, -1).join(" ")}`);
    expect(execForm(runtime.steps, "CMD")).toEqual(["run"]);
  });

  it("installs production dependencies from the lockfile in a clean directory, starts `run`, answers its probes, stops on SIGTERM", async () => {
    expect(existsSync(join(ROOT, "dist/cli.js")), "run `npm run build` first").toBe(true);
    dir = mkdtempSync(join(tmpdir(), "booking-sync-image-"));
    const app = join(dir, "app");
    mkdirSync(app);
    for (const file of ["package.json", "package-lock.json"]) cpSync(join(ROOT, file), join(app, file));
    const npmCi = deps.steps.find((s) => s.startsWith("RUN npm ci")) as string;
    const prebuilds = localPrebuild(join(dir, "prebuilds"));
    const install = await run("npm", npmCi.split(" ").slice(2), {
      cwd: app,
      env: { ...cleanEnv(), ...prebuilds },
    });
    expect(install.code, excerpt(install.output)).toBe(0);
    expectProductionOnly(app);

    for (const folder of ["dist", "drizzle"])
      cpSync(join(ROOT, folder), join(app, folder), { recursive: true });
    sim = await startSimulator({ bookings: 150, seed: 5, token: "image-token" });
    const data = join(dir, "data");
    mkdirSync(data);
    // A mounted secret, as in the README's compose and Kubernetes examples.
    writeFileSync(join(dir, "token"), "image-token\n");
    const port = await freePort();
    const env: NodeJS.ProcessEnv = {
      ...cleanEnv(),
      ...envOf(runtime.steps),
      BOOKING_DB_PATH: join(data, "bookings.db"),
      HTTP_PORT: String(port),
      // The image binds 0.0.0.0 for other containers; a test on a shared machine stays on loopback.
      HTTP_HOST: "127.0.0.1",
      BOOKING_API_BASE_URL: sim.url,
      BOOKING_API_TOKEN_FILE: join(dir, "token"),
    };
    const entry = [...execForm(runtime.steps, "ENTRYPOINT"), ...execForm(runtime.steps, "CMD")];
    const [node, argv] = nodeCommand(entry);
    expect(node).toBe(process.execPath);
    daemon = spawnDaemon(env, { args: argv, cwd: app });

    const url = `http://127.0.0.1:${port}`;
    expect((await pollUntil(`${url}/healthz`, (a) => a.status !== 0, { timeoutMs: 60_000 })).status).toBe(
      200,
    );
    await pollUntil(`${url}/readyz`, (a) => a.status === 200, { timeoutMs: 60_000 });
    expect((await http(`${url}/metrics`)).text).toContain("booking_sync_runs_total");
    const healthcheck = nodeCommand(execForm(runtime.steps, "HEALTHCHECK"));
    expect((await run(healthcheck[0], healthcheck[1], { cwd: app, env })).code).toBe(0);

    daemon.child.kill("SIGTERM");
    expect((await daemon.exited).code).toBe(0);
    expect(daemon.lines.some((l) => l.msg === "shutdown complete")).toBe(true);
    // With the daemon gone the same check fails, so its 0 above meant something.
    expect((await run(healthcheck[0], healthcheck[1], { cwd: app, env })).code).toBe(1);
    const db = analyst(join(data, "bookings.db"));
    const count = db.prepare("SELECT count(*) FROM bookings").pluck().get();
    db.close();
    expect(count).toBe(150);
    expect(daemon.stderr()).not.toContain("image-token");
  }, 600_000);
});

/**
 * better-sqlite3's install script (prebuild-install) takes a prebuilt binary when it finds one and
 * compiles SQLite from source only when not, which takes minutes on 2 cores. A Docker build with a
 * network downloads the prebuilt; this machine may have none, so the binary this checkout's own
 * `npm ci` built from source (the same version, by the same lockfile, for this Node) is offered as
 * the local prebuild, through prebuild-install's documented `local-prebuilds` setting. Without it
 * (another version, or no build) nothing is offered and the install compiles as before.
 */
function localPrebuild(folder: string): Record<string, string> {
  const pkg = join(ROOT, "node_modules/better-sqlite3");
  const binary = join(pkg, "build/Release/better_sqlite3.node");
  const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
    packages: Record<string, { version?: string }>;
  };
  const { version } = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")) as { version: string };
  if (!existsSync(binary) || lock.packages["node_modules/better-sqlite3"]?.version !== version) return {};
  mkdirSync(folder);
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  const tar = spawnSync("tar", ["-czf", join(folder, name), "-C", pkg, "build/Release/better_sqlite3.node"]);
  return tar.status === 0 ? { npm_config_better_sqlite3_local_prebuilds: folder } : {};
}

/**
 * Every dependency installed, better-sqlite3 built; nothing the lockfile marks dev-only (packages
 * it marks `devOptional`, such as the type declarations drizzle-orm names as optional peers, stay).
 */
function expectProductionOnly(app: string): void {
  const read = (file: string) => JSON.parse(readFileSync(join(app, file), "utf8"));
  const pkg = read("package.json") as { dependencies: Record<string, string> };
  const lock = read("package-lock.json") as { packages: Record<string, { dev?: boolean }> };
  for (const name of Object.keys(pkg.dependencies))
    expect(existsSync(join(app, "node_modules", name)), name).toBe(true);
  const devOnly = Object.entries(lock.packages).filter(([key, entry]) => key !== "" && entry.dev === true);
  expect(devOnly.map(([key]) => key)).toContain("node_modules/vitest");
  for (const [key] of devOnly) expect(existsSync(join(app, key)), `${key} is dev-only`).toBe(false);
  expect(existsSync(join(app, "node_modules/better-sqlite3/build/Release/better_sqlite3.node"))).toBe(true);
}
