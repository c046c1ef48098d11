/**
 * booking-sync against a hostile source through the built CLI, a subprocess, with a real SQLite
 * file: the rows of support/hostile-scenarios.ts marked `cli`, for what only the process shows (its
 * exit code and stderr as a user sees them, its memory under a huge answer). Every other row, and
 * these on PostgreSQL, run with the CLI's `main` in-process in hostile-store-feed.test.ts and
 * hostile-store-list.test.ts. HOSTILE_CLI runs another build. Then: the hostile server itself keeps
 * the partner API's contract when healthy.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { hostileEnv, readMirror, runCli } from "./support/hostile-run.js";
import { play, SCENARIOS, SEED, sharingMilliseconds, startCount } from "./support/hostile-scenarios.js";
import { type HostileOptions, type HostileServer, startHostileServer } from "./support/hostile-server.js";

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

describe("booking-sync never silently loses a booking to a misbehaving source (the built CLI)", () => {
  const rows = SCENARIOS.filter((s) => s.cli);
  it.each(rows.map((s) => [s.name, s] as const))(
    "%s",
    async (_name, s) => {
      const dir = mkdtempSync(join(tmpdir(), "booking-sync-hostile-"));
      const dbPath = join(dir, "bookings.db");
      const server = await startHostileServer({ seed: SEED, count: startCount(s), ...s.server });
      cleanup = async () => {
        await server.close();
        rmSync(dir, { recursive: true, force: true });
      };
      await play(s, {
        server,
        cli: (command) => runCli([command], hostileEnv(server, dbPath, s.env)),
        read: () => readMirror(dbPath),
        tag: `[${s.name}; seed ${SEED}; the built CLI]`,
      });
    },
    300_000,
  );
});

describe("the hostile server, healthy, follows the contract", () => {
  interface Answer {
    status: number;
    body: {
      success: boolean;
      message?: string;
      data: {
        bookings: Array<{ _id: string; createdAt: string }>;
        nextCursor: string | null;
        hasMore: boolean;
      };
      pagination?: { total: number; page: number; pageSize: number; totalPages: number };
    };
  }
  const get = async (server: HostileServer, path: string, token = server.token): Promise<Answer> => {
    const res = await fetch(`${server.url}/partner/booking/${path}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    return { status: res.status, body: (await res.json()) as Answer["body"] };
  };
  const start = async (options: Partial<HostileOptions> = {}) => {
    const server = await startHostileServer({ seed: SEED, count: 250, ...options });
    cleanup = () => server.close();
    return server;
  };

  it("asks for the token, and walking nextCursor (exclusive) reads every booking once, newest first", async () => {
    const server = await start();
    expect((await get(server, "fetch-recent-bookings", "wrong")).status).toBe(401);
    const refused = await get(server, "list-bookings", "wrong");
    expect(refused.body).toMatchObject({ success: false, message: "Invalid or expired token" });
    const seen: string[] = [];
    let cursor = "";
    for (let more = true; more; ) {
      const { data } = (await get(server, `fetch-recent-bookings?limit=100${cursor}`)).body;
      const times = data.bookings.map((b) => b.createdAt);
      expect(times).toEqual([...times].sort().reverse());
      expect(data.nextCursor).toBe(times.at(-1) ?? null);
      seen.push(...data.bookings.map((b) => b._id));
      [more, cursor] = [data.hasMore, `&cursor=${data.nextCursor}`];
    }
    expect(seen).toEqual(server.data.newestFirst().map((b) => b.id));
  });

  it("pages list-bookings newest first with the contract's pagination", async () => {
    const server = await start();
    const answer = await get(server, "list-bookings?page=3&pageSize=100");
    expect(answer.body.pagination).toEqual({ total: 250, page: 3, pageSize: 100, totalPages: 3 });
    const ids = (answer.body.data as unknown as Array<{ _id: string }>).map((b) => b._id);
    expect(ids).toEqual(
      server.data
        .newestFirst()
        .slice(200)
        .map((b) => b.id),
    );
  });

  it("writes microseconds, compares an inclusive cursor at full precision, and fires a fault once", async () => {
    const server = await start({ precision: "us", cursor: "inclusive", trueUsOf: sharingMilliseconds() });
    const first = (await get(server, "fetch-recent-bookings?limit=10")).body.data;
    expect(first.bookings[0]?.createdAt).toMatch(/\.\d{6}Z$/);
    const next = (await get(server, `fetch-recent-bookings?limit=10&cursor=${first.nextCursor}`)).body.data;
    expect(next.bookings[0]?._id).toBe(first.bookings.at(-1)?._id);
    server.setFault("emptyPage", { page: 2 });
    const counts = [];
    for (let k = 0; k < 3; k++)
      counts.push((await get(server, "fetch-recent-bookings?limit=5")).body.data.bookings.length);
    expect(counts).toEqual([5, 0, 5]);
    expect(server.fired("emptyPage")).toBe(1);
  });
});
