/**
 * The failing-streak rule, once: /readyz applies it run by run as the daemon's syncs end, the status
 * page and `status` apply it to the stored `sync_runs`, so all three count the same runs.
 */

/** A run of failed `sync` runs since the last success (or since the first run). */
export interface FailingStatus {
  /** When the first of them started. */
  since: string;
  /** How many failed, the newest included. */
  runs: number;
  /** The newest one's error. */
  error: string | null;
  /** How many of the newest of them, in a row, failed with that same error. */
  sameError: number;
}

/** A finished `sync` run as the rule sees it. */
export interface SyncRunEnd {
  /** success, failed, aborted or interrupted (running counts as none of them). */
  status: string;
  /** When it started (ISO). */
  startedAt: string;
  /** Its error, or its note: a successful run may carry `warning: …` (sync_runs.error). */
  error: string | null;
}

/**
 * The streak after `run`, given the one before it. A success ends it, whatever note it carries; a
 * failure extends it; a run that was stopped (aborted, interrupted) or still runs leaves it as it was.
 */
export function nextFailing(before: FailingStatus | null, run: SyncRunEnd): FailingStatus | null {
  if (run.status === "success") return null;
  if (run.status !== "failed") return before;
  if (!before) return { since: run.startedAt, runs: 1, error: run.error, sameError: 1 };
  const same = failureOf(before.error) === failureOf(run.error);
  return { ...before, runs: before.runs + 1, error: run.error, sameError: same ? before.sameError + 1 : 1 };
}

/** The streak over `runs`, oldest first. */
export function failingOf(runs: Iterable<SyncRunEnd>): FailingStatus | null {
  let streak: FailingStatus | null = null;
  for (const run of runs) streak = nextFailing(streak, run);
  return streak;
}

/**
 * What two failures are compared on: the error without the notes a run appends to it (run-sync's
 * `runNote`: "; feed tie overflow at …", "; warning: …"), so a warning that comes and goes does not
 * split a streak of one failure; /readyz, which sees the error itself, compares the same part.
 */
function failureOf(error: string | null): string {
  const text = error ?? "";
  const notes = /; (?:feed tie overflow at |warning: )/.exec(text);
  return notes ? text.slice(0, notes.index) : text;
}

/**
 * "failing since <time>: N runs in a row: <error>", with `time` formatting the start; one sentence
 * for /readyz, the status page and `status`.
 */
export function failingText(f: FailingStatus, time: (iso: string) => string = (iso) => iso): string {
  const error = f.error ?? "no error recorded";
  if (f.runs === 1) return `the last sync failed at ${time(f.since)}: ${error}`;
  const same = f.sameError === f.runs ? "" : ` (the last ${f.sameError} with this error)`;
  return `failing since ${time(f.since)}: ${f.runs} runs in a row${same}: ${error}`;
}
