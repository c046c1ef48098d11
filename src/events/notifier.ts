/**
 * An in-process wake-up for what waits on new events (a long poll, the delivery loop): fired when a
 * page's events commit. It carries no data, so a missed or extra wake costs one read, never an event;
 * writers in other processes are seen by the waiters' own polling.
 */

/** What a waiter listens to. */
export interface EventWake {
  /** Calls `listener` on every wake until the returned function is called. */
  subscribe(listener: () => void): () => void;
}

/** The side the store's commit hook holds. */
export interface EventNotifier extends EventWake {
  /** Wakes every listener now; call after the events committed, never before. */
  notify(): void;
}

export function createEventNotifier(): EventNotifier {
  const listeners = new Set<() => void>();
  return {
    subscribe(listener) {
      // A wrapper per subscription, so the same function subscribed twice is two listeners.
      const entry = () => listener();
      listeners.add(entry);
      return () => listeners.delete(entry);
    },
    notify() {
      // Called from a commit: a listener's failure is its own, never the commit's.
      for (const listener of [...listeners])
        try {
          listener();
        } catch {}
    },
  };
}
