/** What every guarded endpoint of the daemon's HTTP port shares: the JSON answer and the bearer rule. */
import { createHash, timingSafeEqual } from "node:crypto";
import type { ServerResponse } from "node:http";
import { isLoopbackHost } from "../config/transport.js";

/** How an endpoint is guarded: by its token when set; without one, open only on loopback, else refused. */
export function tokenGuard(host: string, token: string | undefined): "token" | "open" | "refused" {
  if (token !== undefined) return "token";
  return isLoopbackHost(host) ? "open" : "refused";
}

/** Compares the bearer token in constant time; hashing first hides the token's length. */
export function bearerMatches(header: string | undefined, token: string): boolean {
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
