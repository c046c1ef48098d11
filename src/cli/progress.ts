/** Progress of a long command: a bar on a terminal, else a log line every few seconds (containers). */
import { createRequire } from "node:module";
import type * as CliProgress from "cli-progress";
import { terminalLog } from "../logger.js";
import type { Logger } from "../sync/ports.js";

/** cli-progress, loaded when a bar is first drawn: a container's log view and the daemon never hold it. */
const loadCliProgress = () => createRequire(import.meta.url)("cli-progress") as typeof CliProgress;

export interface ProgressEvent {
  pages: number;
  /** Pages planned; unknown (no bar, just counts) when undefined or null. */
  totalPages?: number | null | undefined;
  bookings: number;
  /** Bookings per second. */
  ratePerSec: number;
  /** Seconds left, when known. */
  etaSec?: number | null | undefined;
  /** A few words of context, e.g. how far back a walk has reached. */
  note?: string | undefined;
}

export interface ProgressView {
  /** Shows the latest counts; ignored once stopped. */
  update(event: ProgressEvent): void;
  /** Clears the bar from the terminal (or logs the last line); safe to call twice. */
  stop(): void;
}

/** Least time between two log lines when not drawing a bar (a container's log), ms. */
const LOG_INTERVAL_MS = 5000;

/** A bar on a terminal, else throttled log lines, of `label` (e.g. "backfill"); it stops once `signal` aborts. */
export function progressView(label: string, logger: Logger, signal: AbortSignal): ProgressView {
  const view = process.stderr.isTTY ? barView(label) : logView(label, logger);
  // At once, so the lines logged while the run stops are not drawn over.
  signal.addEventListener("abort", () => view.stop(), { once: true });
  return view;
}

/**
 * A bar on the terminal's last line, cleared when it stops. It steps aside for every log line, since
 * a line written under a live bar is overwritten when the bar restores its cursor.
 */
function barView(label: string): ProgressView {
  const cliProgress = loadCliProgress();
  const common = { stream: process.stderr, hideCursor: true, clearOnComplete: true };
  const withTotal = new cliProgress.SingleBar(
    {
      ...common,
      format: `${label} [{bar}] {value}/{total} pages | {bookings} bookings | {rate}/s | ETA {eta_text}`,
      etaBuffer: 50,
    },
    cliProgress.Presets.shades_classic,
  );
  const counting = new cliProgress.SingleBar(
    { ...common, format: `${label} {value} pages | {bookings} bookings | {rate}/s {note}` },
    cliProgress.Presets.shades_classic,
  );
  let bar: CliProgress.SingleBar | undefined;
  let shown: { total: number; value: number; payload: object } | undefined;
  let stopped = false;
  const around = (write: () => void) => {
    if (!bar || !shown) return write();
    bar.stop();
    write();
    bar.start(shown.total, shown.value, shown.payload);
  };
  return {
    update(e) {
      if (stopped) return;
      const payload = {
        bookings: e.bookings,
        rate: Math.round(e.ratePerSec),
        eta_text: e.etaSec === null || e.etaSec === undefined ? "?" : formatSeconds(e.etaSec),
        note: e.note ?? "",
      };
      const total = e.totalPages ?? null;
      if (!bar) {
        bar = total === null ? counting : withTotal;
        shown = { total: total ?? 0, value: e.pages, payload };
        bar.start(shown.total, e.pages, payload);
        terminalLog.around = around;
        return;
      }
      if (total !== null) bar.setTotal(total);
      bar.update(e.pages, payload);
      shown = { total: total ?? shown?.total ?? 0, value: e.pages, payload };
    },
    stop() {
      stopped = true;
      if (terminalLog.around === around) terminalLog.around = undefined;
      bar?.stop();
      bar = undefined;
    },
  };
}

function logView(label: string, logger: Logger): ProgressView {
  let lastAt = Date.now();
  let pending: ProgressEvent | undefined;
  let stopped = false;
  const log = (e: ProgressEvent) => {
    const fields = { ...e, ratePerSec: Math.round(e.ratePerSec * 10) / 10 };
    if (e.etaSec !== null && e.etaSec !== undefined) fields.etaSec = Math.round(e.etaSec);
    logger.info(fields, `${label} progress`);
    pending = undefined;
  };
  return {
    update(e) {
      if (stopped) return;
      pending = e;
      if (Date.now() - lastAt < LOG_INTERVAL_MS) return;
      lastAt = Date.now();
      log(e);
    },
    stop() {
      if (pending && !stopped) log(pending);
      stopped = true;
    },
  };
}

/** 75 → "1m15s", 3700 → "1h01m". */
export function formatSeconds(sec: number): string {
  const s = Math.max(0, Math.round(sec));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}
