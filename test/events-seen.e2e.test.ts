/**
 * The events stream as an operator sees it through the real daemon (`booking-sync run`, the build):
 * its status page and /metrics while a receiver on 127.0.0.1 fails every message, then once it takes
 * them, on either database; the figures against our own SQL. Run `npm run build` first.
 */
import { afterEach, expect, it } from "vitest";
import { parsePrometheusText, sampleValue } from "./daemon-prom-text.js";
import { type DaemonProcess, http } from "./support/daemon-process.js";
import { type BackendKind, describeBackends } from "./support/postgres.js";
import { type PushRig, pushRig, synced } from "./support/push-rig.js";
import { figure } from "./support/status-page.js";

let rig: PushRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const SINK = { sink: "webhook" };
const count = (n: number) => n.toLocaleString("en-US");

/** The daemon's /metrics, parsed, and its status page. */
async function seen(url: string) {
  const metrics = parsePrometheusText((await http(`${url}/metrics`)).text);
  const page = (await http(`${url}/`)).text;
  const value = (name: string, labels: Record<string, string> = SINK) =>
    sampleValue(metrics, `booking_sync_events_${name}`, labels);
  return { page, value };
}

/** The rig on `kind`: the harness's SQLite file, or a fresh PostgreSQL database. */
async function rigOn(kind: BackendKind, url: () => Promise<string>): Promise<PushRig> {
  return pushRig({ bookings: 80, pageSize: 40, ...(kind === "postgres" ? { dbUrl: await url() } : {}) });
}

describeBackends("the events stream on the status page and /metrics", (backend) => {
  it("shows the lag and the last error while the receiver fails, and lag 0 once it takes everything", async () => {
    rig = await rigOn(backend.kind, backend.url);
    const { rx, db } = rig;
    rx.answer({ status: 500, body: "receiver down for maintenance" });
    const { d, url } = await rig.daemon({ LOG_LEVEL: "debug" });
    await d.waitForLog(synced, "the start-up sync");
    // Logged after the failure is stored.
    await d.waitForLog((l) => String(l.msg).startsWith("webhook delivery failed"), "a failed delivery");
    const [stream] = await db.rows<{ last: number; first: string }>(
      "SELECT CAST(max(id) AS integer) AS last, min(at) AS first FROM booking_events",
    );
    const last = Number(stream?.last);
    expect(last).toBe(80); // one booking.created per booking

    const failing = await seen(url);
    const waited = (Date.now() - Date.parse(stream?.first ?? "")) / 1000;
    expect(failing.value("last_id", {})).toBe(last);
    expect(failing.value("delivered_id")).toBe(0);
    expect(failing.value("lag_events")).toBe(last);
    // Seconds since event 1 was recorded, as of the scrape (status-backends checks it exactly).
    expect(failing.value("lag_seconds")).toBeLessThanOrEqual(Math.ceil(waited) + 1);
    expect(failing.value("dropped_total")).toBe(0);
    expect(failing.value("failed_attempts")).toBeGreaterThanOrEqual(1);
    const [state] = await db.rows<{ last_error: string }>("SELECT last_error FROM event_delivery");
    expect(state?.last_error).toMatch(/500/);
    expect(figure(failing.page, "events-last-id")).toBe(count(last));
    expect(figure(failing.page, "events-cursor")).toBe("0");
    expect(figure(failing.page, "events-lag-events")).toBe(count(last));
    expect(figure(failing.page, "events-last-error")).toBe(state?.last_error);
    expect(figure(failing.page, "events-next-attempt")).toMatch(/ UTC$/);
    expect(figure(failing.page, "events-dropped")).toBeUndefined();

    rx.answer({});
    await d.waitForLog((l) => l.msg === "webhook delivered" && l.last === last, "the last event delivered");
    await stop(d);
    // A daemon started afterwards shows the same: the figures are the database's, not a process's
    // (and its page is read fresh, where the first daemon's reuses a read for a few seconds).
    const next = await rig.daemon();
    await next.d.waitForLog(synced, "the second daemon's start-up sync");
    const caught = await seen(next.url);
    expect(caught.value("last_id", {})).toBe(last);
    expect(caught.value("delivered_id")).toBe(last);
    expect(caught.value("lag_events")).toBe(0);
    expect(caught.value("lag_seconds")).toBe(0);
    expect(caught.value("failed_attempts")).toBe(0);
    expect(figure(caught.page, "events-cursor")).toBe(count(last));
    expect(figure(caught.page, "events-lag-events")).toBe("0");
    expect(figure(caught.page, "events-next-attempt")).toBeUndefined();
    await stop(next.d);
  });
});

async function stop(d: DaemonProcess): Promise<void> {
  d.child.kill("SIGTERM");
  expect((await d.exited).code).toBe(0);
}
