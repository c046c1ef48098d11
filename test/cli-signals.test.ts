/**
 * Stopping a command with Ctrl-C or SIGTERM: the CLI as a subprocess (on a pseudo-terminal for
 * Ctrl-C, as a person runs it), against the simulator and a real SQLite file. A stopped command
 * clears its progress bar, ends with one line that says how to go on and exits 130 (SIGINT) or
 * 143 (SIGTERM); the rerun resumes.
 */
import { spawn, spawnSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { CLI, type Harness, harness, runCli } from "./support/harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Drops terminal control sequences, keeping the text. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal control sequences start with ESC.
const plain = (s: string) => s.replace(/\x1b(?:\[[0-9;?]*[A-Za-z]|[78])/g, "");
const lines = (s: string) =>
  plain(s)
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "");

const hasScript = !spawnSync("script", ["--version"]).error;

/**
 * Runs the CLI on a pseudo-terminal (util-linux `script`), presses Ctrl-C once `ready` matches its
 * output, and resolves with everything the terminal showed and the CLI's exit code.
 */
function ctrlCOnTerminal(
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
): Promise<{ code: number | null; screen: string }> {
  const command = ["exec", JSON.stringify(process.execPath), JSON.stringify(CLI), ...args].join(" ");
  return new Promise((resolve, reject) => {
    // -e: exit with the child's code; -f: flush as it writes, so `ready` is seen at once.
    const script = spawn("script", ["-qfec", command, "/dev/null"], {
      env: { ...env, TERM: "xterm" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let screen = "";
    let pressed = false;
    script.stdout.on("data", (d) => {
      screen += d;
      if (!pressed && ready.test(plain(screen))) {
        pressed = true;
        // What the terminal does with Ctrl-C: SIGINT to the foreground process.
        script.stdin.write("\x03");
      }
    });
    script.on("error", reject);
    script.on("close", (code) => {
      script.stdin.destroy();
      resolve({ code, screen });
    });
  });
}

describe.skipIf(!hasScript)("Ctrl-C during backfill, on a terminal", () => {
  it("clears the bar, ends with how to resume, exits 130, and the rerun resumes", async () => {
    h = await harness({ bookings: 2000, pageSize: 10, latencyMs: 20 });
    const env = h.env({ BACKFILL_CONCURRENCY: "2" });
    const { code, screen } = await ctrlCOnTerminal(["backfill"], env, /backfill \[.*\] \d+\/\d+ pages/);
    expect(code).toBe(130);
    const shown = lines(screen);
    expect(shown.at(-1)).toBe("booking-sync: stopped; `booking-sync backfill` resumes where it left off");
    expect(shown.at(-2)).toMatch(/^backfill ABORTED feed: \d+ new, /);
    expect(plain(screen)).not.toMatch(/request aborted|ERROR/);
    // The bar was cleared (its line erased, the cursor shown again) and never drawn after that.
    const cleared = screen.lastIndexOf("\x1b[2K");
    expect(cleared).toBeGreaterThan(0);
    expect(screen.slice(cleared)).not.toMatch(/pages \|/);
    expect(screen.slice(screen.lastIndexOf("\x1b[?25l"))).toContain("\x1b[?25h");
    expect(h.store.lastRun("backfill")).toMatchObject({ status: "aborted" });
    const stored = h.mirrorIds().length;
    expect(stored).toBeGreaterThan(0);
    expect(stored).toBeLessThan(2000);

    h.sim.resetStats();
    const rerun = await runCli(["backfill", "--concurrency", "8"], env);
    expect(rerun.code).toBe(0);
    expect(rerun.stdout).toMatch(/^backfill feed \(resumed\): /);
    // Feed pages already read are skipped: the rerun reads what was left (9 new bookings a page: each
    // page serves again the booking the one before ended with), and at most two pages more for each
    // of the fill's slices (at most 2 per request in flight, so 4) where it takes one up.
    expect(h.sim.stats.byEndpoint.feed).toBeLessThanOrEqual(Math.ceil((2000 - stored) / 9) + 2 * 4);
    expect(h.mirrorIds()).toEqual(h.sourceIds());
  });
});

describe("a signal during a command that writes", () => {
  it.each([
    ["backfill", "SIGTERM", 143, "`booking-sync backfill` resumes where it left off"],
    ["backfill", "SIGINT", 130, "`booking-sync backfill` resumes where it left off"],
    ["sync", "SIGINT", 130, "the next `booking-sync sync` resumes where this one left off"],
    ["sync", "SIGTERM", 143, "the next `booking-sync sync` resumes where this one left off"],
    [
      "reconcile",
      "SIGTERM",
      143,
      "nothing was marked missing; the next `booking-sync reconcile` reads its window again",
    ],
  ] as const)(
    "%s stopped by %s exits %i with one line that says how to go on",
    async (command, signal, code, next) => {
      h = await harness({ bookings: 3000, pageSize: 10, latencyMs: 5 });
      const endpoint = command === "sync" ? "feed" : "list";
      let requests = 0;
      const r = await runCli([command], h.env(), (child) => {
        h?.sim.events.on("request", (e) => {
          if (e.endpoint === endpoint && ++requests === 20) child.kill(signal);
        });
      });
      expect(r.code).toBe(code);
      expect(r.stderr.trimEnd().split("\n").at(-1)).toBe(`booking-sync: stopped; ${next}`);
      expect(r.stdout).toMatch(new RegExp(`^${command} ABORTED `));
      expect(r.stdout + r.stderr).not.toContain("request aborted");
      // The run is recorded as stopped and why, not as the request the stop cut short.
      expect(h.store.lastRun(command)).toMatchObject({
        status: "aborted",
        error: `stopped: received ${signal}`,
      });
    },
  );
});
