/** What every guarded endpoint of the daemon's HTTP port shares: the JSON answer and the bearer rule. */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { isLoopbackHost } from "../config/transport.js";

/** How an endpoint is guarded: by its token when set; without one, open only on loopback, else refused. */
export function tokenGuard(host: string, token: string | undefined): "token" | "open" | "refused" {
  if (token !== undefined) return "token";
  return isLoopbackHost(host) ? "open" : "refused";
}

/**
 * Answers the request when `guard` does not let it through, and says whether it did. An open endpoint
 * (no token, a loopback bind) also refuses a Host that is not loopback: a web page that rebinds its
 * own name to 127.0.0.1 reaches the port, but its requests still carry its name.
 */
export function refused(
  req: IncomingMessage,
  res: ServerResponse,
  guard: ReturnType<typeof tokenGuard>,
  o: { token: string | undefined; refusal: string },
): boolean {
  if (guard === "refused") sendJson(res, 403, { error: o.refusal });
  else if (guard === "token" && !bearerMatches(req.headers.authorization, o.token ?? ""))
    sendJson(res, 401, { error: "missing or wrong bearer token" }, { "www-authenticate": "Bearer" });
  else if (guard === "open" && !loopbackHostHeader(req.headers.host))
    sendJson(res, 403, {
      error:
        "the Host header names no loopback host: without a token this endpoint answers only requests to localhost",
    });
  else return false;
  return true;
}

/** Whether a Host header names a loopback host (or is absent, as HTTP/1.0 allows). */
function loopbackHostHeader(header: string | undefined): boolean {
  if (header === undefined) return true;
  return URL.canParse(`http://${header}`) && isLoopbackHost(new URL(`http://${header}`).hostname);
}

/** Compares the bearer token in constant time; hashing first hides the token's length. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer +(.+)$/i.exec(header ?? "");
  const given = createHash("sha256")
    .update(match?.[1] ?? "")
    .digest();
  const wanted = createHash("sha256").update(token).digest();
  return timingSafeEqual(given, wanted) && match !== null;
}

/** Answers `body` as JSON, never cached. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", ...headers });
  res.end(JSON.stringify(body));
}
