/**
 * The CLI run as another user, for root's test runs: root is not held back by file modes, so only
 * another uid (65534, `nobody`) shows what a user without access sees. That user must reach what it
 * runs; a checkout under a folder only its owner can enter (`mktemp -d`, /root) is closed to it, so
 * the build, its migrations and its dependencies are then staged in a folder it can enter (hard
 * links: no copy of node_modules). When even that fails, the reason says why the tests cannot run.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A user the CLI can run as, and the build it can reach. */
export interface OtherUser {
  uid: number;
  gid: number;
  /** `dist/cli.js` of the checkout, or of its staged copy. */
  cli: string;
  /** Removes the staged copy, if one was made. */
  cleanup: () => void;
}

const NOBODY = { uid: 65534, gid: 65534 };

/** Why `cli --version` does not run as `user`; undefined when it does. */
function cannotRun(cli: string, user: { uid: number; gid: number }): string | undefined {
  const r = spawnSync(process.execPath, [cli, "--version"], { ...user, encoding: "utf8", cwd: "/" });
  if (r.status === 0) return undefined;
  const why = r.error?.message ?? (r.stderr.split("\n").find((l) => /Error|denied/.test(l)) || r.stderr);
  return why.trim().slice(0, 300);
}

/**
 * `nobody` and a build it can run, when this process is root; else a sentence saying why the CLI
 * cannot run as another user here. `root` is the checkout (package.json, dist, drizzle, node_modules).
 */
export function otherUser(root: string): OtherUser | string {
  if (process.getuid?.() !== 0) return "only root can run a process as another uid";
  const probe = spawnSync(process.execPath, ["-e", ""], { ...NOBODY, cwd: "/" });
  if (probe.error || probe.status !== 0)
    return `cannot start a process as uid ${NOBODY.uid}: ${probe.error?.message ?? `exit ${probe.status}`}`;
  const cli = join(root, "dist", "cli.js");
  const closed = cannotRun(cli, NOBODY);
  if (closed === undefined) return { ...NOBODY, cli, cleanup: () => {} };

  // The checkout is closed to that user: stage what the CLI reads where it can.
  const staged = mkdtempSync(join(tmpdir(), "booking-sync-as-nobody-"));
  const cleanup = () => rmSync(staged, { recursive: true, force: true });
  chmodSync(staged, 0o755);
  copyFileSync(join(root, "package.json"), join(staged, "package.json"));
  for (const dir of ["dist", "drizzle", "node_modules"]) {
    const link = spawnSync("cp", ["-al", join(root, dir), join(staged, dir)], { encoding: "utf8" });
    if (link.status !== 0) {
      cleanup();
      return `uid ${NOBODY.uid} cannot run ${cli} (${closed}), and ${dir} could not be staged for it in ${tmpdir()}: ${link.stderr.trim()}`;
    }
  }
  const stagedCli = join(staged, "dist", "cli.js");
  const still = cannotRun(stagedCli, NOBODY);
  if (still === undefined) return { ...NOBODY, cli: stagedCli, cleanup };
  cleanup();
  return `uid ${NOBODY.uid} cannot run ${cli} (${closed}), nor a copy staged in ${tmpdir()} (${still})`;
}
