/**
 * Missing marks a reconcile withheld, as /readyz shows them until a person decides: read from the
 * mirror at start-up and after each of the daemon's reconcile runs. While it runs no other process
 * can change them: `reconcile --apply-missing` needs the writer lease the daemon holds, so a decision
 * made by hand is made with the daemon stopped and shows when it starts again. (The status page
 * reads the mirror on every request.) Readiness still follows the sync: a question, not an outage.
 */
import { WITHHELD_STREAM, type WithheldMarks, withheldText } from "../sync/list/missing-share.js";
import type { Logger, SyncStore } from "../sync/ports.js";
import type { HealthStatus } from "./health.js";
import type { RunOutcome } from "./runner.js";
import type { RunReason } from "./scheduler.js";

export function withheldView(store: Pick<SyncStore, "readProgress">, logger: Logger) {
  let current: WithheldMarks | null = null;
  /** Reads the stored marks again; a failed read keeps what was known, and is logged. */
  const refresh = async (): Promise<void> => {
    try {
      current = (await store.readProgress<WithheldMarks>(WITHHELD_STREAM)).progress;
    } catch (err) {
      logger.warn({ err }, "could not read the withheld missing marks");
    }
  };
  return {
    refresh,
    /** `runOnce`, reading the marks again after each reconcile run. */
    after: (runOnce: (reason: RunReason) => Promise<RunOutcome>) => async (reason: RunReason) => {
      const outcome = await runOnce(reason);
      if (outcome.kind === "reconcile") await refresh();
      return outcome;
    },
    /** A readiness answer with `reconcileWithheld`, and a sentence in `reason` while any are withheld. */
    annotate(status: HealthStatus): HealthStatus & { reconcileWithheld: WithheldMarks | null } {
      if (current === null) return { ...status, reconcileWithheld: null };
      const decide = "a person decides: `booking-sync reconcile --apply-missing`";
      const reason = `${status.reason}; ${withheldText(current)}, ${decide}`;
      return { ...status, reason, reconcileWithheld: current };
    },
  };
}
