/** Faults the simulator injects: a queue for the next matching requests, and a seeded random rate. */
import { createRng, hash32 } from "./random.js";

/** The two API endpoints a fault can target. */
export type Endpoint = "feed" | "list";

export type Fault =
  /** A server error, as a JSON error envelope (default) or an empty body; default status 503. */
  | { kind: "5xx"; status?: 500 | 502 | 503; body?: "envelope" | "empty" }
  /** Too many requests; `Retry-After` in seconds (default 1) or, with format "date", as an HTTP date; null omits it. */
  | { kind: "429"; retryAfter?: number | null; format?: "seconds" | "date" }
  /** The 401 envelope, as if the token expired mid-run. */
  | { kind: "401" }
  /** A proxy's 502 HTML page (text/html). */
  | { kind: "html" }
  /** A 200 whose JSON body is cut mid-way: with a matching Content-Length (default) or by closing the socket. */
  | { kind: "truncated"; mode?: "length" | "close" }
  /** The socket is destroyed without any response. */
  | { kind: "drop" }
  /** The response is delayed by `ms` milliseconds, then served normally. */
  | { kind: "slow"; ms: number }
  /** A 200 page whose first `count` records (default 3) are invalid in turn: no `_id`, string `totalAmount`, bad `createdAt`. */
  | { kind: "malformed"; count?: number }
  /** Feed only: an empty page that claims `hasMore: true` (nextCursor echoes the request's cursor). */
  | { kind: "hasMoreOnEmpty" }
  /** Feed only: the real page, but `nextCursor` equals the request's cursor and `hasMore` is true. */
  | { kind: "stuckCursor" };

export type FaultKind = Fault["kind"];

export interface InjectOptions {
  /** Which endpoint consumes the faults; default "feed" for feed-only kinds, otherwise "any". */
  path?: Endpoint | "any";
  /** Repeats the list this many times; default 1. */
  times?: number;
}

/** Kinds drawn by a random fault rate unless told otherwise: the transient ones a client must retry. */
export const TRANSIENT_FAULTS: readonly FaultKind[] = ["5xx", "429", "html", "truncated", "drop"];

const FEED_ONLY: ReadonlySet<FaultKind> = new Set(["hasMoreOnEmpty", "stuckCursor"]);

/** The faults due: a queue for the next matching requests, then a seeded random rate. */
export type FaultPlan = ReturnType<typeof createFaultPlan>;

/** `rate`: probability (0..1) of a random fault per request, default 0, drawn from `kinds`. */
export function createFaultPlan(seed: number, rate = 0, kinds: readonly FaultKind[] = TRANSIENT_FAULTS) {
  const queue: Array<{ fault: Fault; path: Endpoint | "any" }> = [];
  const rng = createRng(hash32(seed, 0xfa17));
  let currentRate = checkRate(rate);
  let currentKinds = [...kinds];
  return {
    /** Queues faults for the next requests to `path`, in order. */
    inject(faults: Fault | readonly Fault[], options: InjectOptions = {}): void {
      const list: readonly Fault[] = Array.isArray(faults) ? faults : [faults as Fault];
      for (let t = 0; t < (options.times ?? 1); t++) {
        for (const fault of list) {
          queue.push({ fault, path: options.path ?? (FEED_ONLY.has(fault.kind) ? "feed" : "any") });
        }
      }
    },
    /** Empties the queue. */
    clear: () => {
      queue.length = 0;
    },
    /** Sets the probability (0..1) that a request without a queued fault gets a random one, and from which kinds. */
    setRate(newRate: number, newKinds?: readonly FaultKind[]): void {
      currentRate = checkRate(newRate);
      if (newKinds) currentKinds = [...newKinds];
    },
    /** The fault for the next request to `endpoint`, if any: the queue first, then the random rate. */
    next(endpoint: Endpoint): Fault | undefined {
      const at = queue.findIndex((q) => q.path === "any" || q.path === endpoint);
      if (at >= 0) return queue.splice(at, 1)[0]?.fault;
      if (currentRate <= 0 || currentKinds.length === 0 || rng.next() >= currentRate) return undefined;
      return randomFault(rng.pick(currentKinds), rng.next());
    },
  };
}

/** A fault of the given kind with its details chosen from `r` in [0, 1). */
function randomFault(kind: FaultKind, r: number): Fault {
  switch (kind) {
    case "5xx":
      return {
        kind,
        status: r < 1 / 3 ? 500 : r < 2 / 3 ? 502 : 503,
        body: r * 6 - Math.floor(r * 6) < 0.5 ? "envelope" : "empty",
      };
    case "429":
      return { kind, retryAfter: 1, format: r < 0.5 ? "seconds" : "date" };
    case "truncated":
      return { kind, mode: r < 0.5 ? "length" : "close" };
    case "slow":
      return { kind, ms: Math.floor(r * 200) };
    case "malformed":
      return { kind, count: 1 + Math.floor(r * 3) };
    default:
      return { kind };
  }
}

function checkRate(rate: number): number {
  if (!(rate >= 0 && rate <= 1)) throw new RangeError(`faultRate must be between 0 and 1, got ${rate}`);
  return rate;
}
