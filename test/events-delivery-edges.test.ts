/**
 * The webhook delivery loop at its edges: secret rotation, redirects, plain http, a changed URL, a
 * failing store, a slow receiver, a stop mid-attempt, a receiver refusing big bodies (413) and a
 * lowered batch. Real HTTP on 127.0.0.1, a test clock.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../src/errors.js";
import { startDelivery } from "../src/events/deliver.js";
import { postMessage } from "../src/events/post.js";
import { signer } from "../src/events/sign.js";
import { afterTest, deliveryLoop, realTimeClock, receiver } from "./support/delivery-harness.js";
import { memoryLogger } from "./support/fakes.js";
import { memoryEventStore } from "./support/memory-event-store.js";
import { untagged } from "./support/webhook-ids.js";
import { startWebhookReceiver, testSecret } from "./support/webhook-receiver.js";

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** A receiver that answers 413 to a body over `maxBodyBytes`, as express.text's `limit` does. */
async function cappedReceiver(maxBodyBytes: number) {
  const rx = await startWebhookReceiver({ secrets: [testSecret(1)], maxBodyBytes });
  afterTest(() => rx.close());
  return rx;
}

/** Headers the receiver verifies, for a body sent by hand. */
async function signedHeaders(body: string): Promise<Record<string, string>> {
  const at = new Date();
  return {
    "webhook-id": "msg_0_0",
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": signer([testSecret(1)])("msg_0_0", at, body),
  };
}

describe("webhook delivery, edges", () => {
  it("signs with every secret during a rotation: a receiver knowing either one verifies", async () => {
    const store = memoryEventStore();
    store.append({}, {});
    const both = await receiver([testSecret(1), testSecret(2)]);
    const newOnly = await receiver([testSecret(2)]);
    const rotating = { secrets: [testSecret(1), testSecret(2)] };
    const loops = [deliveryLoop(store, both.url, rotating)];
    await loops[0]?.settled("idle");
    await loops[0]?.stop();
    const again = memoryEventStore();
    again.append({}, {});
    loops.push(deliveryLoop(again, newOnly.url, rotating));
    await loops[1]?.settled("idle");
    expect(both.requests.map((r) => r.verifiedBy)).toEqual([[0, 1]]);
    expect(newOnly.requests.map((r) => r.verifiedBy)).toEqual([[0]]);
    expect([...both.rejected, ...newOnly.rejected]).toEqual([]);
  });

  it("counts a message no secret of the receiver verifies as failed (the receiver really checks)", async () => {
    const store = memoryEventStore();
    store.append({});
    const stranger = await receiver([testSecret(9)]);
    const loop = deliveryLoop(store, stranger.url);
    await loop.settled("backoff");
    expect(stranger.rejected.map((r) => ({ ...r, id: untagged(r.id ?? "") }))).toEqual([
      { id: "msg_1_1", reason: "secret 0: No matching signature found" },
    ]);
    expect((await store.readDelivery()).lastError).toContain("HTTP 401");
  });

  it("follows no redirect: a 3xx is a failure naming where it pointed", async () => {
    const store = memoryEventStore();
    store.append({});
    const elsewhere = await receiver();
    const rx = await receiver();
    rx.answer({ status: 307, redirect: `${elsewhere.url}?token=abc` });
    const loop = deliveryLoop(store, rx.url);
    await loop.settled("backoff");
    expect(elsewhere.requests).toEqual([]);
    expect(elsewhere.rejected).toEqual([]);
    const state = await store.readDelivery();
    expect(state).toMatchObject({ cursor: 0, attempts: 1 });
    expect(state.lastError).toBe(
      `the webhook at ${rx.origin} answered a redirect to ${elsewhere.origin} (HTTP 307 Temporary Redirect), ` +
        "which booking-sync never follows: set EVENTS_WEBHOOK_URL to the final address",
    );
  });

  it("refuses plain http beyond loopback unless allowed, before anything is sent", async () => {
    const options = {
      store: memoryEventStore(),
      post: postMessage,
      clock: realTimeClock(),
      logger: memoryLogger(),
      signal: AbortSignal.abort(),
      secrets: [testSecret(1)],
      batch: 10,
    };
    const url = "http://192.0.2.10/hooks?token=abc";
    expect(() => startDelivery({ ...options, url })).toThrow(ConfigError);
    expect(() => startDelivery({ ...options, url })).toThrow(/events go over https only/);
    await startDelivery({ ...options, url, allowInsecure: true }).stopped;
    await startDelivery({ ...options, url: "https://192.0.2.10/hooks" }).stopped;
    const posted = await postMessage({ url, body: "{}", headers: {} });
    expect(posted).toMatchObject({ ok: false, status: undefined });
    expect(posted.ok || posted.error).not.toContain("token=abc");
  });

  it("keeps the cursor when EVENTS_WEBHOOK_URL changes, and says so", async () => {
    const store = memoryEventStore();
    store.append({}, {}, {});
    const before = await receiver();
    const first = deliveryLoop(store, before.url);
    await first.settled("idle");
    expect(first.logger.lines.filter((l) => l.level === "warn")).toEqual([]);
    await first.stop();

    store.append({}, {});
    const after = await receiver();
    const second = deliveryLoop(store, after.url);
    await second.settled("idle");
    expect(after.eventIds()).toEqual([4, 5]);
    expect(before.eventIds()).toEqual([1, 2, 3]);
    const warning = second.logger.lines.find((l) => l.level === "warn")?.msg;
    expect(warning).toContain("EVENTS_WEBHOOK_URL changed: the new endpoint gets the stream after event 3");
    expect(warning).not.toContain(after.url);
    const state = await store.readDelivery();
    expect(state.endpoint).toBe(createHash("sha256").update(after.url).digest("hex"));
  });

  it("never throws out of the loop: a failing store is logged and tried again later", async () => {
    const store = memoryEventStore();
    store.append({}, {});
    let failing = true;
    const flaky = {
      ...store,
      readDelivery() {
        if (failing) throw new Error("database is locked");
        return store.readDelivery();
      },
    };
    const rx = await receiver();
    const loop = deliveryLoop(flaky, rx.url);
    const first = await loop.settled("store");
    // Pages committing do not cut the backoff short: the in-memory store answers within the same
    // turn, so a step a wake started would have reported its wait before the next macrotask.
    for (let i = 0; i < 5; i++) loop.delivery.wake();
    await new Promise((resolve) => setImmediate(resolve));
    expect(loop.waits).toHaveLength(1);
    loop.clock.advance(first.ms);
    const second = await loop.settled("store");
    expect(second.ms).toBeGreaterThanOrEqual(first.ms); // backs off, not a log line a second
    expect(loop.logger.lines.filter((l) => l.level === "error").map((l) => l.msg)).toEqual([
      `webhook delivery: database is locked; trying again in ${first.ms} ms`,
      `webhook delivery: database is locked; trying again in ${second.ms} ms`,
    ]);
    failing = false;
    loop.clock.advance(second.ms);
    await loop.settled("idle");
    expect(rx.eventIds()).toEqual([1, 2]);
  });

  it("gives up on a slow receiver after the timeout and sends the same message again", async () => {
    const store = memoryEventStore();
    store.append({});
    const rx = await receiver();
    rx.answer({ delayMs: 30_000 }, {});
    const loop = deliveryLoop(store, rx.url, { timeoutMs: 200 });
    const backoff = await loop.settled("backoff");
    expect((await store.readDelivery()).lastError).toMatch(/could not be reached: Timeout .* \(ETIMEDOUT\)$/);
    loop.clock.advance(backoff.ms);
    await loop.settled("idle");
    const id = rx.requests[0]?.id;
    expect(untagged(id ?? "")).toBe("msg_1_1");
    expect(rx.requests.map((r) => [r.id, r.status])).toEqual([
      [id, undefined],
      [id, 204],
    ]);
  });

  it("reads little of an answer: a huge body still counts by its status, and shows only its start", async () => {
    const rx = await receiver();
    const huge = `${"\u001b[2J".repeat(100)}${"x".repeat(2_000_000)}`;
    rx.answer({ status: 500, retryAfter: "7", body: huge }, { status: 200, body: huge });
    const url = rx.url;
    const failed = await postMessage({ url, body: "{}", headers: await signedHeaders("{}") });
    expect(failed).toEqual({
      ok: false,
      status: 500,
      retryAfter: "7",
      error: `the webhook at ${rx.origin} answered HTTP 500 Internal Server Error`,
    });
    expect(await postMessage({ url, body: "{}", headers: await signedHeaders("{}") })).toEqual({
      ok: true,
      status: 200,
    });
    rx.answer({ status: 500, body: "\u001b[2Jno\r\nway" });
    const small = await postMessage({ url, body: "{}", headers: await signedHeaders("{}") });
    expect(small.ok || small.error).toBe(
      `the webhook at ${rx.origin} answered HTTP 500 Internal Server Error: \\u001b[2Jno\\r\\nway`,
    );
  });

  it("stops promptly on its signal, also mid-attempt, leaving the message pending", async () => {
    const store = memoryEventStore();
    store.append({});
    const rx = await receiver();
    rx.answer({ delayMs: 30_000 });
    const loop = deliveryLoop(store, rx.url);
    await rx.waitForRequests(1);
    const started = performance.now();
    await loop.stop();
    expect(performance.now() - started).toBeLessThan(2000);
    expect(await store.readDelivery()).toMatchObject({ attempts: 0, pending: { id: rx.requests[0]?.id } });
    expect(untagged(rx.requests[0]?.id ?? "")).toBe("msg_1_1");
    loop.delivery.wake(); // harmless once stopped
    expect(loop.clock.pending()).toBe(0);
  });

  it("cuts a message refused as too large (413) in half until it fits: every event once, in order", async () => {
    const store = memoryEventStore();
    store.append(...range(1, 100).map(() => ({})));
    const rx = await cappedReceiver(3000); // about 35 of these events
    const loop = deliveryLoop(store, rx.url);
    await loop.settled("idle");
    expect(rx.eventIds()).toEqual(range(1, 100));
    expect(rx.delivered().every((m) => Buffer.byteLength(m.body) <= 3000)).toBe(true);
    expect(rx.requests.map((r) => [untagged(r.id), r.status])).toEqual([
      ["msg_1_100", 413],
      ["msg_1_50", 413],
      ["msg_1_25", 204],
      ["msg_26_100", 413],
      ["msg_26_63", 413],
      ["msg_26_44", 204],
      ["msg_45_100", 413],
      ["msg_45_72", 204],
      ["msg_73_100", 204],
    ]);
    // Sent at once: a refusal by size is no reason to wait.
    expect(loop.waits.filter((w) => w.why === "backoff")).toEqual([]);
    const warnings = loop.logger.lines.filter((l) => l.level === "warn").map((l) => l.msg);
    expect(warnings).toHaveLength(5);
    // Each cut is a new message: a new webhook-id, never one sent before.
    expect(new Set(rx.requests.map((r) => r.id)).size).toBe(9);
    expect(warnings[0]).toBe(
      `webhook message ${rx.requests[0]?.id} (100 events) is replaced by ${rx.requests[1]?.id} (its first 50, the rest in later ` +
        `messages): the receiver answered HTTP 413 to its ${Buffer.byteLength(rx.requests[0]?.body ?? "")} ` +
        "bytes, so it did not take it; raise the receiver's body limit to EVENTS_WEBHOOK_BATCH events " +
        "(~300 bytes each) or lower EVENTS_WEBHOOK_BATCH",
    );
    const lastError = `the webhook at ${rx.origin} answered HTTP 413 Payload Too Large: request entity too large`;
    expect(await store.readDelivery()).toMatchObject({ cursor: 100, pending: null, attempts: 0, lastError });

    // A replay is cut the same way, its messages keeping their replay's ids.
    await store.requestReplay(1, 60, new Date().toISOString());
    loop.delivery.wake();
    await loop.settled("idle");
    expect(rx.eventIds().slice(100)).toEqual(range(1, 60));
    const ids = rx.delivered().map((m) => untagged(m.id));
    expect(ids.slice(4)).toEqual(["msg_1_30_replay1", "msg_31_60_replay1"]);
  });

  it("retries a single event refused as too large as any failure, and says the receiver refuses even one", async () => {
    const store = memoryEventStore();
    store.append({});
    const rx = await cappedReceiver(50);
    const loop = deliveryLoop(store, rx.url);
    const backoff = await loop.settled("backoff");
    const id = rx.requests[0]?.id;
    expect(untagged(id ?? "")).toBe("msg_1_1");
    expect(await store.readDelivery()).toMatchObject({ attempts: 1, pending: { id }, cursor: 0 });
    const bytes = Buffer.byteLength(rx.requests[0]?.body ?? "");
    expect(loop.logger.lines.filter((l) => l.level === "warn").map((l) => l.msg)).toEqual([
      `webhook delivery failed: the webhook at ${rx.origin} answered HTTP 413 Payload Too Large: request ` +
        `entity too large; the receiver refuses even one event (${bytes} bytes): raise its body limit; ` +
        `attempt 2 in ${Math.ceil(backoff.ms / 1000)} s`,
    ]);
    loop.clock.advance(backoff.ms);
    await loop.settled("backoff");
    expect(rx.requests.map((r) => [r.id, r.status])).toEqual([
      [id, 413],
      [id, 413],
    ]);
  });

  it("rebuilds on start a pending message larger than a lowered EVENTS_WEBHOOK_BATCH, and warns why", async () => {
    const store = memoryEventStore();
    store.append(...range(1, 100).map(() => ({})));
    const rx = await receiver();
    rx.answer({ status: 500 });
    const first = deliveryLoop(store, rx.url);
    await first.settled("backoff");
    await first.stop();
    const stored = rx.requests[0]?.id;
    expect(untagged(stored ?? "")).toBe("msg_1_100");
    expect(await store.readDelivery()).toMatchObject({ attempts: 1, pending: { id: stored } });

    rx.answer({});
    const second = deliveryLoop(store, rx.url, { batch: 40 });
    await second.settled("idle");
    expect(rx.requests.map((r) => [untagged(r.id), r.status])).toEqual([
      ["msg_1_100", 500],
      ["msg_1_40", 204],
      ["msg_41_80", 204],
      ["msg_81_100", 204],
    ]);
    expect(rx.eventIds()).toEqual(range(1, 100));
    expect(new Set(rx.requests.map((r) => r.id)).size).toBe(4);
    expect(second.waits.filter((w) => w.why === "backoff")).toEqual([]); // a new message, a new backoff
    expect(second.logger.lines.filter((l) => l.level === "warn").map((l) => l.msg)).toEqual([
      `webhook message ${stored} (100 events) is replaced by ${rx.requests[1]?.id} (its first 40, the rest in later ` +
        "messages): EVENTS_WEBHOOK_BATCH (40) is smaller than it; a receiver that had in fact taken " +
        `${stored} gets its events again under a new webhook-id (the same event ids, so it can tell)`,
    ]);
  });
});
