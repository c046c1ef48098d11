/** The first SIGINT/SIGTERM stops the work (what was read is committed); a second exits at once. */
/** Exit code of a command stopped by a signal: 128 + the signal's number, as shells report it. */
export const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;

export type StopSignal = keyof typeof SIGNAL_EXIT_CODES;

export function abortOnSignals(): {
  signal: AbortSignal;
  /** The signal that stopped the work, if one did. */
  received(): StopSignal | undefined;
  /** Aborts as a first signal would, e.g. when the writer lease is lost; `why` becomes the reason. */
  abort(why?: string): void;
  dispose(): void;
} {
  const controller = new AbortController();
  let received: StopSignal | undefined;
  const handler = (signal: StopSignal) => {
    if (controller.signal.aborted) process.exit(SIGNAL_EXIT_CODES[signal]);
    received = signal;
    controller.abort(new Error(`received ${signal}`));
  };
  process.on("SIGINT", handler);
  process.on("SIGTERM", handler);
  return {
    signal: controller.signal,
    received: () => received,
    abort: (why = "stopped") => controller.abort(new Error(why)),
    dispose() {
      process.off("SIGINT", handler);
      process.off("SIGTERM", handler);
    },
  };
}
