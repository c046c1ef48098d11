/**
 * `booking-sync status` for a terminal: a few labelled lines (the events stream's among them), then
 * aligned tables of streams and runs.
 */
import { printable, printableShort } from "../printable.js";
import type { EventsDelivery, EventsStatus } from "../store/events-status.js";
import { fillText } from "../store/fill-status.js";
import { failingText, type RunStatus, type Status } from "../store/status.js";
import { seconds } from "./output.js";
import { sourceLine, withheldLine } from "./source-text.js";

/** Longest error shown in the runs table, its controls escaped; `--json` has it whole and exact. */
const ERROR_CHARS = 70;

export function statusText(s: Status): string {
  const { database: db, bookings: b } = s;
  const head = [
    // First, while syncs fail: the cause, not only "never synced".
    ...(s.failing ? [["FAILING", failingText(s.failing)]] : []),
    [
      "database",
      db.backend === "postgres"
        ? `${db.path} · ${db.bytes} bytes (PostgreSQL)`
        : `${db.path} · ${db.bytes} bytes, -wal ${db.walBytes} bytes`,
    ],
    [
      "bookings",
      `${b.total} total · ${b.withDetails} with details · ${b.missing} missing · ${b.withProblems} with problems`,
    ],
    [
      "synced",
      s.lastSuccess
        ? `last success ${s.lastSuccess.finishedAt} (${age(s.lastSuccess.ageSeconds)} ago)`
        : "never synced",
    ],
    // A fill under way says how far it has got and when it should end, stream by stream.
    ...s.streams.flatMap((st) => (st.fill ? [["filling", `${st.stream}: ${fillText(st.fill)}`]] : [])),
    [
      "drift",
      s.drift
        ? `source ${s.drift.sourceTotal} · mirror ${s.drift.localTotal} · difference ${s.drift.difference}` +
          ` (run ${s.drift.runId}, ${s.drift.at})`
        : "not checked yet",
    ],
    ["rejects", String(s.rejects)],
    ["source", sourceLine(s.source)],
    ...(s.reconcileWithheld ? [["reconcile", withheldLine(s.reconcileWithheld)]] : []),
    ...eventsRows(s.events),
  ];
  const streams = s.streams.map((st) => [
    st.stream,
    st.checkpoint ?? st.note ?? "",
    st.checkpointAgeSeconds === null ? "" : age(st.checkpointAgeSeconds),
    st.fill ? `filling ${st.fill.percent}%` : st.inProgress ? "in progress" : "",
  ]);
  const runs = s.runs.map(runRow);
  return [
    ...table(head),
    "",
    "streams",
    ...(streams.length ? table([["stream", "checkpoint", "age", ""], ...streams], "  ") : ["  none"]),
    "",
    "last runs",
    ...(runs.length ? table([RUN_HEADER, ...runs], "  ") : ["  none: never synced"]),
    "",
  ].join("\n");
}

/** Labelled rows for `status`'s head; the webhook's only when one was ever configured. */
export function eventsRows(events: EventsStatus | null): string[][] {
  if (events === null) {
    return [
      ["events", "none: this mirror predates them (the next sync or `booking-sync migrate` adds them)"],
    ];
  }
  const d = events.delivery;
  if (d === null) return [["events", `${streamText(events)} · no webhook configured`]];
  return [
    // First when it happened: events the receiver will never get.
    ...(d.dropped > 0 ? [["DROPPED", droppedText(d)]] : []),
    ["events", streamText(events)],
    ["webhook", deliveryText(d)],
  ];
}

/** "last id 1234 · kept from id 1001 (2026-11-01T…)", or "none yet". */
export function streamText(e: EventsStatus): string {
  if (e.lastId === 0) return "none yet";
  return `last id ${e.lastId}${e.oldest ? ` · kept from id ${e.oldest.id} (${e.oldest.at})` : " · none kept"}`;
}

/** The cursor and the lag, then the last error and the next attempt when there are. */
export function deliveryText(d: EventsDelivery): string {
  const lag = d.lagEvents === 0 ? "up to date" : `lag ${d.lagEvents} events, ${age(d.lagSeconds)}`;
  const parts = [`delivered to id ${d.cursor}`, lag];
  if (d.lastError !== null) parts.push(`last error ${d.lastErrorAt ?? ""}: ${d.lastError}`);
  if (d.nextAttemptAt !== null) parts.push(`next attempt ${d.nextAttemptAt} (attempt ${d.attempts + 1})`);
  return parts.join(" · ");
}

/** "12 undelivered events dropped past EVENTS_MAX_UNDELIVERED, last at …". */
export function droppedText(d: EventsDelivery): string {
  return `${d.dropped} undelivered events dropped past EVENTS_MAX_UNDELIVERED, last at ${d.droppedAt ?? "?"}`;
}

const RUN_HEADER = ["run", "kind", "stream", "status", "started", "took", "new", "updated", "error"];

function runRow(r: RunStatus): string[] {
  return [
    String(r.id),
    r.kind,
    r.stream ?? "",
    r.status,
    r.startedAt,
    r.durationSeconds === null ? "" : seconds(r.durationSeconds * 1000),
    String(r.new),
    String(r.updated),
    printableShort(r.error ?? "", ERROR_CHARS),
  ];
}

/**
 * Rows with each column padded to its widest cell, two spaces apart, no trailing blanks. Cells may
 * quote the source (a run's error), so each is made `printable` first: its controls show, never act.
 */
function table(cells: string[][], indent = ""): string[] {
  const rows = cells.map((r) => r.map((cell) => printable(cell)));
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => r[i]?.length ?? 0))) ?? [];
  return rows.map((r) => (indent + r.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join("  ")).trimEnd());
}

/** "45s", "12m", "5h", "3d": one unit, rounded down, short enough for a column. */
export function age(totalSeconds: number): string {
  if (totalSeconds < 120) return `${totalSeconds}s`;
  if (totalSeconds < 120 * 60) return `${Math.floor(totalSeconds / 60)}m`;
  if (totalSeconds < 48 * 3600) return `${Math.floor(totalSeconds / 3600)}h`;
  return `${Math.floor(totalSeconds / 86_400)}d`;
}
