/** The bundled partner API simulator over real HTTP (contract 4), talked to as the real API is. */
import { EventEmitter, setMaxListeners } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type BookingFilter, Dataset, type DatasetOptions } from "./dataset.js";
import {
  createFaultPlan,
  type Endpoint,
  type Fault,
  type FaultKind,
  type InjectOptions,
  TRANSIENT_FAULTS,
} from "./faults.js";
import {
  API_BASE,
  type Behaviour,
  type Context,
  handle,
  type RequestEvent,
  requestEvent,
} from "./handler.js";
import { errorEnvelope, sendJson } from "./responses.js";

export type { Behaviour } from "./handler.js";

export interface SimulatorOptions extends DatasetOptions, Partial<Behaviour> {
  /** Interface to listen on; default "127.0.0.1". */
  host?: string;
  /** Port; default 0 (the OS picks one). */
  port?: number;
  /** Seed of the random fault draws; default `seed`. */
  faultSeed?: number;
}

/** Request counters; a live object, reset with `resetStats()`. */
export interface SimulatorStats {
  requests: number;
  byEndpoint: Record<Endpoint | "other", number>;
  /** Keyed by status code as a string, or "dropped". */
  byStatus: Record<string, number>;
  byFault: Partial<Record<FaultKind, number>>;
}

/** A running simulator: its address, data set, counters and controls. */
export type Simulator = ReturnType<typeof handleOf>;

function emptyStats(): SimulatorStats {
  return { requests: 0, byEndpoint: { feed: 0, list: 0, other: 0 }, byStatus: {}, byFault: {} };
}

/** Starts the simulator and resolves once it listens. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const dataset = new Dataset(options);
  const now = options.now ?? Date.now;
  const behaviour: Behaviour = {
    latencyMs: options.latencyMs ?? 0,
    cursor: options.cursor ?? "exclusive",
    faultRate: options.faultRate ?? 0,
    faultKinds: [...(options.faultKinds ?? TRANSIENT_FAULTS)],
    token: options.token ?? "sim-token",
  };
  const faults = createFaultPlan(
    options.faultSeed ?? dataset.seed,
    behaviour.faultRate,
    behaviour.faultKinds,
  );
  const ctx: Context = { dataset, behaviour, faults, now, closing: new AbortController() };
  // Every request waiting out its latency listens for the close: as many as a client sends at once,
  // which is no leak, so Node's warning past 10 listeners does not apply.
  setMaxListeners(0, ctx.closing.signal);
  const stats = emptyStats();
  const events = new EventEmitter<{ request: [RequestEvent] }>();
  const server = createServer((req, res) => {
    const outcome = handle(ctx, req, res).catch((err: unknown): RequestEvent => {
      // A bug in the simulator must surface in the test that hit it, as a 500.
      if (!res.headersSent) sendJson(res, 500, errorEnvelope(500, String(err), now()));
      return { ...requestEvent(req), status: 500 };
    });
    // Counted as soon as the answer is written, before the client can read it.
    void outcome.then((event) => record(stats, event));
    // Listen now: a dropped socket can close before the outcome resolves.
    res.once("close", () => void outcome.then((event) => events.emit("request", event)));
  });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = host === "0.0.0.0" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
  const close = async (): Promise<void> => {
    ctx.closing.abort();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  };
  const address = { url: `http://${shownHost}:${port}${API_BASE}`, port };
  return handleOf(ctx, address, stats, events, close);
}

/** The simulator's controls over its running parts. */
function handleOf(
  ctx: Context,
  address: { url: string; port: number },
  stats: SimulatorStats,
  events: EventEmitter<{ request: [RequestEvent] }>,
  close: () => Promise<void>,
) {
  const { dataset, behaviour, faults } = ctx;
  // No spreading here: it would freeze the `behaviour` getter into a value.
  return {
    /** Base URL, e.g. `http://127.0.0.1:PORT/api/v2`. */
    url: address.url,
    port: address.port,
    dataset,
    /** A live object, reset with `resetStats()`. */
    stats,
    /** Emits `request` (a RequestEvent) after each request. */
    events,
    /** The current behaviour (a copy). */
    get behaviour(): Behaviour {
      return { ...behaviour, faultKinds: [...behaviour.faultKinds] };
    },
    /** Changes behaviour at runtime; `tieRun`/`spacingMs` change every booking's createdAt. */
    behave(patch: Partial<Behaviour> & { tieRun?: number; spacingMs?: number }): void {
      const { tieRun, spacingMs, ...rest } = patch;
      // Validates the rate before anything changes.
      faults.setRate(rest.faultRate ?? behaviour.faultRate, rest.faultKinds ?? behaviour.faultKinds);
      dataset.setTiming({ tieRun, spacingMs });
      Object.assign(behaviour, rest);
    },
    /** Queues faults for the next matching requests, e.g. `inject([{ kind: "429" }, { kind: "drop" }], { path: "feed" })`. */
    inject: (list: Fault | readonly Fault[], options?: InjectOptions) => faults.inject(list, options),
    /** Drops queued faults not yet served. */
    clearFaults: () => faults.clear(),
    /** Resolves with the next request event that satisfies `predicate` (default: any). */
    nextRequest: (predicate: (event: RequestEvent) => boolean = () => true) =>
      new Promise<RequestEvent>((resolve) => {
        const listener = (event: RequestEvent): void => {
          if (!predicate(event)) return;
          events.off("request", listener);
          resolve(event);
        };
        events.on("request", listener);
      }),
    resetStats: () => {
      Object.assign(stats, emptyStats());
    },
    insert: (count: number) => dataset.insert(count),
    release: (indexes: readonly number[]) => dataset.release(indexes),
    update: (i: number) => dataset.update(i),
    remove: (i: number) => dataset.remove(i),
    /** Every visible booking matching the filter, summary view, newest first. */
    allSummaries: (filter?: BookingFilter) =>
      Array.from(dataset.visibleIndexes(filter), (i) => dataset.summary(i)),
    /** Every visible booking matching the filter, full view, newest first. */
    allFull: (filter?: BookingFilter) => Array.from(dataset.visibleIndexes(filter), (i) => dataset.full(i)),
    /** Stops listening and closes open connections. */
    close,
  };
}

/** Counts one more request. */
function record(stats: SimulatorStats, event: RequestEvent): void {
  stats.requests++;
  stats.byEndpoint[event.endpoint]++;
  const key = String(event.status);
  stats.byStatus[key] = (stats.byStatus[key] ?? 0) + 1;
  if (event.fault) stats.byFault[event.fault] = (stats.byFault[event.fault] ?? 0) + 1;
}
