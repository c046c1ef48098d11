/**
 * The memory profile (src/heap.ts) in a real Node process: a workload whose objects survive a few
 * collections grows V8's young generation to its 32 MB maximum, and to 8 MB (two 4 MB
 * semi-spaces) under the profile, also once a store has started its writer thread (starting a
 * thread's V8 instance undoes the profile's limit until the store restores it).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { dist } from "./support/harness.js";

// Prints the young generation's largest size, in MB: while working before the store opens, once its
// writer thread has started, while working on without a pause right after that, and later.
const SCRIPT = `
import { getHeapSpaceStatistics } from "node:v8";
if (process.env.TUNED === "1") (await import(${JSON.stringify(dist("heap.js"))})).tuneHeap();
const { openStore } = await import(${JSON.stringify(dist("store/index.js"))});
const young = () => getHeapSpaceStatistics().find((s) => s.space_name === "new_space")?.space_size ?? 0;
let max = 0;
const peak = () => {
  const mb = max / 2 ** 20;
  max = 0;
  return mb;
};
// Each object lives for ten rounds: long enough to survive scavenges, as a page's records do.
const live = new Array(50_000);
const fill = (round) => {
  for (let i = 0; i < 5_000; i++) live[(round * 5_000 + i) % live.length] = { round, i, text: "record " + i };
  max = Math.max(max, young());
};
const work = async (rounds) => {
  for (let round = 0; round < rounds; round++) {
    fill(round);
    await new Promise((resolve) => setImmediate(resolve));
  }
};
await work(150);
const before = peak();
const store = openStore(process.env.DB_PATH, { writerThread: true });
store.feedPipe(); // starts the writer thread
const opened = young() / 2 ** 20;
// As a caller may do once its store is open: work on without yielding to the event loop, so no
// observer runs meanwhile.
for (let round = 0; round < 60; round++) fill(round);
const opening = peak();
await work(150);
const after = peak();
store.close();
console.log(JSON.stringify({ before, opened, opening, after }));
`;

interface Peaks {
  before: number;
  opened: number;
  opening: number;
  after: number;
}

function youngGenerationPeaksMb(tuned: boolean): Peaks {
  const dir = mkdtempSync(join(tmpdir(), "booking-sync-heap-"));
  try {
    const script = join(dir, "work.mjs");
    writeFileSync(script, SCRIPT);
    // V8's maximum depends on the host's memory; fixed here at its usual 16 MB per semi-space.
    const out = execFileSync(process.execPath, ["--max-semi-space-size=16", script], {
      encoding: "utf8",
      env: { ...process.env, TUNED: tuned ? "1" : "0", DB_PATH: join(dir, "heap.db"), NODE_OPTIONS: "" },
    });
    return JSON.parse(out.trim()) as Peaks;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("memory profile", () => {
  it("holds the young generation at two 4 MB semi-spaces, where V8 alone grows it to 32 MB", () => {
    expect(existsSync(dist("heap.js")), "run `npm run build` first").toBe(true);
    expect(youngGenerationPeaksMb(false).after).toBeGreaterThanOrEqual(32);
    const tuned = youngGenerationPeaksMb(true);
    // No growth at all while nothing lets the profile see a collection; otherwise at most one
    // doubling past the target, for collections the profile sees late (src/heap.ts).
    expect(tuned.opening, JSON.stringify(tuned)).toBeLessThanOrEqual(tuned.opened);
    expect(tuned.before, JSON.stringify(tuned)).toBeLessThanOrEqual(16);
    expect(tuned.after, JSON.stringify(tuned)).toBeLessThanOrEqual(16);
  });
});
