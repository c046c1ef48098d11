/**
 * One webhook attempt: a POST with got, no retry of its own (the delivery loop retries, with the
 * message stored), no redirect followed, a timeout, and only so much of the answer read. It never
 * throws: an HTTP status and a transport fault are both an answer the loop records.
 */
import type { ClientRequest, IncomingMessage } from "node:http";
import got, { type PlainResponse, RequestError } from "got";
import { redirectTarget } from "../api/redirects.js";
import { statusLabel } from "../api/response.js";
import { printableShort } from "../printable.js";
import { PACKAGE_VERSION } from "../version.js";
import type { PostOptions, PostResult } from "./ports.js";
import { webhookUrlProblem } from "./webhook-url.js";

/** The timeout of one attempt, in ms (10 s), connection to the end of the answer. */
export const POST_TIMEOUT_MS = 10_000;
// The answer matters by its status; its body only for a line in the error, so little is read.
const MAX_ANSWER_BYTES = 64 * 1024;
const ERROR_BODY_CHARS = 200;

/** POSTs one message with got (the `PostWebhook` adapter); resolves with the answer's status, or the fault, and never rejects. */
export async function postMessage(options: PostOptions): Promise<PostResult> {
  const problem = webhookUrlProblem(options.url, options.allowInsecure ?? false);
  if (problem) return { ok: false, status: undefined, retryAfter: undefined, error: problem };
  const origin = new URL(options.url).origin;
  const request = got.post(options.url, {
    body: options.body,
    headers: {
      "content-type": "application/json",
      "user-agent": `booking-sync/${PACKAGE_VERSION}`,
      ...options.headers,
    },
    timeout: { request: options.timeoutMs ?? POST_TIMEOUT_MS },
    retry: { limit: 0 },
    throwHttpErrors: false,
    // A receiver that moved says so with a failure, not by taking the stream elsewhere.
    followRedirect: false,
    responseType: "buffer",
    ...(options.signal ? { signal: options.signal } : {}),
  });
  // The status and headers as they arrive: got's promise reports a response only with its whole body.
  let answered: Answer | undefined;
  request.on("request", (req: ClientRequest) => {
    req.once("response", (res: IncomingMessage) => {
      answered = { statusCode: res.statusCode ?? 0, headers: res.headers, url: options.url };
    });
  });
  request.on("downloadProgress", ({ transferred }) => {
    if (transferred > MAX_ANSWER_BYTES) request.cancel();
  });
  try {
    const res = await request;
    return judge(res, res.body.toString("utf8"), origin);
  } catch (err) {
    // Cancelled past the cap: the status is known, the body is not needed.
    if (answered && !options.signal?.aborted) return judge(answered, "", origin);
    return { ok: false, status: undefined, retryAfter: undefined, error: faultText(err, options, origin) };
  }
}

/** What judging an answer reads of it. */
type Answer = Pick<PlainResponse, "statusCode" | "headers" | "url">;

function judge(res: Answer, body: string, origin: string): PostResult {
  const status = res.statusCode;
  if (status >= 200 && status < 300) return { ok: true, status };
  const retryAfter = headerText(res.headers["retry-after"]);
  const target = redirectTarget(res);
  if (target) {
    const error =
      `the webhook at ${origin} answered a redirect to ${target.origin} (HTTP ${statusLabel(status)}), ` +
      "which booking-sync never follows: set EVENTS_WEBHOOK_URL to the final address";
    return { ok: false, status, retryAfter, error };
  }
  const said = body.trim() ? `: ${printableShort(body.trim(), ERROR_BODY_CHARS)}` : "";
  return {
    ok: false,
    status,
    retryAfter,
    error: `the webhook at ${origin} answered HTTP ${statusLabel(status)}${said}`,
  };
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function faultText(err: unknown, options: PostOptions, origin: string): string {
  if (options.signal?.aborted) return `the attempt to ${origin} was stopped (shutting down)`;
  const message = err instanceof Error ? err.message : String(err);
  const code = err instanceof RequestError ? ` (${err.code})` : "";
  // got's messages may quote the URL; only its origin leaves this module.
  const scrubbed = message.split(options.url).join(origin);
  return `the webhook at ${origin} could not be reached: ${printableShort(scrubbed, ERROR_BODY_CHARS)}${code}`;
}
