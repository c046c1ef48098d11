/** GET /events on the daemon's real HTTP endpoint over a real mirror's events, for tests on either backend. */
import type { EventStore } from "../../src/events/ports.js";
import { http } from "./daemon-process.js";
import { afterTest } from "./delivery-harness.js";
import { fixedClock } from "./fakes.js";
import { serveStatusPage } from "./status-page.js";

/** Serves `store` on 127.0.0.1 (port 0) until the test ends; GET /events with `query` ("?after=…"). */
export async function eventsEndpoint(store: EventStore) {
  const clock = fixedClock(Date.parse("2026-11-27T10:00:00.000Z"));
  const { server } = await serveStatusPage(undefined, { events: { store, clock } });
  afterTest(() => server.close());
  return (query: string) => http(`http://127.0.0.1:${server.port}/events${query}`);
}
