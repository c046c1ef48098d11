/**
 * pino, pretty on a terminal and JSON otherwise, on stderr so stdout carries only the command's
 * own output. Stacks are logged at debug level only; secrets are redacted by path as a last guard
 * (the token is never put in a log object in the first place).
 */
import { Writable } from "node:stream";
import { pino } from "pino";
import pretty from "pino-pretty";

export type LogLevel = "trace" | "debug" | "info" | "warn" | "error" | "fatal" | "silent";

export interface LoggerOptions {
  level: LogLevel;
  /** Pretty-print (default: when stderr is a terminal). */
  pretty?: boolean;
  /** Where to write (default: stderr). */
  destination?: NodeJS.WritableStream;
}

/**
 * Lets a progress bar drawn on the same terminal step aside for a log line: `around` is given the
 * write (it clears the bar, writes, draws the bar again). Unset while no bar is drawn.
 */
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
      base,
      pretty({
        destination: destination === process.stderr ? stderrBesideBar() : destination,
        colorize: true,
        sync: true,
        translateTime: "SYS:HH:MM:ss.l",
        ignore: "pid,hostname",
      }),
    );
  }
  return pino(base, destination as pino.DestinationStream);
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
