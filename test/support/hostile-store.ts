/**
 * The hostile scenarios on either database: each row of support/hostile-scenarios.ts played with the
 * CLI's `main` in this process (support/cli-in-process.ts) against the hostile server over real
 * HTTP, on a fresh SQLite file and a fresh PostgreSQL database. On SQLite the rows marked `cli` run
 * through the built CLI instead (hostile.e2e.test.ts); rows with a huge answer, about the process's
 * memory rather than the store, only there.
 */
import { afterEach, expect, it } from "vitest";
import { runCliInProcess } from "./cli-in-process.js";
import { databaseEnv, hostileEnv, readMirror } from "./hostile-run.js";
import { play, type Scenario, SEED, startCount } from "./hostile-scenarios.js";
import { startHostileServer } from "./hostile-server.js";
import { describeBackends } from "./postgres.js";

/** Declares the suite for the rows `rows` of the table, once per backend. */
export function describeHostileStore(title: string, rows: Scenario[]): void {
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await cleanup?.();
    cleanup = undefined;
  });
  describeBackends(title, (backend) => {
    const here = rows.filter((s) => !s.huge && (backend.kind === "postgres" || !s.cli));
    it("has rows to play", () => expect(here.length).toBeGreaterThan(0));
    it.each(here.map((s) => [s.name, s] as const))(
      "%s",
      async (_name, s) => {
        const location = await backend.url();
        const server = await startHostileServer({ seed: SEED, count: startCount(s), ...s.server });
        cleanup = () => server.close();
        const db = databaseEnv(backend.kind, location);
        await play(s, {
          server,
          cli: (command) => runCliInProcess([command], hostileEnv(server, location, { ...db, ...s.env })),
          read: () => readMirror(location, backend.kind),
          tag: `[${s.name}; seed ${SEED}; ${backend.kind}, in-process]`,
        });
      },
      300_000,
    );
  });
}
