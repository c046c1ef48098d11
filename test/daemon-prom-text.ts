/**
 * A strict parser of the Prometheus text exposition format (0.0.4), enough to prove /metrics is
 * well-formed: every line is a comment, HELP, TYPE or sample; every sample belongs to a family
 * declared by TYPE before it; label blocks and values parse.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  help: string | undefined;
  type: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);
const SUFFIXES: Record<string, string[]> = {
  histogram: ["_bucket", "_sum", "_count"],
  summary: ["_sum", "_count"],
};

/** Parses the text; throws with the line number on the first malformed line. */
export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const helps = new Map<string, string>();
  const lines = text.split("\n");
  lines.forEach((line, index) => {
    const fail = (why: string) => {
      throw new Error(`line ${index + 1}: ${why}: ${JSON.stringify(line)}`);
    };
    if (line.trim() === "") return;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      const [, kind, name = "", rest = ""] = meta;
      if (!NAME.test(name)) fail("bad metric name");
      if (kind === "HELP") helps.set(name, rest);
      else {
        if (!TYPES.has(rest)) fail("unknown type");
        if (families.has(name)) fail("family declared twice");
        families.set(name, { name, help: helps.get(name), type: rest, samples: [] });
      }
      return;
    }
    if (line.startsWith("#")) return;
    const sample = parseSample(line) ?? fail("not a sample line");
    const family = familyOf(families, sample.name) ?? fail(`sample of undeclared family ${sample.name}`);
    family.samples.push(sample);
  });
  return families;
}

function familyOf(families: Map<string, Family>, sampleName: string): Family | undefined {
  const exact = families.get(sampleName);
  if (exact) return exact;
  for (const family of families.values()) {
    for (const suffix of SUFFIXES[family.type] ?? []) {
      if (sampleName === family.name + suffix) return family;
    }
  }
  return undefined;
}

function parseSample(line: string): Sample | undefined {
  const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)( -?\d+)?$/.exec(line);
  if (!m) return undefined;
  const [, name = "", , labelText, rawValue = ""] = m;
  const labels = labelText === undefined ? {} : parseLabels(labelText);
  if (!labels) return undefined;
  const value = parseValue(rawValue);
  return Number.isNaN(value) && !/^nan$/i.test(rawValue) ? undefined : { name, labels, value };
}

function parseLabels(text: string): Record<string, string> | undefined {
  const labels: Record<string, string> = {};
  const pair = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/y;
  while (pair.lastIndex < text.length) {
    const m = pair.exec(text);
    if (!m) return undefined;
    const [, key = "", value = ""] = m;
    labels[key] = value.replace(/\\n/g, "\n").replace(/\\(["\\])/g, "$1");
  }
  return labels;
}

/** As Prometheus reads values (Go's ParseFloat): NaN and Inf in any case, e.g. prom-client's "Nan". */
function parseValue(raw: string): number {
  if (/^nan$/i.test(raw)) return Number.NaN;
  const inf = /^([+-]?)inf(inity)?$/i.exec(raw);
  if (inf) return inf[1] === "-" ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(raw) ? Number(raw) : Number.NaN;
}

/** The value of the sample with exactly these labels, or undefined. */
export function sampleValue(
  families: Map<string, Family>,
  sampleName: string,
  labels: Record<string, string> = {},
): number | undefined {
  const family = familyOf(families, sampleName);
  const wanted = Object.entries(labels);
  const found = family?.samples.find(
    (s) =>
      s.name === sampleName &&
      Object.keys(s.labels).length === wanted.length &&
      wanted.every(([k, v]) => s.labels[k] === v),
  );
  return found?.value;
}
