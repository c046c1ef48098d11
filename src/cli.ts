#!/usr/bin/env node
/** booking-sync's command line. Exit codes: 0 ok, 1 the work failed, 2 bad usage or config. */

import { main } from "./cli/program.js";
import { tuneHeap } from "./heap.js";

tuneHeap();
process.exitCode = await main(process.argv);
