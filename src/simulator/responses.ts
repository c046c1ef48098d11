/** How the simulator writes answers: JSON envelopes (contract 2.1, 7) and real gateways' broken ones. */
import type { ServerResponse } from "node:http";
import type { Fault } from "./faults.js";

/** The page nginx serves when the upstream is down. */
export const PROXY_502_HTML =
  "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n" +
  "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";

const JSON_TYPE = "application/json; charset=utf-8";

/** Messages of the error envelopes the simulator sends. */
export const MESSAGES = {
  401: "Invalid or expired token",
  404: "Route not found",
  405: "Method not allowed",
  429: "Too many requests, please slow down",
  500: "Internal server error",
  502: "Bad gateway",
  503: "Service temporarily unavailable",
} as const;

/** Stands for the records array in an envelope given to `jsonWithRecords`. */
export const RECORDS = "\u0000records\u0000";
const RECORDS_JSON = JSON.stringify(RECORDS);
const COMMA = Buffer.from(",");

/**
 * `JSON.stringify(envelope)` as UTF-8 chunks with the cached `records` JSON where it holds `RECORDS`.
 * `RECORDS` must come before any field that can echo request input, so the first match is it.
 */
export function jsonWithRecords(envelope: object, records: readonly Buffer[]): Buffer[] {
  const text = JSON.stringify(envelope);
  const at = text.indexOf(RECORDS_JSON);
  if (at < 0) throw new Error("jsonWithRecords: the envelope has no RECORDS placeholder");
  const chunks: Buffer[] = [Buffer.from(`${text.slice(0, at)}[`)];
  records.forEach((record, k) => {
    if (k > 0) chunks.push(COMMA);
    chunks.push(record);
  });
  chunks.push(Buffer.from(`]${text.slice(at + RECORDS_JSON.length)}`));
  return chunks;
}

/** The success envelope: `fields` (data, and a list's pagination) come between `success` and `status`. */
export function okEnvelope(fields: object, message: string, nowMs: number) {
  return { success: true, ...fields, status: 200, message, timestamp: new Date(nowMs).toISOString() };
}

/** The error envelope: success, status, message and timestamp only. */
export function errorEnvelope(status: number, message: string, nowMs: number) {
  return { success: false, status, message, timestamp: new Date(nowMs).toISOString() };
}

/** Writes `body` as JSON with an exact Content-Length. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  sendText(res, status, JSON_TYPE, JSON.stringify(body), headers);
}

/** Writes JSON chunks with an exact Content-Length, uncopied; a no-op once the socket is gone. */
export function sendJsonChunks(res: ServerResponse, status: number, chunks: readonly Buffer[]): void {
  if (res.destroyed) return;
  let length = 0;
  for (const chunk of chunks) length += chunk.length;
  res.writeHead(status, { "content-type": JSON_TYPE, "content-length": length });
  for (const chunk of chunks) res.write(chunk);
  res.end();
}

/** Writes `text` with an exact Content-Length; a no-op once the socket is gone. */
export function sendText(
  res: ServerResponse,
  status: number,
  contentType: string,
  text: string,
  headers: Record<string, string> = {},
): void {
  if (res.destroyed) return;
  res.writeHead(status, {
    "content-type": contentType,
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** Writes the first half of `json` with status 200: a consistent Content-Length, or the full one and a closed socket. */
export function sendTruncated(res: ServerResponse, json: Buffer, mode: "length" | "close"): void {
  if (res.destroyed) return;
  const cut = json.subarray(0, Math.max(1, Math.floor(json.length / 2)));
  if (mode === "length") {
    sendJsonChunks(res, 200, [cut]);
  } else {
    res.writeHead(200, { "content-type": JSON_TYPE, "content-length": json.length });
    // Destroy only once the half is flushed, so the client sees a body that stops short.
    res.write(cut, () => res.destroy());
  }
}

/** Answers with a fault that needs no data; returns the status sent, "dropped", or undefined if none. */
export function sendTransportFault(
  res: ServerResponse,
  fault: Fault,
  nowMs: number,
): number | "dropped" | undefined {
  switch (fault.kind) {
    case "5xx": {
      const status = fault.status ?? 503;
      if (fault.body === "empty") sendText(res, status, JSON_TYPE, "");
      else sendJson(res, status, errorEnvelope(status, MESSAGES[status], nowMs));
      return status;
    }
    case "429": {
      const seconds = fault.retryAfter === undefined ? 1 : fault.retryAfter;
      const headers: Record<string, string> = {};
      if (seconds !== null) {
        // HTTP dates have whole seconds; round up so the wait is never shorter than asked.
        const at = Math.ceil((nowMs + seconds * 1000) / 1000) * 1000;
        headers["retry-after"] = fault.format === "date" ? new Date(at).toUTCString() : String(seconds);
      }
      sendJson(res, 429, errorEnvelope(429, MESSAGES[429], nowMs), headers);
      return 429;
    }
    case "401":
      sendJson(res, 401, errorEnvelope(401, MESSAGES[401], nowMs));
      return 401;
    case "html":
      sendText(res, 502, "text/html", PROXY_502_HTML);
      return 502;
    case "drop":
      res.socket?.destroy();
      return "dropped";
    default:
      return undefined;
  }
}

/** Copies `records` with the first `count` made invalid in turn (no `_id`, string amount, bad date). */
export function corruptRecords<T extends object>(
  records: readonly T[],
  count: number,
): Array<Record<string, unknown>> {
  return records.map((record, k) => {
    const copy = { ...record } as Record<string, unknown>;
    if (k >= count) return copy;
    if (k % 3 === 0) delete copy._id;
    else if (k % 3 === 1) copy.totalAmount = String(copy.totalAmount);
    else copy.createdAt = "not-a-date";
    return copy;
  });
}
