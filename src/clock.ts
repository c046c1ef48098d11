/** The real clock; tests hand the core a clock they move instead (test/support/fakes.ts). */
import type { TimerClock } from "./sync/ports.js";

/**
 * The system's time and Node's timers, unref'd: a pending commit or retry never keeps an idle
 * process alive (closing the store commits what is left).
 */
export const systemClock: TimerClock = {
  now: () => new Date(),
  setTimeout(fn, ms) {
    const timer = setTimeout(fn, ms).unref();
    return () => clearTimeout(timer);
  },
};
