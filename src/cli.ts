#!/usr/bin/env node
/** booking-sync's command line. Exit codes: 0 ok, 1 the work failed, 2 bad usage or config. */

import { tuneHeap } from "./heap.js";

// Before the program's modules load: loading them alone would grow the young generation past
// what the memory profile allows (see heap.ts).
tuneHeap();
const { main } = await import("./cli/program.js");
process.exitCode = await main(process.argv);
