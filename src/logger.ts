/**
 * pino on stderr, so stdout carries only the output; stacks at debug only, secrets redacted by path.
 * Fields quote the source, so no line carries a raw control: JSON lines escape DEL and C1 too (same
 * values, exactly), and pretty lines show every control as `\u001b` (`printable`).
 */
import { createRequire } from "node:module";
import { Writable } from "node:stream";
import { pino } from "pino";
import type pretty from "pino-pretty";
import type { Config } from "./config/config.js";
import { escapeJsonControls, printable } from "./printable.js";

export interface LoggerOptions {
  level: Config["logLevel"];
  /** Pretty-print (default: when stderr is a terminal). */
  pretty?: boolean;
  /** Where to write (default: stderr). */
  destination?: NodeJS.WritableStream;
}

/** Lets a progress bar step aside for a log line: `around` wraps the write; unset while no bar is drawn. */
export const terminalLog: { around?: ((write: () => void) => void) | undefined } = {};

/** stderr, through `terminalLog.around` while a bar is drawn (one per logger: pino-pretty may end it). */
function stderrBesideBar(): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      const write = () => void process.stderr.write(chunk);
      if (terminalLog.around) terminalLog.around(write);
      else write();
      done();
    },
  });
}

/**
 * pino-pretty, loaded only when a logger prints to a terminal: a daemon logging JSON never holds its
 * modules (docs/performance.md). It is CommonJS, so `require` keeps `createLogger` synchronous.
 */
function loadPretty(): typeof pretty {
  return createRequire(import.meta.url)("pino-pretty") as typeof pretty;
}

export function createLogger(options: LoggerOptions): pino.Logger {
  const withStacks = options.level === "debug" || options.level === "trace";
  const base: pino.LoggerOptions = {
    level: options.level,
    base: { pid: process.pid },
    redact: {
      paths: ["token", "apiToken", "*.apiToken", "authorization", "*.authorization", "headers.authorization"],
      censor: "[redacted]",
    },
    serializers: { err: (err: unknown) => serializeError(err, withStacks) },
  };
  const destination = options.destination ?? process.stderr;
  const usePretty = options.pretty ?? Boolean((destination as NodeJS.WriteStream).isTTY);
  if (usePretty) {
    return pino(
      { ...base, hooks: { streamWrite: printableLine } },
      loadPretty()({
        destination: destination === process.stderr ? stderrBesideBar() : destination,
        colorize: true,
        sync: true,
        translateTime: "SYS:HH:MM:ss.l",
        ignore: "pid,hostname",
      }),
    );
  }
  return pino({ ...base, hooks: { streamWrite: escapeJsonControls } }, destination as pino.DestinationStream);
}

/**
 * A JSON log line with each string value made `printable`, for pino-pretty, which prints strings as
 * they are: an escaped ESC in JSON is a raw ESC again once parsed. A stack keeps its line breaks.
 */
export function printableLine(line: string): string {
  try {
    const value: unknown = JSON.parse(line, (key, v: unknown) =>
      typeof v === "string" ? printable(v, { keepNewlines: key === "stack" }) : v,
    );
    return `${JSON.stringify(value)}\n`;
  } catch {
    // Not JSON (pino writes nothing else): pino-pretty prints such a line as it is.
    return `${printable(line.trimEnd())}\n`;
  }
}

/** An error as a log field: type, message, status and the cause chain; the stack only when asked. */
export function serializeError(err: unknown, withStack: boolean): unknown {
  if (!(err instanceof Error)) return err;
  const out: Record<string, unknown> = { type: err.name, message: err.message };
  const status = (err as { status?: unknown }).status;
  if (status !== undefined) out.status = status;
  if (err.cause !== undefined) out.cause = serializeError(err.cause, withStack);
  if (withStack) out.stack = err.stack;
  return out;
}
