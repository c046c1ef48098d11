/** The daemon's HTTP endpoint (status page, health, metrics, on-demand sync): plain node:http. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Registry } from "prom-client";
import { wrapError } from "../errors.js";
import type { StatusPageData } from "../store/daily.js";
import type { Clock, Logger } from "../sync/ports.js";
import { errorText } from "./error-text.js";
import { type EventsEndpointOptions, eventsHandler } from "./events-http.js";
import type { HealthStatus } from "./health.js";
import { refused, sendJson, tokenGuard } from "./http-common.js";
import type { TriggerResult } from "./scheduler.js";
import { ReadTimeoutError, sharedRead } from "./shared-read.js";
import { renderStatusPage, STATUS_PAGE_HEADERS } from "./status-page.js";

export interface HttpServerOptions {
  /** Address to bind, e.g. "127.0.0.1" or "0.0.0.0". */
  host: string;
  /** Port to bind; 0 lets the OS pick (tests). The caller decides what HTTP_PORT=0 means. */
  port: number;
  /** Readiness source of /readyz; it may read the mirror (the fill under way, health.ts `fillReadiness`). */
  health: { status(now: Date): HealthStatus | Promise<HealthStatus> };
  /** Served by /metrics. */
  registry: Pick<Registry, "metrics" | "contentType">;
  /** Asks for a run now (the scheduler's `trigger`). */
  trigger: () => TriggerResult;
  /**
   * Reads what GET / shows; without it GET / is 404. A throw answers 503. Views share one read in
   * flight and reuse its result for `statusPageReuseMs`.
   */
  statusPage?: (() => Promise<StatusPageData>) | undefined;
  /** How long a status page read is reused after it arrived, ms; default 5,000. */
  statusPageReuseMs?: number | undefined;
  /** How long a view waits for the read before it answers 503 (the read goes on), ms; default 10,000. */
  statusPageTimeoutMs?: number | undefined;
  /** When set, POST /sync requires it as a bearer token; else see `triggerGuard`. */
  triggerToken?: string | undefined;
  /** What GET /events serves; without it GET /events is 404. */
  events?: EventsEndpointOptions | undefined;
  /** Time for readiness; default the system clock. */
  clock?: Clock;
  logger: Logger;
}

/** A listening endpoint. */
export type HttpServerHandle = Awaited<ReturnType<typeof startHttpServer>>;

type Handler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** How POST /sync is guarded: by the trigger token when set; without one, open only on loopback, else refused. */
export const triggerGuard = tokenGuard;

/** Why POST /sync is refused on `host`, for the 403 body and the start-up warning. */
export function triggerRefusal(host: string): string {
  return `POST /sync is refused: the endpoint listens on ${host}, beyond loopback, and no trigger token is set; set TRIGGER_TOKEN or TRIGGER_TOKEN_FILE`;
}

/** Starts listening; rejects (with the address in the message) when the port cannot be bound. */
export async function startHttpServer(options: HttpServerOptions) {
  // Aborted by close(): a long poll answers at once instead of holding the stop.
  const stopping = new AbortController();
  const routes = buildRoutes(options, stopping.signal);
  const server = createServer((req, res) => {
    const started = Date.now();
    res.on("finish", () => {
      // Authorization headers are never logged; the path alone says enough.
      options.logger.debug(
        { method: req.method, path: req.url, status: res.statusCode, ms: Date.now() - started },
        "http request",
      );
    });
    void dispatch(routes, req, res, options.logger);
  });
  const closeIdle = trackIdleSockets(server);
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err) => reject(wrapError(`listen on ${options.host}:${options.port}`, err)));
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  let closing: Promise<void> | undefined;
  return {
    /** Base URL, e.g. "http://127.0.0.1:8080". */
    url: `http://${host}:${port}`,
    /** The bound port (the OS's pick when 0 was asked). */
    port,
    /** Stops accepting, closes idle keep-alive connections, resolves when the last request ended. */
    close(): Promise<void> {
      stopping.abort();
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        closeIdle();
      });
      return closing;
    },
  };
}

/**
 * Returns what closes every connection with no request in flight, now and as each in-flight one ends.
 * Node's closeIdleConnections() misses a connection that never carried a request, such as the spare
 * one a browser opens ahead of need: it held a stop for the whole shutdown timeout.
 */
function trackIdleSockets(server: Server): () => void {
  const idle = new Set<Socket>();
  let closing = false;
  server.on("connection", (socket: Socket) => {
    idle.add(socket);
    socket.on("close", () => idle.delete(socket));
  });
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    idle.delete(req.socket);
    res.on("close", () => {
      if (closing) req.socket.end();
      else if (!req.socket.destroyed) idle.add(req.socket);
    });
  });
  return () => {
    closing = true;
    for (const socket of idle) socket.destroy();
  };
}

function buildRoutes(options: HttpServerOptions, stopping: AbortSignal): Map<string, Map<string, Handler>> {
  const clock = options.clock ?? { now: () => new Date() };
  const healthz: Handler = (_req, res) => sendJson(res, 200, { status: "ok" });
  const readyz: Handler = async (_req, res) => {
    const status = await options.health.status(clock.now());
    sendJson(res, status.ready ? 200 : 503, { status: status.ready ? "ready" : "not ready", ...status });
  };
  const metrics: Handler = async (_req, res) => {
    const body = await options.registry.metrics();
    res.writeHead(200, { "content-type": options.registry.contentType, "cache-control": "no-store" });
    res.end(body);
  };
  const guard = triggerGuard(options.host, options.triggerToken);
  const sync: Handler = (req, res) => {
    req.resume(); // the body carries nothing we read; drain it so keep-alive works
    if (!refused(req, res, guard, { token: options.triggerToken, refusal: triggerRefusal(options.host) })) {
      const result = options.trigger();
      if (result.accepted) sendJson(res, 202, result);
      else sendJson(res, 503, { accepted: false, error: "shutting down" });
    }
  };
  const get = (h: Handler) => new Map(["GET", "HEAD"].map((method) => [method, h]));
  const routes = new Map([
    ["/healthz", get(healthz)],
    ["/readyz", get(readyz)],
    ["/metrics", get(metrics)],
    ["/sync", new Map([["POST", sync]])],
  ]);
  if (options.events)
    routes.set("/events", new Map([["GET", eventsHandler(options.events, options.host, stopping)]]));
  if (options.statusPage) {
    const read = sharedRead(options.statusPage, {
      clock,
      reuseMs: options.statusPageReuseMs ?? 5_000,
      timeoutMs: options.statusPageTimeoutMs ?? 10_000,
    });
    routes.set("/", get(statusPage(read, options.logger)));
  }
  return routes;
}

/** GET /: the page, or a short 503 when the database cannot be read now (busy, slow, say). */
function statusPage(read: () => Promise<StatusPageData>, logger: Logger): Handler {
  return async (_req, res) => {
    let data: StatusPageData;
    try {
      data = await read();
    } catch (err) {
      const slow = err instanceof ReadTimeoutError;
      if (slow)
        logger.warn({ ms: err.timeoutMs }, "status page: the read is slow; it goes on for the next view");
      else logger.error({ error: errorText(err) }, "status page: reading the database failed");
      res.writeHead(503, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
      res.end(
        slow
          ? `status unavailable: reading the figures took over ${err.timeoutMs / 1000} s; they are still being read, try again in a moment\n`
          : "status unavailable: the database could not be read; the daemon's log says why\n",
      );
      return;
    }
    res.writeHead(200, STATUS_PAGE_HEADERS);
    res.end(renderStatusPage(data));
  };
}

async function dispatch(
  routes: Map<string, Map<string, Handler>>,
  req: IncomingMessage,
  res: ServerResponse,
  logger: Logger,
): Promise<void> {
  // Only the path routes; a request target like "//x" must not be read as a host.
  const path = (req.url ?? "/").split("?")[0] ?? "/";
  const methods = routes.get(path);
  const handler = methods?.get(req.method ?? "");
  try {
    if (!methods) return sendJson(res, 404, { error: `no such endpoint: ${path}` });
    if (!handler) {
      const allow = [...methods.keys()].join(", ");
      return sendJson(res, 405, { error: `${req.method} not allowed on ${path}` }, { allow });
    }
    await handler(req, res);
  } catch (err) {
    logger.error({ path, error: errorText(err) }, "http handler failed");
    if (!res.headersSent) sendJson(res, 500, { error: "internal error" });
    else res.destroy();
  }
}
