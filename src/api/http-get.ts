/**
 * One GET over node:http(s), with what the API client needs of an HTTP library and nothing more: a
 * timeout of the whole request, redirects followed only where `follow` allows, gzip/deflate/br
 * decoded, the body counted as it arrives, and an abort signal. It replaced got and its two dozen
 * packages, which an idle sidecar held in memory (docs/performance.md, 2026-11-27, has the figures).
 */
import http, { type IncomingHttpHeaders, type IncomingMessage } from "node:http";
import https from "node:https";
import type { Readable } from "node:stream";
import zlib from "node:zlib";

/** An answer's status line and headers, and the URL that gave it (the last one after redirects). */
export interface HttpHead {
  statusCode: number;
  headers: IncomingHttpHeaders;
  url: string;
}

/** An answer read whole. */
export interface HttpResponse extends HttpHead {
  body: Buffer;
}

/** A transport failure, by the code Node gives it (ECONNREFUSED, ETIMEDOUT, ERR_TOO_MANY_REDIRECTS, ...). */
export class HttpError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = "HttpError";
  }
}

/** `href` with `params` as its query string. */
export function withQuery(href: string, params: Record<string, string>): URL {
  const url = new URL(href);
  url.search = new URLSearchParams(params).toString();
  return url;
}

/** What every GET of a client shares. */
export type HttpDefaults = Omit<GetOptions, "signal">;

export interface GetOptions {
  headers: Record<string, string>;
  /** Timeout of the whole request, redirects and body included, ms. */
  timeoutMs: number;
  /** Whether to follow a 3xx answer (the client's same-origin rule). */
  follow: (head: HttpHead) => boolean;
  signal?: AbortSignal | undefined;
}

/**
 * An answer whose body is still to be read. `close` ends the request (and its timer), cutting the body
 * short if it has not ended; `failure` says what an error of the body amounts to (a timeout, say).
 */
export interface OpenAnswer extends HttpHead {
  body: Readable;
  close: () => void;
  failure: (err: unknown) => unknown;
}

const MAX_REDIRECTS = 10;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Sends the GET, following allowed redirects; resolves once an answer's head arrives. */
export async function openGet(url: URL, options: GetOptions): Promise<OpenAnswer> {
  const stop = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    stop.abort();
  }, options.timeoutMs);
  const onAbort = () => stop.abort();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  let ended = false;
  const close = () => {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
    // A body read to its end leaves its connection to the agent, for the next request.
    if (!ended) stop.abort();
  };
  const failure = (err: unknown): unknown => {
    if (timedOut) return new HttpError(`Timeout awaiting 'request' for ${options.timeoutMs}ms`, "ETIMEDOUT");
    if (options.signal?.aborted) return err;
    const code = (err as { code?: unknown } | undefined)?.code;
    return typeof code === "string" ? new HttpError((err as Error).message, code) : err;
  };
  try {
    options.signal?.throwIfAborted();
    for (let redirects = 0, at = url; ; redirects++) {
      const res = await request(at, options.headers, stop.signal);
      const head: HttpHead = { statusCode: res.statusCode ?? 0, headers: res.headers, url: at.href };
      const location = res.headers.location;
      if (!(REDIRECTS.has(head.statusCode) && location && options.follow(head))) {
        const body = decoded(res);
        body.once("end", () => {
          ended = true;
        });
        return { ...head, body, close, failure };
      }
      res.resume();
      if (redirects + 1 > MAX_REDIRECTS)
        throw new HttpError(`Redirected ${MAX_REDIRECTS} times. Aborting.`, "ERR_TOO_MANY_REDIRECTS");
      // Read as latin1 bytes of UTF-8 text, as redirects.ts reads it for the same-origin check.
      at = new URL(Buffer.from(location, "binary").toString(), at);
    }
  } catch (err) {
    close();
    throw failure(err);
  }
}

/** Reads an answer whole; `onBytes` sees the running count (and the Content-Length) and may stop it by throwing. */
export async function getBuffer(
  url: URL,
  options: GetOptions & { onBytes: (transferred: number, total: number | undefined) => void },
): Promise<HttpResponse> {
  const answer = await openGet(url, options);
  const total = Number(answer.headers["content-length"]) || undefined;
  const chunks: Buffer[] = [];
  let transferred = 0;
  try {
    options.onBytes(0, total);
    for await (const chunk of answer.body as AsyncIterable<Buffer>) {
      transferred += chunk.length;
      options.onBytes(transferred, total);
      chunks.push(chunk);
    }
  } catch (err) {
    throw answer.failure(err);
  } finally {
    answer.close();
  }
  const { statusCode, headers, url: at } = answer;
  return { statusCode, headers, url: at, body: Buffer.concat(chunks) };
}

function request(url: URL, headers: Record<string, string>, signal: AbortSignal): Promise<IncomingMessage> {
  const get = url.protocol === "https:" ? https.get : http.get;
  return new Promise((resolve, reject) => {
    const req = get(url, { headers, signal }, resolve);
    req.on("error", reject);
  });
}

/** The body as sent before its Content-Encoding (gzip, deflate, br), or as it came. */
function decoded(res: IncomingMessage): Readable {
  const encoding = String(res.headers["content-encoding"] ?? "")
    .trim()
    .toLowerCase();
  const decoder =
    encoding === "gzip" || encoding === "x-gzip"
      ? zlib.createGunzip()
      : encoding === "deflate"
        ? zlib.createInflate()
        : encoding === "br"
          ? zlib.createBrotliDecompress()
          : undefined;
  if (!decoder) return res;
  res.on("error", (err) => decoder.destroy(err));
  decoder.on("close", () => res.destroy());
  return res.pipe(decoder);
}
