/**
 * Test support for the API client: a node:http server on 127.0.0.1:0 that answers request by
 * request from a script and records when each arrived, and a client wired to capture its logs
 * and per-attempt events.
 */
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "vitest";
import { type ApiClientOptions, createApiClient, type RequestEvent } from "../../src/api/client.js";
import { ApiError } from "../../src/errors.js";
import type { Logger } from "../../src/sync/ports.js";

export const TOKEN = "tok-SECRET-0123456789";

export type Answer = (req: http.IncomingMessage, res: http.ServerResponse) => void;
export interface Hit {
  at: number;
  url: URL;
  headers: http.IncomingHttpHeaders;
}

const servers: http.Server[] = [];

/** Closes every server `serve` started, hanging connections included; call it in `afterEach`. */
export function closeServers(): void {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
}

/** A server answering request i with answers[i] (the last one repeats). */
export async function serve(...answers: Answer[]) {
  const hits: Hit[] = [];
  const server = http.createServer((req, res) => {
    hits.push({ at: performance.now(), url: new URL(req.url ?? "/", "http://x"), headers: req.headers });
    server.emit("hit", hits.length);
    const answer = answers[Math.min(hits.length, answers.length) - 1];
    answer?.(req, res);
  });
  servers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  /** Resolves once the server has received `n` requests in all. */
  const hitCount = async (n: number) => {
    while (hits.length < n) await once(server, "hit");
  };
  return { baseUrl: `http://127.0.0.1:${port}/api/v2`, hits, hitCount };
}

export const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Answer =>
  (_req, res) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(body));
  };
export const raw =
  (status: number, body: string, contentType = "application/json"): Answer =>
  (_req, res) => {
    res.writeHead(status, { "content-type": contentType });
    res.end(body);
  };
export const errorBody = (status: number, message: string) => ({
  success: false,
  status,
  message,
  timestamp: "2024-05-01T00:00:00Z",
});
export const html = (status: number) =>
  raw(status, "<html><body><h1>Bad Gateway</h1></body></html>", "text/html; charset=utf-8");
/**
 * A 200 body of `bytes` spaces, written 64 KiB at a time as the client reads it (never held whole),
 * with or without Content-Length; `sent.bytes` counts what was written before the client hung up.
 */
export const streamed =
  (bytes: number, options: { contentLength: boolean }, sent = { bytes: 0 }): Answer =>
  (_req, res) => {
    const length: Record<string, string> = options.contentLength ? { "content-length": String(bytes) } : {};
    res.writeHead(200, { "content-type": "application/json", ...length });
    const chunk = Buffer.alloc(64 * 1024, " ");
    const pump = () => {
      while (sent.bytes < bytes && !res.destroyed) {
        const n = Math.min(chunk.length, bytes - sent.bytes);
        sent.bytes += n;
        if (!res.write(chunk.subarray(0, n))) {
          res.once("drain", pump);
          return;
        }
      }
      if (!res.destroyed) res.end();
    };
    pump();
  };
export const hang: Answer = () => {};
export const drop: Answer = (req) => req.socket.destroy();

export function summary(i: number, createdAt = `2024-05-01T10:00:${String(i).padStart(2, "0")}Z`) {
  return { _id: `b${i}`, totalAmount: 1000 + i, paid: true, bookingState: 1, orderState: 2, createdAt };
}
export function feed(bookings: unknown[], nextCursor: string | null = null, hasMore = false) {
  return { success: true, status: 200, message: "ok", data: { bookings, nextCursor, hasMore } };
}
export const okFeed = json(200, feed([summary(1)]));

/** A client with tiny, deterministic backoff; a logger that keeps every line. */
export function client(baseUrl: string, extra: Partial<ApiClientOptions> = {}) {
  const lines: string[] = [];
  const events: RequestEvent[] = [];
  const log = (level: string) => (obj: object, msg?: string) =>
    lines.push(JSON.stringify({ level, ...obj, msg }));
  const logger: Logger = { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") };
  const api = createApiClient({
    baseUrl,
    token: TOKEN,
    minBackoffMs: 1,
    maxBackoffMs: 5,
    random: () => 0.5,
    logger,
    onRequest: (e) => events.push(e),
    ...extra,
  });
  return { api, lines, events };
}

export async function failure(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

/** Every message in an error's cause chain, for the token check. */
export function chain(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err; e instanceof Error; e = e.cause) parts.push(e.message, JSON.stringify(e));
  return parts.join("\n");
}
