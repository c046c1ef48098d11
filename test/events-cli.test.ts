/**
 * `booking-sync events` and `events replay` as users run them: the build in a subprocess, on each
 * backend, against a mirror filled by a real sync from the simulator; what they print checked
 * against the rows on a connection of the test's own.
 */
import type { ChildProcess } from "node:child_process";
import { afterEach, expect, it } from "vitest";
import { servedEvent } from "../src/events/message.js";
import { dbEnv } from "./support/db-env.js";
import { runCli } from "./support/harness.js";
import { type MirrorHarness, mirrorHarness } from "./support/mirror-harness.js";
import { type Backend, describeBackends } from "./support/postgres.js";

let h: MirrorHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describeBackends("booking-sync events", (backend) => {
  async function start(bookings: number) {
    let location = "";
    const recorded: Backend = { kind: backend.kind, url: async () => (location = await backend.url()) };
    const mirror = await mirrorHarness(recorded, { bookings });
    h = mirror;
    const env = dbEnv(backend.kind, location);
    const cli = (args: string[], onSpawn?: (child: ChildProcess) => void) => runCli(args, env, onSpawn);
    /** Every event as served, read from the table by SQL and served by the one rule (`servedEvent`). */
    const served = async () =>
      (
        await mirror.query<{ id: number; type: string; booking_id: string; at: string; data: string }>(
          "SELECT id, type, booking_id, at, data FROM booking_events ORDER BY id",
        )
      ).map((r) => servedEvent({ ...r, id: Number(r.id), bookingId: r.booking_id }));
    /** What `events` says on stderr at start: the stream to resume in. */
    const streamLine = async () => {
      const [row] = await mirror.query<{ id: string }>("SELECT id FROM event_stream");
      return `booking-sync: events stream ${row?.id}: resume with --after <the last id read> --stream ${row?.id}\n`;
    };
    return { h: mirror, cli, served, streamLine };
  }

  it("prints every event kept after --after, one JSON line each, byte for byte as stored; --limit caps them", async () => {
    const { h, cli, served, streamLine } = await start(40);
    expect((await h.sync()).status).toBe("success");
    const all = await served();
    // A cold fill: one booking.created per booking mirrored.
    expect(all.map((line) => JSON.parse(line).bookingId).sort()).toEqual(await h.mirrorIds());
    const every = await cli(["events", "--after", "0"]);
    expect(every).toMatchObject({ code: 0, stderr: await streamLine() });
    expect(every.stdout).toBe(`${all.join("\n")}\n`);
    const some = await cli(["events", "--after", "10", "--limit", "5"]);
    expect(some.stdout).toBe(`${all.slice(10, 15).join("\n")}\n`);
    expect((await cli(["events", "--after", String(all.length)])).stdout).toBe("");
    const bad = await cli(["events", "--after", "-3"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--after");
  });

  it("--follow prints what a later sync commits (another process), then exits 0 on Ctrl-C", async () => {
    const { h, cli, served, streamLine } = await start(20);
    expect((await h.sync()).status).toBe("success");
    let printed = "";
    let synced: Promise<unknown> | undefined;
    const lines = () => printed.split("\n").length - 1;
    const following = cli(["events", "--after", "0", "--follow"], (child) =>
      child.stdout?.on("data", (d) => {
        printed += d;
        // What was there is printed: the follower now waits for more, and a sync brings it.
        if (lines() === 20 && !synced) {
          h.sim.insert(5);
          synced = h.sync();
        }
        if (lines() === 25) child.kill("SIGINT");
      }),
    );
    const done = await following;
    expect(await synced).toMatchObject({ status: "success", inserted: 5 });
    expect(done).toMatchObject({ code: 0, signal: null, stderr: await streamLine() });
    expect(done.stdout).toBe(`${(await served()).join("\n")}\n`);
  });

  it("replay records the range asked (to defaults to the last event) and refuses an empty or unknown one (exit 2)", async () => {
    const { h, cli } = await start(12);
    expect((await h.sync()).status).toBe("success");
    const asked = await cli(["events", "replay", "--from", "3", "--to", "7"]);
    expect(asked).toMatchObject({ code: 0, stderr: "" });
    expect(asked.stdout).toContain("replay 1 queued: events 3 to 7");
    const rest = await cli(["events", "replay", "--from", "9"]);
    expect(rest.stdout).toContain("replay 2 queued: events 9 to 12");
    for (const args of [["--from", "7", "--to", "3"], ["--from", "1", "--to", "13"], ["--from", "13"], []]) {
      const refused = await cli(["events", "replay", ...args]);
      expect(refused.code, args.join(" ")).toBe(2);
      expect(refused.stderr, args.join(" ")).toMatch(/^booking-sync: .+\nTry: booking-sync events replay/);
    }
    const rows = await h.query<{
      from_id: number;
      to_id: number;
      next_id: number;
      finished_at: string | null;
    }>("SELECT from_id, to_id, next_id, finished_at FROM event_replays ORDER BY id");
    expect(rows.map((r) => [Number(r.from_id), Number(r.to_id), Number(r.next_id), r.finished_at])).toEqual([
      [3, 7, 3, null],
      [9, 12, 9, null],
    ]);
  });
});
