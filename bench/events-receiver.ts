/**
 * The local receiver of the events benchmark (bench/events-bench.ts): a node:http server on
 * 127.0.0.1:0 that verifies every message with `standardwebhooks`, as an app would, answers 204
 * and keeps only counters and times, so 100,000 events cost it no memory worth measuring.
 * A message that fails verification is answered 401 and counted: the figures are printed beside it.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

/** The part of an event the benchmark looks at. */
export interface ReceivedEvent {
  id: number;
  type: string;
  bookingId: string;
}

export interface EventsReceiver {
  /** `http://127.0.0.1:<port>/hooks/bookings`. */
  url: string;
  /** Messages verified and answered 204; and messages refused (not verified). */
  messages: number;
  rejected: number;
  /** Events taken, counting a resent one again; distinct ids are `highest` when none is missing. */
  events: number;
  /** Highest event id taken, and ids found missing (an id above highest + 1 arrived first). */
  highest: number;
  gaps: number;
  /** performance.now() when the first message and the latest one arrived. */
  firstAt: number | undefined;
  lastAt: number | undefined;
  /** Called with each verified message's events and its arrival time (performance.now()). */
  onEvents: ((events: ReceivedEvent[], at: number) => void) | undefined;
  close(): Promise<void>;
}

/** Starts the receiver; `secret` is the `whsec_…` the daemon signs with. */
export async function startEventsReceiver(secret: string): Promise<EventsReceiver> {
  const hook = new Webhook(secret);
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const at = performance.now();
      let events: ReceivedEvent[];
      try {
        const payload = hook.verify(
          Buffer.concat(chunks).toString("utf8"),
          req.headers as Record<string, string>,
        );
        events = (payload as { data: { events: ReceivedEvent[] } }).data.events;
      } catch {
        rx.rejected++;
        res.writeHead(401).end();
        return;
      }
      take(rx, events, at);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const rx: EventsReceiver = {
    url: `http://127.0.0.1:${port}/hooks/bookings`,
    messages: 0,
    rejected: 0,
    events: 0,
    highest: 0,
    gaps: 0,
    firstAt: undefined,
    lastAt: undefined,
    onEvents: undefined,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return rx;
}

function take(rx: EventsReceiver, events: ReceivedEvent[], at: number): void {
  rx.messages++;
  rx.firstAt ??= at;
  rx.lastAt = at;
  rx.events += events.length;
  for (const event of events) {
    if (event.id > rx.highest + 1) rx.gaps += event.id - rx.highest - 1;
    rx.highest = Math.max(rx.highest, event.id);
  }
  rx.onEvents?.(events, at);
}
