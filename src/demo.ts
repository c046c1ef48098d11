/**
 * `npm run demo`: a cold sync from the bundled simulator into ./data/demo.db, then an incremental one.
 * Its config points at the simulator, so it can never run against a real API by accident.
 */
import { rmSync } from "node:fs";
import { runAsReader, runAsWriter } from "./cli/command.js";
import { syncSummary } from "./cli/output.js";
import { syncSettings } from "./config/config.js";
import { startSimulator } from "./simulator/index.js";
import { runSync } from "./sync/run-sync.js";

const DB = "./data/demo.db";

/** Questions the views answer, printed with their answers at the end. */
const QUERIES = [
  "SELECT day, sum(bookings) AS bookings, sum(paid_bookings) AS paid, round(sum(total_amount)) AS ngn FROM daily_bookings_v GROUP BY day ORDER BY day DESC LIMIT 3",
  "SELECT carrier, service_type, count(*) AS bookings FROM bookings_v GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 3",
  "SELECT kind, stream, last_status, checkpoint, checkpoint_age_seconds, drift FROM sync_health_v",
];
const BOOKINGS = 20_000;

async function demo(): Promise<number> {
  const sim = await startSimulator({ seed: 7, bookings: BOOKINGS, tieRun: 3 });
  const say = (line: string) => process.stdout.write(`${line}\n`);
  say(`simulator: ${BOOKINGS} bookings at ${sim.url} (runs of 3 share a createdAt)`);
  for (const suffix of ["", "-wal", "-shm"]) rmSync(DB + suffix, { force: true });
  const env = {
    LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
    BOOKING_DB_PATH: DB,
    BOOKING_API_BASE_URL: sim.url,
    BOOKING_API_TOKEN: "sim-token",
  };
  try {
    const synced = await runAsWriter(
      {},
      { api: true },
      async ({ app, config, signal }) => {
        // An empty mirror is far behind: the cold run fills it in slices of time at once, with details.
        const options = { ...syncSettings(config), details: true };
        const deps = { ...app, signal };
        const cold = await runSync(deps, options);
        say(`cold:        ${syncSummary(cold)}`);
        sim.insert(42);
        const warm = await runSync(deps, options);
        say(`incremental: ${syncSummary(warm)}`);
        const again = await runSync(deps, options);
        say(`again:       ${syncSummary(again)}`);
        return [cold, warm, again].every((r) => r.status === "success") ? 0 : 1;
      },
      { env },
    );
    say(`\nmirror: ${DB}. What an analyst can ask it (docs/queries.md has more):`);
    const sqlite = { command: "demo", instead: "the demo keeps its mirror in a SQLite file" };
    const read = await runAsReader(
      {},
      ({ app }) => {
        for (const sql of QUERIES) {
          say(`\n  sqlite3 ${DB} "${sql}"`);
          for (const row of app.store.db.prepare(sql).all())
            say(`    ${Object.values(row as object).join(" | ")}`);
        }
        return 0;
      },
      { env, sqlite },
    );
    return Math.max(synced, read);
  } finally {
    await sim.close();
  }
}

process.exitCode = await demo();
