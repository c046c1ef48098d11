/** `booking-sync simulate`: serve the bundled partner-API simulator until interrupted. */
import type { Command } from "commander";
import type { z } from "zod";
import { choice, int } from "../config/values.js";
import { ConfigError } from "../errors.js";
import { withExitCode } from "./command.js";
import { EXIT, reportError } from "./output.js";

export function registerSimulate(program: Command): void {
  program
    .command("simulate")
    .description("serve a deterministic simulator of the partner API on 127.0.0.1 (for demos and tests)")
    .option("--port <n>", "port to listen on (0 picks a free one)", "0")
    .option("--bookings <n>", "number of bookings", "5000")
    .option("--seed <n>", "seed of the generated data", "1")
    .option("--token <token>", "bearer token the simulator accepts", "sim-token")
    .option("--cursor <rule>", "cursor rule: exclusive or inclusive", "exclusive")
    .option("--tie-run <n>", "bookings sharing each createdAt", "1")
    .option("--latency-ms <ms>", "delay added to every response", "0")
    .action(withExitCode(simulateAction));
}

/** A flag's value by the rule every setting follows (config/values.ts); else a ConfigError with an example. */
function parsed<T>(flag: string, schema: z.ZodType<T>, raw: unknown, accepts: string, example: unknown): T {
  const r = schema.safeParse(raw);
  if (r.success) return r.data;
  throw new ConfigError(`--${flag} = ${JSON.stringify(raw)} is not valid: expected ${accepts}`, {
    hint: `booking-sync simulate --${flag} ${example}`,
  });
}

function whole(name: string, value: unknown, min: number, max: number): number {
  return parsed(name, int(min, max), value, `a whole number from ${min} to ${max}`, min);
}

async function simulateAction(o: Record<string, string>): Promise<number> {
  try {
    const cursors = ["exclusive", "inclusive"] as const;
    const cursor = parsed("cursor", choice(cursors), o.cursor, cursors.join(" or "), "inclusive");
    // Loaded for this command alone: no other command holds the simulator (docs/performance.md).
    const { startSimulator } = await import("../simulator/index.js");
    const sim = await startSimulator({
      port: whole("port", o.port, 0, 65535),
      bookings: whole("bookings", o.bookings, 0, 100_000_000),
      seed: whole("seed", o.seed, 0, 2 ** 31),
      token: o.token,
      cursor,
      tieRun: whole("tie-run", o.tieRun, 1, 1_000_000),
      latencyMs: whole("latency-ms", o.latencyMs, 0, 600_000),
    });
    process.stdout.write(`simulator listening at ${sim.url}\n`);
    const token = o.token === "sim-token" ? o.token : "<your --token>";
    process.stdout.write(
      `  try: BOOKING_API_BASE_URL=${sim.url} BOOKING_API_TOKEN=${token} booking-sync sync\n`,
    );
    await new Promise<void>((resolve) => {
      process.once("SIGINT", () => resolve());
      process.once("SIGTERM", () => resolve());
    });
    await sim.close();
    return EXIT.ok;
  } catch (err) {
    return reportError(err);
  }
}
