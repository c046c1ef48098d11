/** `booking-sync labels import FILE.json` and `labels export`: what the source's state codes mean. */
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { z } from "zod";
import { ConfigError, readOrRefuse, wrapError } from "../errors.js";
import { exportLabels, importLabels, LABEL_KINDS, type StateLabels } from "../store/labels.js";
import { runAsReader, runAsWriter, withExitCode } from "./command.js";
import { EXIT } from "./output.js";

const EXAMPLE = '{ "booking_state": { "1": "pending", "2": "confirmed" }, "order_state": { "0": "new" } }';

// Codes as JSON object keys: decimal, no sign or leading zero, so each code has exactly one spelling.
const Code = z.string().regex(/^(0|[1-9]\d{0,8})$/);
const Label = z.string().refine((s) => s.trim() !== "");
const Codes = z.record(Code, Label);
const LabelsFile = z.strictObject(
  Object.fromEntries(LABEL_KINDS.map((k) => [k, Codes.optional()])) as Record<
    (typeof LABEL_KINDS)[number],
    z.ZodOptional<typeof Codes>
  >,
);

export function registerLabels(program: Command): void {
  const labels = program
    .command("labels")
    .description(
      "state labels: what the codes in booking_state, order_state and customer_acceptance_state mean",
    );
  labels
    .command("import")
    .argument("<file>", `a JSON file of labels by kind and code, e.g. ${EXAMPLE}`)
    .description("replace every state label with the file's, in one transaction, then exit")
    .action(withExitCode((flags, file) => importAction(String(file), flags)));
  labels
    .command("export")
    .description(
      "print every state label as JSON in the import file's format (read-only; safe during a sync)",
    )
    .action(withExitCode(exportAction));
}

function importAction(file: string, flags: Record<string, unknown>): Promise<number> {
  let labels: Partial<StateLabels> = {};
  // The file is checked before the database opens: a bad file changes nothing.
  const check = () => {
    labels = readLabelsFile(file);
  };
  const instead = "run it against the SQLite mirror, or write the table with SQL";
  return runAsWriter(
    flags,
    { sqlite: { command: "labels import", instead } },
    ({ app }) => {
      const counts = importLabels(app.store.db, labels);
      const total = Object.values(counts).reduce((a, b) => a + b, 0);
      const each = LABEL_KINDS.map((k) => `${k} ${counts[k]}`).join(", ");
      process.stdout.write(`imported ${total} label${total === 1 ? "" : "s"} (${each})\n`);
      return EXIT.ok;
    },
    { check },
  );
}

function exportAction(flags: Record<string, unknown>): Promise<number> {
  const instead = "read the table with SQL: SELECT kind, code, label FROM state_labels";
  return runAsReader(
    flags,
    ({ app }) => {
      let labels: StateLabels;
      try {
        labels = exportLabels(app.store.db);
      } catch (err) {
        const fix = "(run `booking-sync migrate` if it is old)";
        throw wrapError(`read state labels from ${app.store.path} ${fix}`, err);
      }
      process.stdout.write(`${JSON.stringify(labels, null, 2)}\n`);
      return EXIT.ok;
    },
    { sqlite: { command: "labels export", instead } },
  );
}

/** Reads and validates a labels file; a ConfigError (exit 2) names the path and the first bad entry. */
function readLabelsFile(path: string): Partial<StateLabels> {
  const text = readOrRefuse(
    `labels file ${JSON.stringify(path)}`,
    () => readFileSync(path, "utf8"),
    `booking-sync labels import FILE.json, where FILE.json holds ${EXAMPLE}`,
  );
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`labels file ${JSON.stringify(path)} is not JSON: ${(err as Error).message}`, {
      hint: `write it as ${EXAMPLE}`,
      cause: err,
    });
  }
  const parsed = LabelsFile.safeParse(json);
  if (parsed.success) return parsed.data as Partial<StateLabels>;
  const [first, ...rest] = parsed.error.issues;
  const more = rest.length ? ` (and ${rest.length} more)` : "";
  throw new ConfigError(`labels file ${JSON.stringify(path)}: ${describeIssue(first, json)}${more}`, {
    hint: `write it as ${EXAMPLE}`,
  });
}

/** One bad entry, named by kind and code, with its value and what would be accepted. */
function describeIssue(issue: z.core.$ZodIssue | undefined, json: unknown): string {
  if (!issue) return "is not valid";
  const [kind, code] = issue.path.map(String);
  if (issue.code === "unrecognized_keys") {
    const names = issue.keys.map((k) => JSON.stringify(k)).join(", ");
    return `unknown kind ${names}: expected ${LABEL_KINDS.slice(0, -1).join(", ")} or ${LABEL_KINDS.at(-1)}`;
  }
  if (kind === undefined) return "is not valid: expected an object of kinds, each an object of code → label";
  if (issue.code === "invalid_key")
    return `${kind} code ${JSON.stringify(code)} is not valid: expected a whole number, 0 or above, such as "3"`;
  if (code === undefined)
    return `${kind} is not valid: expected an object of code → label, such as { "3": "paid" }`;
  const value = (json as Record<string, Record<string, unknown>>)[kind]?.[code];
  return `${kind} "${code}" = ${JSON.stringify(value)} is not valid: expected a non-empty label`;
}
