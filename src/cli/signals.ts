/**
 * The first SIGINT/SIGTERM asks the work to stop (in-flight requests abort, what was read is
 * committed); a second one exits at once. Nothing is lost either way: progress commits with data.
 */
export function abortOnSignals(onFirst?: (signal: NodeJS.Signals) => void): {
  signal: AbortSignal;
  /** Aborts as a first signal would, e.g. when the writer lease is lost. */
  abort(): void;
  dispose(): void;
} {
  const controller = new AbortController();
  const handler = (signal: NodeJS.Signals) => {
    if (controller.signal.aborted) process.exit(signal === "SIGINT" ? 130 : 143);
    onFirst?.(signal);
    controller.abort(new Error(`received ${signal}`));
  };
  process.on("SIGINT", handler);
  process.on("SIGTERM", handler);
  return {
    signal: controller.signal,
    abort: () => controller.abort(new Error("stopped")),
    dispose() {
      process.off("SIGINT", handler);
      process.off("SIGTERM", handler);
    },
  };
}
