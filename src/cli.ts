#!/usr/bin/env -S MALLOC_MMAP_THRESHOLD_=131072 node --max-semi-space-size=4 --heap-growing-percent=30
/**
 * booking-sync's command line. Exit codes: 0 ok, 1 the work failed, 2 bad usage or config.
 * The memory flags above (also in the Dockerfile) keep a sidecar's footprint small; see
 * docs/performance.md for what they cost and save. MALLOC_MMAP_THRESHOLD_ keeps glibc from
 * serving response-sized buffers from its heap, where their freed pages stayed resident.
 */
import { main } from "./cli/program.js";

// A reader that leaves early (`--help | head`, `2>&1 | head`) ends the output, as it ends `cat`'s,
// and the command's own exit code stands; Node would otherwise die of the unhandled EPIPE with a
// stack trace and exit 1.
for (const out of [process.stdout, process.stderr])
  out.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE") throw err;
  });

process.exitCode = await main(process.argv);
