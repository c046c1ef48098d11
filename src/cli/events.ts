/**
 * `booking-sync events`: the events stream as JSON lines, read from either database without blocking
 * a writer; `--follow` waits for more until Ctrl-C. `events replay` asks the delivering daemon to send
 * a range again.
 */
import { once } from "node:events";
import type { Command } from "commander";
import { ConfigError } from "../errors.js";
import type { EventStore } from "../events/ports.js";
import { missedAfter, PULL, readPage, waitForEvents, wholeNumber } from "../events/pull.js";
import { escapeJsonControls } from "../printable.js";
import type { TimerClock } from "../sync/ports.js";
import { runAsReader, runAsWriter, withExitCode } from "./command.js";
import { EXIT } from "./output.js";
import { abortOnSignals } from "./signals.js";

export function registerEvents(program: Command): void {
  const events = program
    .command("events")
    .description(
      "print the booking events after an id, one JSON object a line, oldest first; reads only, from " +
        "either database; with --follow, waits for new ones until Ctrl-C",
    )
    .option(
      "--after <id>",
      "print the events after this id: the last one you processed (default 0: all kept)",
    )
    .option("--limit <n>", "print at most this many events (default: every one there is)")
    .option(
      "--stream <id>",
      "the events stream --after was read in (printed on stderr at start): refused, exit 1, when the " +
        "mirror was made again since",
    )
    .option("--follow", "after the last event, keep waiting for new ones until Ctrl-C (exit 0)")
    .action(withExitCode(eventsAction));
  events
    .command("replay")
    .description(
      "ask the daemon that delivers to EVENTS_WEBHOOK_URL to send a range of events again, as new " +
        "messages (new webhook-ids) with the same event ids; prints the request queued",
    )
    .option("--from <id>", "the first event id to send again (required)")
    .option("--to <id>", "the last event id to send again (default: the last event)")
    .action(withExitCode(replayAction));
}

/** A flag's whole number, at least `min`, or a usage error naming it. */
function numberFlag(flags: Record<string, unknown>, name: string, min: number, hint: string) {
  const text = flags[name];
  if (text === undefined) return undefined;
  const n = wholeNumber(String(text));
  if (n !== undefined && n >= min) return n;
  throw new ConfigError(
    `--${name} = ${JSON.stringify(String(text))} is not valid: expected a whole number from ${min}`,
    { hint },
  );
}

function eventsAction(flags: Record<string, unknown>): Promise<number> {
  let after = 0;
  let limit: number | undefined;
  const stream = flags.stream === undefined ? undefined : String(flags.stream);
  const check = () => {
    after = numberFlag(flags, "after", 0, "booking-sync events --after 0") ?? 0;
    limit = numberFlag(flags, "limit", 1, "booking-sync events --after 0 --limit 100");
  };
  return runAsReader(
    flags,
    async ({ app }) => {
      const follow = flags.follow === true;
      // Ctrl-C ends a follow as its normal end; without --follow, it interrupts as for any command.
      const signals = follow ? abortOnSignals() : undefined;
      const stop = new AbortController();
      const signal = signals ? AbortSignal.any([signals.signal, stop.signal]) : stop.signal;
      // A reader that went away (`| head`) ends the printing quietly, as it ends `cat`.
      const onError = () => stop.abort();
      process.stdout.on("error", onError);
      // The clock's timers are unref'd and a SQLite reader holds no socket: this keeps a follow alive.
      const awake = follow ? setInterval(() => {}, 3_600_000) : undefined;
      try {
        await printEvents(app.store.events, app.clock, { after, limit, follow, signal, stream });
      } finally {
        clearInterval(awake);
        process.stdout.off("error", onError);
        signals?.dispose();
      }
      return EXIT.ok;
    },
    { check },
  );
}

/** Prints the events after `after` in pages, then waits for more while `follow` until `signal`. */
async function printEvents(
  store: EventStore,
  clock: TimerClock,
  o: {
    after: number;
    limit: number | undefined;
    follow: boolean;
    signal: AbortSignal;
    stream: string | undefined;
  },
): Promise<void> {
  let { after, stream } = o;
  let left = o.limit ?? Number.POSITIVE_INFINITY;
  let told = false;
  while (left > 0 && !o.signal.aborted) {
    const want = Math.min(PULL.maxLimit, left);
    const page = await readPage(store, after, want, stream);
    // Exit 1: the work cannot be done, whatever the flags; the message says where to start again.
    if (page.lost) throw new Error(page.lost);
    if (!told && page.stream !== null) {
      process.stderr.write(
        `booking-sync: events stream ${page.stream}: resume with --after <the last id read> --stream ${page.stream}\n`,
      );
    }
    // The rest of a follow reads the stream it started in.
    stream = page.stream ?? undefined;
    if (!told && missedAfter(after, page.first)) {
      // Said on stderr, so the JSON lines on stdout stay a clean stream.
      process.stderr.write(
        `booking-sync: the events after ${after} up to ${page.first - 1} were pruned (EVENTS_RETENTION_DAYS) before this read; the oldest kept is ${page.first}\n`,
      );
    }
    told = true;
    if (page.events.length > 0) await write(`${page.events.map(escapeJsonControls).join("\n")}\n`, o.signal);
    left -= page.events.length;
    after = page.last;
    if (page.events.length === want) continue;
    if (!o.follow) return;
    const waitMs = PULL.maxWaitSeconds * 1000;
    await waitForEvents({ store, clock, signal: o.signal, after, waitMs });
  }
}

/** Writes to stdout, waiting while a slow reader's pipe is full. */
async function write(text: string, signal: AbortSignal): Promise<void> {
  if (process.stdout.write(text)) return;
  await once(process.stdout, "drain", { signal }).catch(() => undefined);
}

function replayAction(flags: Record<string, unknown>): Promise<number> {
  const hint = "booking-sync events replay --from 1";
  let from = 0;
  let to: number | undefined;
  const check = () => {
    const given = numberFlag(flags, "from", 1, hint);
    if (given === undefined)
      throw new ConfigError("events replay needs --from: the first event id to send again", { hint });
    from = given;
    to = numberFlag(flags, "to", 1, hint);
  };
  return runAsWriter(
    flags,
    {},
    async ({ app }) => {
      const store = app.store.events;
      const last = await store.lastEventId();
      const upTo = to ?? last;
      refuseRange(from, upTo, last);
      const kept = (await store.readEvents(from - 1, 1, upTo))[0]?.id;
      const id = await store.requestReplay(from, upTo, app.clock.now().toISOString());
      // Retention may have pruned the start of the range: say what will really be sent.
      const gone =
        kept === from
          ? ""
          : kept === undefined
            ? " (none of them is kept any more: EVENTS_RETENTION_DAYS)"
            : ` (events before ${kept} are no longer kept: EVENTS_RETENTION_DAYS)`;
      process.stdout.write(
        `replay ${id} queued: events ${from} to ${upTo}${gone}; the daemon that delivers to ` +
          "EVENTS_WEBHOOK_URL sends them again as new messages\n",
      );
      return EXIT.ok;
    },
    // The daemon that delivers the replay is running: asking for one must not wait for its lease.
    { check, lease: "none" },
  );
}

/** Refuses a range that is empty or reaches past the last event (exit 2). */
function refuseRange(from: number, to: number, last: number): void {
  if (last === 0) throw new ConfigError("nothing to replay: the mirror holds no events yet");
  const hint = `booking-sync events replay --from ${Math.min(from, last)} --to ${last}`;
  const beyond = from > last ? `--from ${from}` : to > last ? `--to ${to}` : undefined;
  if (beyond)
    throw new ConfigError(
      `${beyond} is beyond the last event, ${last}: only events recorded can be sent again`,
      {
        hint,
      },
    );
  if (from > to) throw new ConfigError(`--from ${from} is after --to ${to}: the range is empty`, { hint });
}
