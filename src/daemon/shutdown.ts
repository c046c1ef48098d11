/**
 * Signal handling: the first SIGTERM/SIGINT shuts down gracefully (exit 0, or 1 past the deadline),
 * a second exits at once. Nothing is lost either way: rows and resume state commit together.
 */
import type { Logger } from "../sync/ports.js";
import { errorText } from "./error-text.js";

export type ShutdownSignal = "SIGTERM" | "SIGINT";

/** The part of `process` this module uses; injectable so tests send signals to a fake. */
export interface SignalProcess {
  on(event: ShutdownSignal, listener: () => void): unknown;
  off(event: ShutdownSignal, listener: () => void): unknown;
  exit(code: number): void;
}

export interface ShutdownOptions {
  /** Everything a graceful stop needs; called once, on the first signal. */
  onShutdown: (signal: ShutdownSignal) => Promise<void>;
  logger: Logger;
  /** How long the graceful stop may take before the process exits 1, milliseconds; default 10000. */
  timeoutMs?: number;
  /** Default the real `process`. */
  proc?: SignalProcess;
}

/** Exit code of a second signal: 128 + the signal's number, as shells report it. */
const HARD_EXIT_CODES: Record<ShutdownSignal, number> = { SIGINT: 130, SIGTERM: 143 };

/** Installs the SIGTERM/SIGINT handlers. */
export function installShutdown(options: ShutdownOptions) {
  const { onShutdown, logger } = options;
  const proc = options.proc ?? process;
  const timeoutMs = options.timeoutMs ?? 10_000;
  let started = false;
  let exited = false;

  const exit = (code: number): void => {
    if (exited) return;
    exited = true;
    proc.exit(code);
  };

  const graceful = async (signal: ShutdownSignal): Promise<void> => {
    logger.info({ signal, timeoutMs }, "shutting down; a second signal exits at once");
    // Left referenced on purpose: it makes a hung stop exit 1 instead of drifting out with code 0.
    const deadline = setTimeout(() => {
      logger.error({ signal, timeoutMs }, "shutdown did not finish before the deadline; exiting");
      exit(1);
    }, timeoutMs);
    let code = 0;
    try {
      await onShutdown(signal);
      logger.info({}, "shutdown complete");
    } catch (err) {
      logger.error({ error: errorText(err) }, "shutdown failed");
      code = 1;
    }
    clearTimeout(deadline);
    exit(code);
  };

  const handlers = new Map<ShutdownSignal, () => void>();
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    const handler = () => {
      if (!started) {
        started = true;
        void graceful(signal);
        return;
      }
      logger.warn({ signal }, "second signal; exiting at once");
      exit(HARD_EXIT_CODES[signal]);
    };
    handlers.set(signal, handler);
    proc.on(signal, handler);
  }

  return {
    /** Whether a signal has started the shutdown. */
    shuttingDown: () => started,
    /** Removes the signal listeners (tests; or a caller that exits by itself). */
    dispose(): void {
      for (const [signal, handler] of handlers) proc.off(signal, handler);
      handlers.clear();
    },
  };
}
