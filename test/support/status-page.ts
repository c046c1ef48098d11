/**
 * Reading the status page in tests: its figures and charts, and what it must never show: people's
 * values as the mirror actually stores them.
 */
import { expect } from "vitest";
import { createHealth } from "../../src/daemon/health.js";
import { type HttpServerHandle, type HttpServerOptions, startHttpServer } from "../../src/daemon/http.js";
import { createMetrics } from "../../src/daemon/metrics.js";
import { memoryLogger } from "./fakes.js";
import { analyst } from "./harness.js";
import type { Query } from "./mirror-harness.js";

/** The HTTP endpoint as the daemon builds it, its page read by `statusPage`, on 127.0.0.1. */
export async function serveStatusPage(
  statusPage: HttpServerOptions["statusPage"],
  overrides: Partial<HttpServerOptions> = {},
): Promise<{ server: HttpServerHandle; logger: ReturnType<typeof memoryLogger> }> {
  const logger = memoryLogger();
  const server = await startHttpServer({
    host: "127.0.0.1",
    port: 0,
    health: createHealth({ readyMaxAgeSeconds: 180 }),
    registry: createMetrics({ processMetrics: false }).registry,
    trigger: () => ({ accepted: true, coalesced: false }),
    statusPage,
    logger,
    ...overrides,
  });
  return { server, logger };
}

/** The text of the element carrying `data-figure="name"`. */
export function figure(page: string, name: string): string | undefined {
  return new RegExp(`data-figure="${name}"[^>]*>([^<]*)<`).exec(page)?.[1];
}

/** The `<svg>` element with `data-chart="id"`, whole. */
export function chart(page: string, id: string): string {
  const m = new RegExp(`<svg[^>]*data-chart="${id}"[\\s\\S]*?</svg>`).exec(page);
  expect(m, `chart ${id}`).not.toBeNull();
  return m?.[0] ?? "";
}

/**
 * Names, phones, emails and address lines of senders and receivers of `rows` bookings that have
 * details, from the typed columns and the stored full record; empty values left out.
 */
export function personalValues(dbPath: string, rows: number): string[] {
  const db = analyst(dbPath);
  try {
    const found = db
      .prepare(`
        SELECT sender_name, sender_phone, sender_email, receiver_name, receiver_phone, receiver_email,
          detail_json ->> '$.sender.addressDetails.addressLine1',
          detail_json ->> '$.sender.addressDetails.landmark',
          detail_json ->> '$.receiver.addressDetails.addressLine1',
          detail_json ->> '$.receiver.addressDetails.landmark'
        FROM bookings WHERE detail_json IS NOT NULL ORDER BY id LIMIT ?`)
      .raw()
      .all(rows) as unknown[][];
    return [...new Set(found.flat().filter((v): v is string => typeof v === "string" && v.length >= 5))];
  } finally {
    db.close();
  }
}

/** `personalValues` on either backend: the typed columns, and the address lines of the stored JSON. */
export async function personalValuesIn(query: Query, rows: number): Promise<string[]> {
  const found = await query<Record<string, string | null>>(
    `SELECT sender_name, sender_phone, sender_email, receiver_name, receiver_phone, receiver_email, detail_json
     FROM bookings WHERE detail_json IS NOT NULL ORDER BY id LIMIT $1`,
    [rows],
  );
  const values = found.flatMap(({ detail_json, ...typed }) => {
    const detail = JSON.parse(detail_json ?? "{}");
    const lines = [detail.sender, detail.receiver].flatMap((p) => [
      p?.addressDetails?.addressLine1,
      p?.addressDetails?.landmark,
    ]);
    return [...Object.values(typed), ...lines];
  });
  return [...new Set(values.filter((v): v is string => typeof v === "string" && v.length >= 5))];
}
