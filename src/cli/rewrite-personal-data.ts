/** `booking-sync rewrite-personal-data`: applies SYNC_PERSONAL_DATA to what the mirror already holds. */
import type { Command } from "commander";
import type { Config } from "../config/config.js";
import { ConfigError } from "../errors.js";
import { type PersonalData, personalDataPolicy } from "../store/personal-data.js";
import { rewritePersonalData } from "../store/personal-rewrite.js";
import { runAsWriter, withExitCode } from "./command.js";
import { EXIT } from "./output.js";

export function registerRewritePersonalData(program: Command): void {
  program
    .command("rewrite-personal-data")
    .description(
      "hash or drop the personal fields of every stored booking and reject (SYNC_PERSONAL_DATA), then exit",
    )
    .option("--personal-data <mode>", "hash or drop (SYNC_PERSONAL_DATA)")
    .action(withExitCode(rewriteAction));
}

function rewriteAction(flags: Record<string, unknown>): Promise<number> {
  const sqlite = { command: "rewrite-personal-data", instead: "it rewrites SQLite mirrors only, for now" };
  return runAsWriter(
    flags,
    { sqlite },
    async ({ app: { store, logger }, config, signal, exit }) => {
      const mode = config.personalData;
      // A first signal stops between batches: those rewritten stay, the next run does the rest.
      const report = await rewritePersonalData(store.db, storedPolicy(config), (read) => {
        signal.throwIfAborted();
        logger.debug({ bookings: read }, "rewriting personal data");
      }).catch((err: unknown) => (signal.aborted && err === signal.reason ? undefined : Promise.reject(err)));
      if (!report)
        return exit(
          { status: "aborted" },
          "`booking-sync rewrite-personal-data` rewrites the rest; until it ends, old values may remain in the file's free pages and WAL",
        );
      const other = config.personalDataKey === undefined ? report.hashed.keyed : report.hashed.plain;
      if (mode === "hash" && other > 0)
        logger.warn(
          { bookings: other },
          "bookings keep hashes made with another SYNC_PERSONAL_DATA_KEY setting; they change when the source serves them again",
        );
      if (!report.walEmptied)
        logger.warn("a reader kept the WAL busy; old values leave it at the next checkpoint");
      process.stdout.write(
        `rewrite-personal-data (${mode}): ${report.bookingsRewritten} of ${report.bookings} bookings rewritten, ` +
          `${report.rejectsRewritten} rejected records\n`,
      );
      return EXIT.ok;
    },
    // Refused before anything opens.
    { checkConfig: storedPolicy },
  );
}

/** The policy of values already stored; `keep` has nothing to rewrite. */
function storedPolicy(config: Config): PersonalData {
  const personal = personalDataPolicy(config.personalData, config.personalDataKey, { stored: true });
  if (personal) return personal;
  throw new ConfigError("SYNC_PERSONAL_DATA is keep: there is nothing to rewrite", {
    hint:
      "set SYNC_PERSONAL_DATA=hash or drop (or --personal-data); values already hashed or dropped " +
      "come back only from the source: `booking-sync backfill --restart`",
  });
}
