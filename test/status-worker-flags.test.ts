/**
 * The status page's worker thread under the Node flags operators start the daemon with: the built CLI
 * as a subprocess (`npm run build` first). A flag passed to a worker explicitly, such as
 * `--max-old-space-size`, makes Node 20 refuse the thread (ERR_WORKER_INVALID_EXEC_ARGV), and every
 * view answered 503.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type DaemonProcess, freePort, http, spawnDaemon } from "./support/daemon-process.js";
import { CLI, dist, type Harness, harness, runNode } from "./support/harness.js";

/** Per-process flags a worker refuses when they are passed to it, and a common one it accepts. */
const FLAGS = ["--max-old-space-size=256", "--title=booking-sync-test", "--abort-on-uncaught-exception"];

let h: Harness | undefined;
const daemons: DaemonProcess[] = [];
afterEach(async () => {
  for (const d of daemons.splice(0)) {
    if (d.child.exitCode === null && d.child.signalCode === null) d.child.kill("SIGTERM");
    await d.exited;
  }
  await h?.close();
  h = undefined;
});

describe("the status page's worker thread under Node flags", () => {
  it(`serves GET / from a daemon started with ${FLAGS.join(" ")}`, async () => {
    h = await harness({ bookings: 30 });
    const port = await freePort();
    const d = spawnDaemon(h.env({ HTTP_PORT: String(port), SYNC_SCHEDULE: "0 0 1 1 *" }), {
      args: [...FLAGS, CLI, "run"],
    });
    daemons.push(d);
    await d.waitForLog((l) => l.msg === "sync finished", "the start-up sync");
    const page = await http(`http://127.0.0.1:${port}/`);
    expect(page.status, page.text).toBe(200);
    expect(page.text).toMatch(/<h1>booking-sync<\/h1>/);
    expect(d.stderr()).not.toContain("ERR_WORKER_INVALID_EXEC_ARGV");
  });

  it("reads from a script run with `node --input-type=module -e` and those flags (the benchmark's way)", async () => {
    h = await harness({ bookings: 12 });
    expect((await h.sync()).status).toBe("success");
    const script = `
      const { workerSnapshot } = await import(${JSON.stringify(dist("store/status-worker.js"))});
      const snapshot = workerSnapshot(process.argv[1]);
      const [row] = await snapshot((db) => db.all("SELECT count(*) AS n FROM bookings"));
      await snapshot.close();
      console.log(row.n);`;
    const r = await runNode([...FLAGS, "--input-type=module", "-e", script, h.dbPath]);
    expect(r.stderr).toBe("");
    expect(r.stdout.trim()).toBe("12");
    expect(r.code).toBe(0);
  });
});
