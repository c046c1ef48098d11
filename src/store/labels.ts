/** `state_labels`: what the source's state codes mean. The contract does not say, so analysts supply it. */
import type Database from "better-sqlite3";

/** The `bookings` columns whose codes can carry labels, as `state_labels.kind` names them. */
export const LABEL_KINDS = ["booking_state", "order_state", "customer_acceptance_state"] as const;
export type LabelKind = (typeof LABEL_KINDS)[number];

/** `value()` under each kind. */
const byKind = <T>(value: () => T) =>
  Object.fromEntries(LABEL_KINDS.map((kind) => [kind, value()])) as Record<LabelKind, T>;

/** Labels by kind, then by code: the shape of `labels import`'s file, and of what `labels export` prints. */
export type StateLabels = Record<LabelKind, Record<number, string>>;

/** Replaces every label with `labels` in one transaction; returns how many were stored per kind. */
export function importLabels(db: Database.Database, labels: Partial<StateLabels>): Record<LabelKind, number> {
  const insert = db.prepare("INSERT INTO state_labels (kind, code, label) VALUES (?, ?, ?)");
  const replace = db.transaction(() => {
    db.prepare("DELETE FROM state_labels").run();
    const counts = byKind(() => 0);
    for (const kind of LABEL_KINDS) {
      for (const [code, label] of Object.entries(labels[kind] ?? {})) {
        insert.run(kind, Number(code), label);
        counts[kind]++;
      }
    }
    return counts;
  });
  // IMMEDIATE: take the write lock first, so a busy database waits here rather than failing mid-way.
  return replace.immediate();
}

/** Every label, each kind present (empty when it has none), codes in ascending order. */
export function exportLabels(db: Database.Database): StateLabels {
  const out: StateLabels = byKind(() => ({}));
  const select = "SELECT kind, code, label FROM state_labels ORDER BY kind, code";
  const rows = db.prepare<[], { kind: string; code: number; label: string }>(select).all();
  for (const r of rows) {
    // A kind written by something other than `importLabels` has no place in the file; skip it.
    if (isLabelKind(r.kind)) out[r.kind][r.code] = r.label;
  }
  return out;
}

function isLabelKind(s: string): s is LabelKind {
  return (LABEL_KINDS as readonly string[]).includes(s);
}
