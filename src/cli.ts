#!/usr/bin/env node
import { main } from "./cli/program.js";
/** booking-sync's command line. Exit codes: 0 ok, 1 the work failed, 2 bad usage or config. */
import { tuneHeap } from "./heap.js";

tuneHeap();
process.exitCode = await main(process.argv);
