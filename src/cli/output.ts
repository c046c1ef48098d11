/**
 * What a command prints for people: one summary line, and errors that say what to do next. Both may
 * quote the source, so every line passes through `printable`: its controls show, never act.
 */
import { ApiError, ConfigError, findCause } from "../errors.js";
import { printable } from "../printable.js";
import type { BackfillReport } from "../sync/backfill/backfill.js";
import type { DetailsReport } from "../sync/list/details.js";
import type { ReconcileReport } from "../sync/list/reconcile.js";
import type { SyncReport } from "../sync/run-sync.js";
import { SIGNAL_EXIT_CODES, type StopSignal } from "./signals.js";

export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** One line: what changed, what it cost, where the checkpoint is. */
export function syncSummary(r: SyncReport): string {
  const read = r.tiesRead.length ? `, ${r.tiesRead.length} tie run(s) read through list-bookings` : "";
  const ties = `${read}${r.tieOverflows.length ? `, ${r.tieOverflows.length} tie overflow(s) logged` : ""}`;
  return printable(
    `${counts("sync", r.stream, r, ties)} · ${seconds(r.durationMs)}` +
      ` · checkpoint ${r.checkpointAfter ?? "none"}` +
      (r.details ? ` · ${detailsPart(r.details)}` : "") +
      (r.drift ? ` · source ${r.drift.sourceTotal} / mirror ${r.drift.localTotal}` : "") +
      (r.repair?.gaps ? ` · repaired ${r.repair.repaired} in ${plural(r.repair.gaps, "gap")}` : ""),
  );
}

/** The details pass's share of a sync line (its counts are included in the sync's). */
function detailsPart(d: DetailsReport): string {
  if (d.end === "idle") return "details: none needed";
  const more = d.end === "limit" ? ", page limit reached (the next run continues)" : "";
  const missed = d.missed > 0 ? `, ${d.missed} not on the list (deleted at the source?)` : "";
  return `details: ${d.found} of ${d.wanted} found, ${d.updated + d.inserted} stored in ${plural(d.pages, "page")}${missed}${more}`;
}

/** One line for a backfill: what changed, what it cost, what the re-reads did. */
export function backfillSummary(r: BackfillReport): string {
  const rate =
    r.durationMs > 0 ? Math.round(((r.inserted + r.updated + r.unchanged) * 1000) / r.durationMs) : 0;
  // A stopped run is followed by the line that says how to resume; a refusal the API will repeat
  // (a failure that is not retryable) by what to fix.
  let next = "";
  if (r.status === "success") next = ` · checkpoint ${r.checkpointAfter ?? "unchanged (filtered)"}`;
  else if (r.status === "failed" && (findCause(r.error, ApiError)?.retryable ?? true))
    next = " · run it again to resume";
  return printable(
    `${counts("backfill", `${r.stream}${r.resumed ? " (resumed)" : ""}`, r)}` +
      ` · ${seconds(r.durationMs)}, ${rate} bookings/s${next}`,
  );
}

/** One line for a reconcile: what changed and what went missing. */
export function reconcileSummary(r: ReconcileReport): string {
  let missing = r.status === "success" ? `, ${r.missing} newly missing` : ", nothing marked missing";
  if (r.withheld) missing = `, nothing marked missing (${r.withheld.count} withheld)`;
  return printable(
    `${counts("reconcile", r.since ? `since ${r.since}` : "all", r, missing)} · ${seconds(r.durationMs)}`,
  );
}

/** What every summary says first: `sync FAILED feed: 3 new, 1 updated, 0 unchanged{extra} · 2 pages, 3 requests`. */
function counts(
  word: string,
  where: string,
  r: SyncReport | BackfillReport | ReconcileReport,
  extra = "",
): string {
  const head = r.status === "success" ? word : `${word} ${r.status.toUpperCase()}`;
  const rejects = r.rejected ? `, ${r.rejected} rejected` : "";
  const retries = r.retries ? ` (${r.retries} ${r.retries === 1 ? "retry" : "retries"})` : "";
  return (
    `${head} ${where}: ${r.inserted} new, ${r.updated} updated, ${r.unchanged} unchanged${rejects}${extra}` +
    ` · ${plural(r.pages, "page")}, ${plural(r.requests, "request")}${retries}`
  );
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)}s`;
}

/** Prints an error for a person and returns the exit code it deserves. */
export function reportError(err: unknown): number {
  const write = (s: string) => process.stderr.write(s);
  const config = findCause(err, ConfigError);
  if (config) {
    write(`booking-sync: ${printable(config.message)}\n`);
    if (config.hint) write(`Try: ${printable(config.hint)}\n`);
    return EXIT.usage;
  }
  const message = err instanceof Error ? err.message : String(err);
  write(`booking-sync: ${printable(message)}\n`);
  const hint = findCause(err, ApiError)?.hint;
  if (hint) write(`Try: ${printable(hint)}\n`);
  return EXIT.failed;
}

/** How a run ended, as every run's report says it. */
export interface Outcome {
  status: "success" | "failed" | "aborted";
  error?: Error | undefined;
}

/** The exit code of a finished run, after the line that says why it did not succeed. */
export function exitFor(
  r: Outcome,
  stop: { by: StopSignal | undefined; reason: unknown; resume: string },
): number {
  if (r.status === "success") return EXIT.ok;
  if (stop.by) {
    process.stderr.write(`booking-sync: stopped; ${stop.resume}\n`);
    return SIGNAL_EXIT_CODES[stop.by];
  }
  // Aborted without a signal: the lease was lost; say that, not "request aborted".
  if (r.status === "aborted" && stop.reason instanceof Error) {
    process.stderr.write(`booking-sync: ${printable(stop.reason.message)}; ${stop.resume}\n`);
    return EXIT.failed;
  }
  return reportError(r.error ?? new Error(r.status));
}

/** "1 page", "3 pages". */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
