/** Guards the shape of src/: no import cycles, no file a reader cannot take in at once. */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const srcDir = join(root, "src");
const MAX_LINES = 300;

const files = readdirSync(srcDir, { recursive: true, encoding: "utf8" })
  .filter((f) => f.endsWith(".ts"))
  .map((f) => join(srcDir, f))
  .sort();

/**
 * Relative imports of one file, resolved to .ts paths. preProcessFile sees `import type`,
 * `export ... from` and `import("...")`, and skips comments and strings, unlike a regex.
 */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  return importedFiles
    .map((f) => f.fileName)
    .filter((spec) => spec.startsWith("."))
    .map((spec) => resolve(dirname(file), spec.replace(/\.js$/, ".ts")));
}

/** Every cycle found by a depth-first walk, each reported once as "a -> b -> a". */
function findCycles(graph: Map<string, string[]>): string[] {
  const cycles: string[] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (node: string): void => {
    const at = path.indexOf(node);
    if (at >= 0) {
      cycles.push([...path.slice(at), node].map((f) => relative(root, f)).join(" -> "));
      return;
    }
    if (done.has(node)) return;
    path.push(node);
    for (const next of graph.get(node) ?? []) visit(next);
    path.pop();
    done.add(node);
  };
  for (const file of graph.keys()) visit(file);
  return cycles;
}

describe("architecture of src/", () => {
  it("has no import cycles", () => {
    const graph = new Map(files.map((f) => [f, importsOf(f)]));
    expect(findCycles(graph)).toEqual([]);
  });

  it(`has no file over ${MAX_LINES} lines`, () => {
    const tooLong = files
      .map((f) => ({ file: relative(root, f), lines: readFileSync(f, "utf8").trimEnd().split("\n").length }))
      .filter(({ lines }) => lines > MAX_LINES)
      .map(({ file, lines }) => `${file}: ${lines} lines`);
    expect(tooLong).toEqual([]);
  });
});
