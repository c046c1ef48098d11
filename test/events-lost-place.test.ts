/**
 * A consumer never silently loses its place when the mirror is made again (its event ids start
 * over at 1), on both databases: a place past every id the mirror has given, or a stream not its
 * own, is refused by GET /events (409) and `booking-sync events` (exit 1, the build as a
 * subprocess), each saying to read again from 0. Pruning every event does not lower the ids given.
 */
import { expect, it } from "vitest";
import { dbEnv } from "./support/db-env.js";
import { afterTest } from "./support/delivery-harness.js";
import { eventMirror } from "./support/event-mirror.js";
import { eventsEndpoint } from "./support/events-endpoint.js";
import { runCli } from "./support/harness.js";
import { describeBackends } from "./support/postgres.js";

const AGAIN = "read again from after 0";

describeBackends("a consumer's place in a mirror made again", (backend) => {
  it("stays valid when every event is pruned: the ids given are remembered", async () => {
    const m = await eventMirror(backend);
    afterTest(() => m.close());
    await m.append(5);
    await m.events.pruneEvents("2100-01-01T00:00:00.000Z", 1000, false, "2026-11-27T11:00:00.000Z");
    expect(await m.events.readEvents(0, 10)).toEqual([]);
    const bounds = await m.events.bounds();
    expect(bounds).toMatchObject({ first: 0, assigned: 5 });
    expect(bounds.stream).toMatch(/^[0-9a-f]{32}$/);
    const get = await eventsEndpoint(m.events);
    expect((await get(`?after=5&stream=${bounds.stream}`)).json).toEqual({
      events: [],
      last: 5,
      first: 0,
      stream: bounds.stream,
    });
    expect((await get("?after=6")).status).toBe(409);
    expect(await m.append(1)).toEqual([6]);
  });

  it("is refused by GET /events and booking-sync events, past the ids given or in another stream", async () => {
    const old = await eventMirror(backend);
    afterTest(() => old.close());
    await old.append(8);
    const oldStream = (await old.events.bounds()).stream;
    // The mirror made again: a new database, its ids from 1, under another identity.
    const m = await eventMirror(backend);
    afterTest(() => m.close());
    await m.append(3);
    const { stream } = await m.events.bounds();
    expect(stream).not.toBe(oldStream);

    const get = await eventsEndpoint(m.events);
    const beyond = await get("?after=8&wait=60");
    expect(beyond.status).toBe(409);
    expect(beyond.json).toMatchObject({ first: 1, stream });
    expect(String(beyond.json?.error)).toMatch(
      /^after 8 is beyond the newest event id this mirror has given, 3: /,
    );
    expect(String(beyond.json?.error)).toContain(AGAIN);
    // Behind the new stream's end, the place alone cannot tell: its stream does.
    const other = await get(`?after=2&stream=${oldStream}`);
    expect(other.status).toBe(409);
    expect(String(other.json?.error)).toContain(
      `stream ${oldStream} is not this mirror's events stream (${stream})`,
    );
    expect((await get(`?after=2&stream=${stream}`)).json?.last).toBe(3);

    const env = dbEnv(backend.kind, m.location);
    for (const args of [
      ["--after", "8"],
      ["--after", "2", "--stream", String(oldStream)],
    ]) {
      const refused = await runCli(["events", ...args], env);
      expect(refused, args.join(" ")).toMatchObject({ code: 1, stdout: "" });
      expect(refused.stderr, args.join(" ")).toMatch(new RegExp(`^booking-sync: .+; ${AGAIN}\\n$`));
    }
    const resumed = await runCli(["events", "--after", "2", "--stream", String(stream)], env);
    expect(resumed).toMatchObject({
      code: 0,
      stderr: `booking-sync: events stream ${stream}: resume with --after <the last id read> --stream ${stream}\n`,
    });
    expect(resumed.stdout).toMatch(/^\{"id":3,/);
  });
});
