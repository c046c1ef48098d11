/** `booking-sync status`: what the mirror holds and how fresh it is, read-only; `--max-age` makes it a check. */
import type { Command } from "commander";
import { ConfigError } from "../errors.js";
import { escapeJsonControls, printable } from "../printable.js";
import type { Status } from "../store/status.js";
import { runAsReader, withExitCode } from "./command.js";
import { EXIT } from "./output.js";
import { statusText } from "./status-text.js";

/** Seconds in each unit a duration flag is written in (`--max-age`, `reconcile --since`). */
export const UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;

export function registerStatus(program: Command): void {
  program
    .command("status")
    .description(
      "show the mirror: size, bookings, checkpoints, last runs, rejects, drift and the events stream; reads only, " +
        "works while a sync runs; with --max-age, exits 1 when the last successful sync is older",
    )
    .option("--json", "print one JSON object instead of text")
    .option(
      "--max-age <duration>",
      "exit 1 when the last successful sync finished longer ago: 90s, 15m, 2h, 1d",
    )
    .action(withExitCode(statusAction));
}

/** `90s`, `15m`, `2h`, `1d` or plain whole seconds, as seconds (more than 0). */
export function parseMaxAge(text: string): number {
  const m = /^(\d+)([smhd]?)$/.exec(text.trim());
  const seconds = m ? Number(m[1]) * UNIT_SECONDS[(m[2] || "s") as keyof typeof UNIT_SECONDS] : 0;
  if (seconds > 0) return seconds;
  throw new ConfigError(
    `--max-age = ${JSON.stringify(text)} is not valid: expected a duration like 90s, 15m, 2h or 1d, or whole seconds`,
    { hint: "booking-sync status --max-age 15m" },
  );
}

/** Why the mirror is older than `maxAgeSeconds`, or undefined when it is fresh enough. */
export function staleness(status: Status, maxAgeSeconds: number): string | undefined {
  const last = status.lastSuccess;
  const failed = status.runs.find(
    (r) => r.kind === "sync" && r.status !== "success" && r.status !== "running" && r.id > (last?.runId ?? 0),
  );
  const since = failed
    ? `; the last sync ${failed.status} at ${failed.startedAt}: ${failed.error ?? "no error"}`
    : "";
  if (!last) return `never synced: no successful sync run in ${status.database.path}${since}`;
  const ageMs = Date.parse(status.at) - Date.parse(last.finishedAt);
  if (ageMs <= maxAgeSeconds * 1000) return undefined;
  return (
    `the last successful sync finished at ${last.finishedAt}, ${last.ageSeconds} s ago ` +
    `(more than --max-age ${maxAgeSeconds} s)${since}`
  );
}

function statusAction(flags: Record<string, unknown>): Promise<number> {
  let maxAge: number | undefined;
  const check = () => {
    if (flags.maxAge !== undefined) maxAge = parseMaxAge(String(flags.maxAge));
  };
  return runAsReader(
    flags,
    async ({ app }) => {
      const status = await app.store.readStatus(app.clock.now());
      const stale = maxAge === undefined ? undefined : staleness(status, maxAge);
      const check =
        maxAge === undefined
          ? null
          : { maxAgeSeconds: maxAge, stale: stale !== undefined, reason: stale ?? null };
      // Exact JSON, with DEL and C1 controls escaped too, so a terminal shows them.
      const json = () => `${escapeJsonControls(JSON.stringify({ ...status, check }, null, 2))}\n`;
      process.stdout.write(flags.json ? json() : statusText(status));
      if (stale === undefined) return EXIT.ok;
      process.stderr.write(`booking-sync: mirror is stale: ${printable(stale)}\n`);
      return EXIT.failed;
    },
    { check },
  );
}
