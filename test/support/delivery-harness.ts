/**
 * The webhook delivery loop on a test clock, against the in-memory events port and a real receiver:
 * tests wait on the loop's own "now I wait" reports and move the clock by what it waits.
 */
import { EventEmitter, once } from "node:events";
import { afterEach } from "vitest";
import { type DeliveryOptions, startDelivery, type WaitReason } from "../../src/events/deliver.js";
import type { EventStore } from "../../src/events/ports.js";
import { postMessage } from "../../src/events/post.js";
import { createRng } from "../../src/simulator/random.js";
import { fixedClock, memoryLogger, type TestClock } from "./fakes.js";
import { startWebhookReceiver, testSecret, type WebhookReceiver } from "./webhook-receiver.js";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * Runs `cleanup` after the test, before whatever was registered earlier: a store opened before its
 * loop is closed after the loop has stopped.
 */
export function afterTest(cleanup: () => unknown): void {
  cleanups.push(cleanup);
}

/** A receiver closed after the test; it knows `secrets` (default the one the loops sign with). */
export async function receiver(secrets: string[] = [testSecret(1)]): Promise<WebhookReceiver> {
  const rx = await startWebhookReceiver({ secrets });
  cleanups.push(() => rx.close());
  return rx;
}

/**
 * A clock at the real time (whole seconds): receivers check `webhook-timestamp` against their own
 * clock (5 min either way), so a test moves it by a few minutes at most.
 */
export function realTimeClock(): TestClock {
  return fixedClock(Math.floor(Date.now() / 1000) * 1000);
}

export interface Wait {
  ms: number;
  why: WaitReason;
}

/**
 * Starts a loop signing with `testSecret(1)`, batches of 100, seeded jitter, posting through the real
 * adapter (events/post.ts) unless told; stopped after the test.
 */
export function deliveryLoop(
  store: EventStore,
  url: string,
  options: Partial<Omit<DeliveryOptions, "clock">> & { clock?: TestClock } = {},
) {
  const clock = options.clock ?? realTimeClock();
  const logger = memoryLogger();
  const controller = new AbortController();
  const waits: Wait[] = [];
  const reports = new EventEmitter();
  let consumed = 0;
  const delivery = startDelivery({
    store,
    post: postMessage,
    logger,
    signal: controller.signal,
    url,
    secrets: [testSecret(1)],
    batch: 100,
    random: createRng(7).next,
    onWait: (ms, why) => {
      waits.push({ ms, why });
      reports.emit("wait");
    },
    ...options,
    clock,
  });
  const stop = async () => {
    controller.abort();
    await delivery.stopped;
  };
  cleanups.push(stop);
  return {
    clock,
    logger,
    delivery,
    waits,
    stop,
    /** The loop's next wait for `why` this test has not taken yet: resolves once it waits. */
    async settled(why: WaitReason): Promise<Wait> {
      for (;;) {
        while (consumed < waits.length) {
          const wait = waits[consumed++] as Wait;
          if (wait.why === why) return wait;
        }
        await once(reports, "wait");
      }
    },
  };
}
