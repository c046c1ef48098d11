/**
 * The webhook delivery loop (push): sends the events in id order, signed, one stored message at a
 * time, and moves the cursor only on a 2xx. It runs on its own timers, so a receiver that is down or
 * slow never touches a sync; it never throws, and a store that fails is tried again later.
 */
import { createHash } from "node:crypto";
import { errorText } from "../daemon/error-text.js";
import { ConfigError } from "../errors.js";
import type { Logger, TimerClock } from "../sync/ports.js";
import { retryDelay } from "./backoff.js";
import { MAX_BATCH, type Message, pendingOf, randomTag, type TagSource } from "./message.js";
import { cutPending, type Held, heldMessage, nextMessage } from "./next-message.js";
import type { DeliveryState, EventStore, PostResult, PostWebhook } from "./ports.js";
import { type Signer, signer } from "./sign.js";
import { webhookUrlProblem } from "./webhook-url.js";

/** How often an idle loop looks for new events without being woken, in ms (1 s). */
export const IDLE_POLL_MS = 1000;

/** Why the loop waits: nothing to send, a failed attempt's backoff, or a failed store call. */
export type WaitReason = "idle" | "backoff" | "store";

export interface DeliveryOptions {
  store: EventStore;
  /** Sends one attempt (`postMessage` of events/post.ts, wired by the daemon's event sink). */
  post: PostWebhook;
  clock: TimerClock;
  logger: Logger;
  /** Stops the loop: the wait ends and an attempt in flight is cut off (its message stays pending). */
  signal: AbortSignal;
  /** `EVENTS_WEBHOOK_URL`; never logged (it may hold a token), only its origin. */
  url: string;
  /** `EVENTS_WEBHOOK_SECRET` as `parseSecrets` returns it: every message is signed with each. */
  secrets: readonly string[];
  /** Events per message, `EVENTS_WEBHOOK_BATCH` (1 to 1000). */
  batch: number;
  /** `EVENTS_WEBHOOK_ALLOW_INSECURE`: plain http beyond loopback; default false. */
  allowInsecure?: boolean | undefined;
  /** Timeout of one attempt, ms (default 10 s). */
  timeoutMs?: number | undefined;
  /** Uniform in [0, 1), the backoff's jitter (default Math.random). */
  random?: (() => number) | undefined;
  /** The random part of each new message's webhook-id, 8 hex chars (default `randomTag`, node:crypto). */
  tag?: TagSource | undefined;
  /** Told each time the loop starts to wait, and for how long in ms: for tests and metrics. */
  onWait?: ((ms: number, why: WaitReason) => void) | undefined;
}

/** A running delivery loop. */
export interface Delivery {
  /** Look for events now (a page committed); harmless at any time, also after the loop stopped. */
  wake(): void;
  /** Resolves once the loop has stopped after `signal` aborted; never rejects. */
  stopped: Promise<void>;
}

interface Ctx extends DeliveryOptions {
  sign: Signer;
  endpoint: string;
  origin: string;
  random: () => number;
  tag: TagSource;
  /** The checks made once a start (the endpoint, the pending message's size) are done. */
  startChecked: boolean;
  woken: boolean;
  interrupt: (() => void) | undefined;
  /** What the write after a 2xx returned and stored as pending: the next turn sends it unread. */
  held: Held | undefined;
}

interface Wait {
  ms: number;
  why: WaitReason;
}

/**
 * Starts the loop for the lease holder. Throws a ConfigError at once for a URL events may not go to
 * (plain http beyond loopback without `allowInsecure`) or an unusable secret; nothing is sent then.
 */
export function startDelivery(options: DeliveryOptions): Delivery {
  const problem = webhookUrlProblem(options.url, options.allowInsecure ?? false);
  if (problem) throw new ConfigError(problem, { hint: "set EVENTS_WEBHOOK_URL to the receiver's https URL" });
  const ctx: Ctx = {
    ...options,
    batch: Math.min(MAX_BATCH, Math.max(1, Math.trunc(options.batch) || 1)),
    sign: signer(options.secrets),
    // The URL itself may hold a token: the database keeps a hash, the logs the origin.
    endpoint: createHash("sha256").update(options.url).digest("hex"),
    origin: new URL(options.url).origin,
    random: options.random ?? Math.random,
    tag: options.tag ?? randomTag,
    startChecked: false,
    woken: false,
    interrupt: undefined,
    held: undefined,
  };
  const stopped = run(ctx).catch((err) => {
    ctx.logger.error({ error: errorText(err) }, "webhook delivery stopped on an unexpected error");
  });
  return {
    wake() {
      ctx.woken = true;
      ctx.interrupt?.();
    },
    stopped,
  };
}

async function run(ctx: Ctx): Promise<void> {
  ctx.logger.info({ webhook: ctx.origin, batch: ctx.batch }, "webhook delivery started");
  let failures = 0;
  while (!ctx.signal.aborted) {
    ctx.woken = false;
    let wait: Wait;
    try {
      wait = await step(ctx);
      failures = 0;
    } catch (err) {
      failures++;
      const ms = retryDelay(failures, undefined, ctx.clock.now(), ctx.random);
      const error = errorText(err);
      ctx.logger.error({ error, failures }, `webhook delivery: ${error}; trying again in ${ms} ms`);
      wait = { ms, why: "store" };
    }
    // A wake during the step may have news the step did not see: look again at once. Not after a
    // store failure: page commits would turn its backoff into a retry (and an error line) each.
    const skip = ctx.woken && wait.why !== "store";
    if (wait.ms > 0 && !skip && !ctx.signal.aborted) await pause(ctx, wait);
  }
  ctx.logger.info({ webhook: ctx.origin }, "webhook delivery stopped");
}

/** Waits `wait.ms` on the clock, or until stopped, or woken (unless the store failed). */
function pause(ctx: Ctx, wait: Wait): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      cancel();
      ctx.signal.removeEventListener("abort", done);
      ctx.interrupt = undefined;
      resolve();
    };
    const cancel = ctx.clock.setTimeout(done, wait.ms);
    ctx.signal.addEventListener("abort", done, { once: true });
    if (wait.why !== "store") ctx.interrupt = done;
    ctx.onWait?.(wait.ms, wait.why);
  });
}

/** One turn: sends the next message if one is due; returns how long to wait before the next turn. */
async function step(ctx: Ctx): Promise<Wait> {
  const { held } = ctx;
  ctx.held = undefined;
  let state = held?.state ?? (await ctx.store.readDelivery());
  if (!ctx.startChecked) {
    state = await checkPendingSize(ctx, await checkEndpoint(ctx, state));
    ctx.startChecked = true;
  }
  const due = state.nextAttemptAt ? Date.parse(state.nextAttemptAt) - ctx.clock.now().getTime() : 0;
  if (due > 0) return { ms: due, why: "backoff" };
  const now = ctx.clock.now().toISOString();
  const chosen =
    heldMessage(held, state) ?? (await nextMessage(ctx.store, state, ctx.batch, now, ctx.logger, ctx.tag));
  if (!chosen) return { ms: IDLE_POLL_MS, why: "idle" };
  const { message } = chosen;
  let attempts = state.attempts;
  // Whether a replay waited at the last write before this attempt; unknown without one.
  let replays = held?.state.replayWaiting;
  if (chosen.fresh) {
    // Fixed before the first attempt: a retry, also after a kill, resends this id and body.
    const change = { pending: pendingOf(message), attempts: 0, nextAttemptAt: null };
    replays = (await ctx.store.saveDelivery(change)).replayWaiting;
    attempts = 0;
  }
  const result = await send(ctx, message);
  // Stopped mid-attempt: not the receiver's failure; the message stays pending for the next start.
  if (ctx.signal.aborted) return { ms: 0, why: "idle" };
  if (result.ok) {
    await delivered(ctx, state, message, replays ?? true);
    return { ms: 0, why: "idle" };
  }
  if (result.status === 413 && (await tooLarge(ctx, message, result))) return { ms: 0, why: "idle" };
  return failed(ctx, message, attempts + 1, result);
}

function send(ctx: Ctx, message: Message): Promise<PostResult> {
  // The spec signs id.timestamp.body with the attempt's time; receivers refuse stale timestamps.
  const at = ctx.clock.now();
  return ctx.post({
    url: ctx.url,
    body: message.body,
    headers: {
      "webhook-id": message.id,
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": ctx.sign(message.id, at, message.body),
    },
    timeoutMs: ctx.timeoutMs,
    allowInsecure: ctx.allowInsecure,
    signal: ctx.signal,
  });
}

/**
 * Records a 2xx. After a live message, the next message is chosen first and stored as pending in the
 * same write that moves the cursor (the store keeps the cursor from moving back, should the cap have
 * moved it past): a backlog costs a read of events and a write a message. Replays are looked for
 * when the last write said one waits (`replays`): one asked for mid-attempt goes a message later.
 */
async function delivered(ctx: Ctx, state: DeliveryState, message: Message, replays: boolean) {
  const at = ctx.clock.now().toISOString();
  const done = { pending: null, attempts: 0, nextAttemptAt: null, lastDeliveredAt: at };
  if (message.replay !== null) await ctx.store.advanceReplay(message.replay, message.last + 1, at, done);
  else {
    const sent = { ...state, ...done, cursor: Math.max(state.cursor, message.last) };
    const next = await nextMessage(ctx.store, sent, ctx.batch, at, ctx.logger, ctx.tag, replays);
    const pending = next && pendingOf(next.message);
    const after = await ctx.store.saveDelivery({ ...done, pending, cursor: message.last });
    if (next) ctx.held = { state: after, message: next.message };
  }
  ctx.logger.debug({ webhookId: message.id, first: message.first, last: message.last }, "webhook delivered");
}

async function failed(ctx: Ctx, message: Message, attempts: number, result: PostResult & { ok: false }) {
  const now = ctx.clock.now();
  const ms = retryDelay(attempts, result.retryAfter, now, ctx.random);
  await ctx.store.saveDelivery({
    attempts,
    lastError: result.error,
    lastErrorAt: now.toISOString(),
    nextAttemptAt: new Date(now.getTime() + ms).toISOString(),
  });
  // A 413 on a message of several events was cut in half instead (`tooLarge`).
  const refused =
    result.status === 413 && message.first === message.last
      ? `; the receiver refuses even one event (${Buffer.byteLength(message.body)} bytes): raise its body limit`
      : "";
  ctx.logger.warn(
    { webhookId: message.id, attempts, status: result.status, retryInMs: ms },
    `webhook delivery failed: ${result.error}${refused}; attempt ${attempts + 1} in ${Math.ceil(ms / 1000)} s`,
  );
  return { ms, why: "backoff" } satisfies Wait;
}

/** Records the endpoint's hash; a changed one keeps the cursor (the stream continues) and says so. */
async function checkEndpoint(ctx: Ctx, state: DeliveryState): Promise<DeliveryState> {
  if (state.endpoint !== ctx.endpoint) {
    const change: Partial<DeliveryState> = { endpoint: ctx.endpoint };
    if (state.endpoint !== null) {
      // The old receiver's backoff says nothing about the new one.
      Object.assign(change, { attempts: 0, nextAttemptAt: null });
      ctx.logger.warn(
        { cursor: state.cursor, webhook: ctx.origin },
        `EVENTS_WEBHOOK_URL changed: the new endpoint gets the stream after event ${state.cursor}, ` +
          "not what went before; `booking-sync events replay --from 1` sends it the history",
      );
    }
    await ctx.store.saveDelivery(change);
    state = { ...state, ...change };
  }
  return state;
}

/**
 * A 413 proves the receiver did not take `message`: when it holds more than one event, its first
 * half replaces it as the pending message, sent at once, and the rest follows. False when it holds
 * one event (or its events are gone): then it is retried as any failure.
 */
async function tooLarge(ctx: Ctx, message: Message, result: PostResult & { ok: false }): Promise<boolean> {
  const { cursor } = await ctx.store.readDelivery();
  return cutPending(ctx.store, ctx.logger, {
    pending: message,
    cursor,
    keep: (held) => Math.ceil(held / 2),
    why:
      `the receiver answered HTTP 413 to its ${Buffer.byteLength(message.body)} bytes, so it did not take it; ` +
      "raise the receiver's body limit to EVENTS_WEBHOOK_BATCH events (~300 bytes each) or lower EVENTS_WEBHOOK_BATCH",
    change: { lastError: result.error, lastErrorAt: ctx.clock.now().toISOString() },
    tag: ctx.tag,
  });
}

/**
 * An operator lowers `EVENTS_WEBHOOK_BATCH` to get past a receiver refusing big messages: a stored
 * pending message larger than that is rebuilt at the batch size on start, instead of resent as is.
 */
async function checkPendingSize(ctx: Ctx, state: DeliveryState): Promise<DeliveryState> {
  if (!state.pending) return state;
  const cut = await cutPending(ctx.store, ctx.logger, {
    pending: state.pending,
    cursor: state.cursor,
    keep: () => ctx.batch,
    why:
      `EVENTS_WEBHOOK_BATCH (${ctx.batch}) is smaller than it; a receiver that had in fact taken ` +
      `${state.pending.id} gets its events again under a new webhook-id (the same event ids, so it can tell)`,
    tag: ctx.tag,
  });
  return cut ? ctx.store.readDelivery() : state;
}
