/** What an HTTP answer amounts to: the page's JSON, or the ApiError to throw (retryable, with a hint). */
import type { Response } from "got";
import { ApiError } from "../errors.js";
import type { ObserveCtx } from "./observe.js";
import { refusedRedirect } from "./redirects.js";
import { type Endpoint, readJson, statusLabel } from "./response.js";
import { parseRetryAfter } from "./retry.js";

/** What judging an answer needs from the client: its base URL, without a trailing slash, and its scrubber. */
type AnswerCtx = Pick<ObserveCtx, "scrub"> & { base: string };

/** Turns an HTTP answer into parsed JSON and the text it was parsed from, or throws the ApiError it amounts to. */
export function answer(
  ctx: AnswerCtx,
  endpoint: Endpoint,
  res: Response<Buffer>,
): { json: unknown; body: string } {
  const status = res.statusCode;
  // A redirect that comes back here is one `sameOriginOnly` would not follow: to another origin.
  const redirect = refusedRedirect(res, new URL(ctx.base).origin);
  if (redirect) throw new ApiError(ctx.scrub(`${endpoint}: ${redirect}`), { status, retryable: false });
  const body = res.body.toString("utf8");
  const parsed = readJson(body, res.headers["content-type"]);
  if (status >= 200 && status < 300) {
    if (parsed.ok) return { json: parsed.value, body };
    // A 200 that is not JSON comes from a proxy or a cut connection: worth another try.
    throw new ApiError(ctx.scrub(`${endpoint}: ${parsed.problem} (${statusLabel(status)})`), {
      status,
      retryable: true,
    });
  }
  const serverMessage = parsed.ok ? parsed.serverMessage : undefined;
  let text = `HTTP ${statusLabel(status)}`;
  if (status === 401) text += `: ${serverMessage ?? "Invalid or expired token"}`;
  else if (serverMessage) text += `: ${serverMessage}`;
  else if (!parsed.ok && parsed.kind === "foreign") text = `${parsed.problem} (${statusLabel(status)} page)`;
  throw new ApiError(ctx.scrub(`${endpoint}: ${text}`), {
    status,
    retryable: retryableStatus(status),
    retryAfterMs: parseRetryAfter(res.headers["retry-after"], Date.now()),
    hint: hintFor(ctx, endpoint, status, parsed.ok ? parsed.value : undefined),
  });
}

/** Whether another attempt may get a different answer than this status: a timeout, a 429, a 5xx. */
export function retryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** What to check after a refusal: the token after a 401/403, the base URL after a foreign 404. */
function hintFor(ctx: AnswerCtx, endpoint: Endpoint, status: number, body: unknown): string | undefined {
  if (status === 401 || status === 403) {
    return "check BOOKING_API_TOKEN or BOOKING_API_TOKEN_FILE (whichever is set): the partner API refused the token";
  }
  const isPage =
    typeof body === "object" && body !== null && (body as { success?: unknown }).success === true;
  if (status !== 404 || isPage) return undefined;
  const path = new URL(ctx.base).pathname.replace(/\/+$/, "");
  const route = `${path}/partner/booking/${endpoint}`;
  return ctx.scrub(
    path.endsWith("/api/v2")
      ? `check BOOKING_API_BASE_URL: this server has no route ${route}; is it the partner API?`
      : `check BOOKING_API_BASE_URL: it must end in /api/v2, e.g. https://host/api/v2 (this server has no route ${route})`,
  );
}
