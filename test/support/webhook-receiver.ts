/**
 * A webhook receiver for tests of push: a real node:http server on 127.0.0.1:0 that verifies every
 * request with `standardwebhooks` (as an app would) and records it, answering from a script.
 *
 *   const rx = await startWebhookReceiver({ secrets: [testSecret(1)] });
 *   rx.answer({ status: 500 }, { status: 204 });  // the next request gets 500, later ones 204
 *   await rx.waitForRequests(2);
 *   rx.delivered().map((m) => m.id);               // messages answered 2xx, in arrival order
 *   await rx.down(); await rx.up();                // connection refused meanwhile, same port after
 *   await rx.close();                              // in afterEach
 *
 * A request no secret verifies is answered 401 and kept in `rejected`: tests assert it stays empty.
 */
import { EventEmitter, once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

/** How the receiver answers one request; `status` defaults to 204. */
export interface Answer {
  status?: number;
  /** Sent as `Retry-After` (seconds or an HTTP date, as given). */
  retryAfter?: string;
  /** Sent as `Location` (use a 3xx status with it; default 302 then). */
  redirect?: string;
  /** Real ms to wait before answering (a slow receiver). */
  delayMs?: number;
  /** Answers only once this resolves, instead of after `delayMs`: a receiver the test holds. */
  until?: Promise<unknown>;
  body?: string;
}

/** A request that verified. */
export interface Received {
  /** `webhook-id`. */
  id: string;
  /** `webhook-timestamp`, seconds since the epoch. */
  timestamp: number;
  body: string;
  /** Indexes in `secrets` of every secret whose signature the request carried. */
  verifiedBy: number[];
  /** The events of the body, parsed. */
  events: Array<{ id: number; [key: string]: unknown }>;
  /** The status it was answered with; undefined while not answered (slow), or never (the sender left). */
  status: number | undefined;
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>/hooks/bookings`: the same after `down()` and `up()`. */
  readonly url: string;
  readonly origin: string;
  /** Every verified request in arrival order, whatever it was answered. */
  readonly requests: readonly Received[];
  /** Requests no secret verified (answered 401), with the library's reason. */
  readonly rejected: ReadonlyArray<{ reason: string; id: string | undefined }>;
  /** The verified requests answered 2xx: the messages the app took. */
  delivered(): Received[];
  /** The event ids of `delivered()`, in the order they were taken. */
  eventIds(): number[];
  /** Answers the next requests with these, in turn; the last repeats. Default: 204 to all. */
  answer(...answers: Answer[]): void;
  /** Resolves once `n` requests arrived in all (verified or not). */
  waitForRequests(n: number): Promise<void>;
  /** Stops listening and drops open connections: a sender gets "connection refused". */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  close(): Promise<void>;
}

/** A valid `whsec_` secret derived from `seed` (32 bytes), so tests need no randomness. */
export function testSecret(seed: number): string {
  const bytes = Buffer.alloc(32, 0);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (seed * 31 + i * 7) & 0xff;
  return `whsec_${bytes.toString("base64")}`;
}

export async function startWebhookReceiver(options: {
  secrets: readonly string[];
  /** Answers 413 to a body larger than this, in bytes, whatever the script says (express.text's `limit`). */
  maxBodyBytes?: number;
}): Promise<WebhookReceiver> {
  const hooks = options.secrets.map((s) => new Webhook(s));
  const requests: Received[] = [];
  const rejected: Array<{ reason: string; id: string | undefined }> = [];
  const arrivals = new EventEmitter();
  const timers = new Set<NodeJS.Timeout>();
  let script: Answer[] = [{}];
  let arrived = 0;

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const body = await readBody(req);
    const headers = req.headers as Record<string, string>;
    const verifiedBy = verifications(hooks, body, headers);
    arrived++;
    if (verifiedBy.reasons) {
      rejected.push({ reason: verifiedBy.reasons.join("; "), id: headers["webhook-id"] });
      res.writeHead(401).end("signature not verified");
      arrivals.emit("request");
      return;
    }
    const tooLarge = Buffer.byteLength(body) > (options.maxBodyBytes ?? Number.POSITIVE_INFINITY);
    const scripted = () => (script.length > 1 ? (script.shift() as Answer) : (script[0] as Answer));
    const answer = tooLarge ? { status: 413, body: "request entity too large" } : scripted();
    const status = answer.status ?? (answer.redirect ? 302 : 204);
    const events = eventsOf(body);
    const timestamp = Number(headers["webhook-timestamp"]);
    const received: Received = {
      id: headers["webhook-id"] ?? "",
      timestamp,
      body,
      verifiedBy: verifiedBy.ok,
      events,
      status: undefined,
    };
    requests.push(received);
    arrivals.emit("request");
    const send = () => {
      // A sender that gave up (timeout, stop) never hears the answer: the message was not taken.
      if (res.destroyed || !res.socket || res.socket.destroyed) return;
      received.status = status;
      const out: Record<string, string> = {};
      if (answer.retryAfter !== undefined) out["retry-after"] = answer.retryAfter;
      if (answer.redirect !== undefined) out.location = answer.redirect;
      res.writeHead(status, out).end(answer.body ?? "");
    };
    if (answer.until) return void answer.until.then(send);
    if (!answer.delayMs) return send();
    const timer = setTimeout(() => {
      timers.delete(timer);
      send();
    }, answer.delayMs);
    timers.add(timer);
  };

  let server = http.createServer((req, res) => void handle(req, res));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;

  const stop = async () => {
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
    if (!server.listening) return;
    const closed = once(server, "close");
    server.close();
    server.closeAllConnections();
    await closed;
  };

  return {
    url: `${origin}/hooks/bookings`,
    origin,
    requests,
    rejected,
    delivered: () => requests.filter(taken),
    eventIds: () => requests.filter(taken).flatMap((r) => r.events.map((e) => e.id)),
    answer(...answers) {
      script = answers.length > 0 ? [...answers] : [{}];
    },
    async waitForRequests(n) {
      while (arrived < n) await once(arrivals, "request");
    },
    down: stop,
    async up() {
      if (server.listening) return;
      server = http.createServer((req, res) => void handle(req, res));
      server.listen(port, "127.0.0.1");
      await once(server, "listening");
    },
    close: stop,
  };
}

/** The body's `data.events`, or none when it is not a booking.events message (a test's own body). */
function eventsOf(body: string): Received["events"] {
  try {
    const events = (JSON.parse(body) as { data?: { events?: unknown } }).data?.events;
    return Array.isArray(events) ? events : [];
  } catch {
    return [];
  }
}

function taken(r: Received): boolean {
  return r.status !== undefined && r.status >= 200 && r.status < 300;
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Which hooks verify the request (by index), or every reason it failed when none does. */
function verifications(
  hooks: readonly Webhook[],
  body: string,
  headers: Record<string, string>,
): { ok: number[]; reasons?: undefined } | { ok?: undefined; reasons: string[] } {
  const ok: number[] = [];
  const reasons: string[] = [];
  hooks.forEach((hook, i) => {
    try {
      hook.verify(body, headers);
      ok.push(i);
    } catch (err) {
      reasons.push(`secret ${i}: ${(err as Error).message}`);
    }
  });
  return ok.length > 0 ? { ok } : { reasons };
}
