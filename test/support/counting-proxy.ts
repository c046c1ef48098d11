/**
 * An HTTP proxy on 127.0.0.1:0 in front of the simulator that sees each request as it arrives, not
 * only once answered: how many are in flight at most (what a client's bound really lets through),
 * and an `arrive` event per request, so a test can kill a process after exactly n requests it sent.
 */
import { EventEmitter } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface CountingProxy {
  /** The simulator's base URL, through the proxy. */
  url: string;
  /** Requests whose answer has not ended. */
  readonly inFlight: number;
  /** The most requests ever in flight at once since the last `reset`. */
  readonly maxInFlight: number;
  /** Requests arrived since the last `reset`. */
  readonly arrived: number;
  /** Emits `arrive` with the count of requests arrived so far, and `settled` when none is in flight. */
  events: EventEmitter<{ arrive: [number]; settled: [] }>;
  /** Resolves once no request is in flight. */
  settled(): Promise<void>;
  reset(): void;
  close(): Promise<void>;
}

/** Starts a proxy to `target` (a base URL such as the simulator's `url`). */
export async function countingProxy(target: string): Promise<CountingProxy> {
  const to = new URL(target);
  const events = new EventEmitter<{ arrive: [number]; settled: [] }>();
  let inFlight = 0;
  let maxInFlight = 0;
  let arrived = 0;
  const server = http.createServer((req, res) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      if (--inFlight === 0) events.emit("settled");
    };
    res.once("close", end);
    const upstream = http.request(
      { host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    // A client killed mid-request closes its socket: the simulator's request is dropped with it.
    res.once("close", () => upstream.destroy());
    upstream.once("error", () => res.destroy());
    req.pipe(upstream);
    events.emit("arrive", ++arrived);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${to.pathname}`,
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    get arrived() {
      return arrived;
    },
    events,
    settled: () =>
      inFlight === 0 ? Promise.resolve() : new Promise((resolve) => events.once("settled", resolve)),
    reset() {
      maxInFlight = inFlight;
      arrived = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
