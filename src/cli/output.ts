/** What a command prints for people: one summary line, and errors that say what to do next. */
import { ConfigError, findCause } from "../errors.js";
import type { SyncReport } from "../sync/run-sync.js";

export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** One line: what changed, what it cost, where the checkpoint is. */
export function syncSummary(r: SyncReport): string {
  const retries = r.retries ? ` (${r.retries} ${r.retries === 1 ? "retry" : "retries"})` : "";
  const rejects = r.rejected ? `, ${r.rejected} rejected` : "";
  const ties = r.tieOverflows.length ? `, ${r.tieOverflows.length} tie overflow(s) logged` : "";
  const head = r.status === "success" ? "sync" : `sync ${r.status.toUpperCase()}`;
  return (
    `${head} ${r.stream}: ${r.inserted} new, ${r.updated} updated, ${r.unchanged} unchanged${rejects}${ties}` +
    ` · ${plural(r.pages, "page")}, ${plural(r.requests, "request")}${retries} · ${seconds(r.durationMs)}` +
    ` · checkpoint ${r.checkpointAfter ?? "none"}`
  );
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)}s`;
}

/** Prints an error for a person and returns the exit code it deserves. */
export function reportError(
  err: unknown,
  write: (s: string) => void = (s) => process.stderr.write(s),
): number {
  const config = findCause(err, ConfigError);
  if (config) {
    write(`booking-sync: ${config.message}\n`);
    if (config.hint) write(`Try: ${config.hint}\n`);
    return EXIT.usage;
  }
  const message = err instanceof Error ? err.message : String(err);
  write(`booking-sync: ${message}\n`);
  return EXIT.failed;
}

/** "1 page", "3 pages". */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
