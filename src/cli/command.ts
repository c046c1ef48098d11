/**
 * Around every command: its config, the world it needs (`openApp`), the writer lease and signals for
 * a writer, and exit codes: 2 for a usage or config error, 1 for any other failure, 130 (SIGINT) or
 * 143 (SIGTERM) after a signal.
 */
import type { Command } from "commander";
import { type App, type Needs, openApp } from "../app.js";
import { type Config, loadConfig } from "../config/config.js";
import { MIRROR_SETTINGS } from "../config/settings.js";
import type { Awaitable } from "../sync/ports.js";
import { exitFor, type Outcome, reportError } from "./output.js";
import { abortOnSignals } from "./signals.js";

type Flags = Record<string, unknown>;

export interface ReaderContext<N extends Omit<Needs, "mirror">> {
  app: App<N>;
  config: Config;
}

export interface WriterContext<N extends Omit<Needs, "mirror">> extends ReaderContext<N> {
  /** Aborted by the first SIGINT/SIGTERM, or when the writer lease is lost. */
  signal: AbortSignal;
  /** The exit code of the run's outcome, after printing why it did not succeed (`resume` after a signal). */
  exit(outcome: Outcome, resume: string): number;
}

export interface CommandOptions {
  /** Validates the flags before anything is read or opened. */
  check?: () => void;
  /** Validates the config before anything opens. */
  checkConfig?: (config: Config) => void;
  /** The environment the config is read from; default `process.env`. */
  env?: Record<string, string | undefined>;
  /**
   * A writer's lease: the command holds it for its whole run, and a first signal stops the work
   * (default); the daemon takes it run by run, standing by while another process holds it, and
   * handles its own signals; `migrate` takes none, as it changes only the schema and must also
   * succeed beside a running daemon.
   */
  lease?: "command" | "daemon" | "none";
}

/** A commander action that runs `action` on the flags (global ones too) and keeps its exit code for `main`. */
export function withExitCode<F extends Flags>(action: (flags: F, ...args: unknown[]) => Promise<number>) {
  return async function (this: Command, ...args: unknown[]) {
    (this as Command & { exitCode?: number }).exitCode = await action(this.optsWithGlobals<F>(), ...args);
  };
}

/** Runs `work` as the mirror's writer and returns its exit code. */
export async function runAsWriter<N extends Omit<Needs, "mirror">>(
  flags: Flags,
  needs: N,
  work: (ctx: WriterContext<N>) => Awaitable<number>,
  options: CommandOptions = {},
): Promise<number> {
  const signals = (options.lease ?? "command") === "command" ? abortOnSignals() : undefined;
  let app: App<N> | undefined;
  try {
    const config = readConfig(flags, options);
    app = await openApp<N>(config, { needs: { ...needs, mirror: "writer" } });
    const held = signals && (await takeLease(app, signals));
    const exit = (outcome: Outcome, resume: string) =>
      exitFor(outcome, { by: signals?.received(), reason: signals?.signal.reason, resume });
    try {
      // Without the command's lease, nothing aborts the work.
      return await work({ app, config, signal: signals?.signal ?? new AbortController().signal, exit });
    } finally {
      await held?.release();
    }
  } catch (err) {
    return reportError(err);
  } finally {
    await app?.close();
    signals?.dispose();
  }
}

/**
 * Runs `work` on the mirror opened to read only, never blocking a writer, and returns its exit code.
 * Only the settings that say where the mirror is are read: no other, valid or not, stops a reader.
 */
export async function runAsReader<N extends Pick<Needs, "sqlite">>(
  flags: Flags,
  work: (ctx: ReaderContext<N>) => Awaitable<number>,
  options: CommandOptions & N,
): Promise<number> {
  let app: App<N> | undefined;
  try {
    const config = readConfig(flags, options, MIRROR_SETTINGS);
    app = await openApp<N>(config, { needs: { ...options, mirror: "reader" } });
    return await work({ app, config });
  } catch (err) {
    return reportError(err);
  } finally {
    await app?.close();
  }
}

function readConfig(flags: Flags, options: CommandOptions, only?: readonly string[]): Config {
  options.check?.();
  const config = loadConfig({ flags, env: options.env ?? process.env, only });
  options.checkConfig?.(config);
  return config;
}

/** Takes the lease for the whole command; losing it aborts the work as a signal would. */
async function takeLease(app: App<object>, signals: ReturnType<typeof abortOnSignals>) {
  const lease = await app.store.takeWriterLease({
    clock: app.clock,
    logger: app.logger,
    onLost: () => signals.abort("lost the writer lease to another process"),
  });
  if (!lease.acquired) throw new Error(lease.message);
  return lease;
}
