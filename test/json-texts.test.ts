/**
 * Cutting each record's text from a body: over random JSON (any strings, quotes, backslashes and
 * brackets included; any layout) the texts must be exactly the array's elements, in order. Seeded
 * (FC_SEED to vary); fast-check prints the seed and the shrunk case on failure.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readPageJson } from "../src/api/response.js";

const SEED = Number(process.env.FC_SEED ?? 20261123);

/** The records' texts as a page is read, where `arrayElementSpans` finds them in the body's bytes. */
function arrayElementTexts(body: string, path: readonly string[]): string[] | undefined {
  const read = readPageJson(Buffer.from(body), "application/json", path);
  return read.ok ? read.texts?.map((t) => t.toString("utf8")) : undefined;
}
const anyJson = fc.jsonValue({ maxDepth: 3 });
const layout = fc.constantFrom<string | number | undefined>(undefined, 0, 1, 2, "\t", " \n ");
const otherKey = fc.string({ maxLength: 8 }).filter((k) => k !== "data" && k !== "bookings");

describe("arrayElementTexts", () => {
  it("gives each element of data as it stands in the body, whatever the layout", () => {
    fc.assert(
      fc.property(
        fc.array(anyJson, { maxLength: 6 }),
        fc.dictionary(otherKey, anyJson, { maxKeys: 3 }),
        fc.dictionary(otherKey, anyJson, { maxKeys: 3 }),
        layout,
        (data, before, after, indent) => {
          const body = JSON.stringify({ ...before, data, ...after }, null, indent);
          const texts = arrayElementTexts(body, ["data"]);
          expect(texts).toHaveLength(data.length);
          texts?.forEach((text, i) => {
            // Cut from the body itself, and the value it holds is the element's.
            expect(body.includes(text)).toBe(true);
            expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(data[i])));
            if (indent === undefined) expect(text).toBe(JSON.stringify(data[i]));
          });
        },
      ),
      { seed: SEED, numRuns: 500 },
    );
  });

  it("follows a path of keys, as in the feed's data.bookings", () => {
    fc.assert(
      fc.property(
        fc.array(anyJson, { maxLength: 6 }),
        fc.dictionary(otherKey, anyJson, { maxKeys: 3 }),
        layout,
        (bookings, siblings, indent) => {
          const body = JSON.stringify(
            { success: true, data: { ...siblings, bookings, hasMore: false } },
            null,
            indent,
          );
          const texts = arrayElementTexts(body, ["data", "bookings"]);
          expect(texts?.map((t) => JSON.parse(t))).toEqual(JSON.parse(JSON.stringify(bookings)));
        },
      ),
      { seed: SEED, numRuns: 300 },
    );
  });

  it("takes the last of a key given twice, as JSON.parse does", () => {
    fc.assert(
      fc.property(anyJson, fc.array(anyJson, { maxLength: 4 }), anyJson, (first, data, last) => {
        const earlier = `{"data":${JSON.stringify(first)},"data":${JSON.stringify(data)}}`;
        expect(arrayElementTexts(earlier, ["data"])).toEqual(data.map((d) => JSON.stringify(d)));
        const later = `{"data":${JSON.stringify(data)},"data":${JSON.stringify(last)}}`;
        const expected = Array.isArray(last) ? last.map((d) => JSON.stringify(d)) : undefined;
        expect(arrayElementTexts(later, ["data"])).toEqual(expected);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it("reads a key as JSON.parse does: the last of duplicates, escapes and all, and only where the path says", () => {
    expect(arrayElementTexts('{"data":[1,2],"data":[3, "x"]}', ["data"])).toEqual(["3", '"x"']);
    expect(arrayElementTexts('{"d\\u0061ta":[{"a":1}]}', ["data"])).toEqual(['{"a":1}']);
    expect(arrayElementTexts('{"x":"data","y":[1]}', ["data"])).toBeUndefined();
    expect(arrayElementTexts('{"p":{"data":[1]}}', ["data"])).toBeUndefined();
    expect(arrayElementTexts('{"data":{"a":[1]}}', ["data"])).toBeUndefined();
    expect(arrayElementTexts("[[1]]", ["data"])).toBeUndefined();
    expect(arrayElementTexts('{"data":[ ]}', ["data"])).toEqual([]);
    expect(arrayElementTexts('{"data":[1,2],"data":null}', ["data"])).toBeUndefined();
    expect(arrayElementTexts('{"data":[1,2], "data" : {"data":[3]}}', ["data"])).toBeUndefined();
    expect(
      arrayElementTexts('{"data":{"bookings":[1]},"data":{"x":[2]}}', ["data", "bookings"]),
    ).toBeUndefined();
    expect(
      arrayElementTexts('{"data":{"bookings":[1],"bookings":"[2]"}}', ["data", "bookings"]),
    ).toBeUndefined();
    expect(arrayElementTexts('{"data":[1]}', [])).toBeUndefined();
    expect(arrayElementTexts('{"data":[ "a\\\\", "b\\"]" , {"c":"}"} ]}', ["data"])).toEqual([
      '"a\\\\"',
      '"b\\"]"',
      '{"c":"}"}',
    ]);
    expect(
      arrayElementTexts('{"data":{"bookings":[1]},"data":{"bookings":[2,3]}}', ["data", "bookings"]),
    ).toEqual(["2", "3"]);
  });
});

describe("readPageJson", () => {
  const page = (data: unknown[], indent: string | number | undefined) =>
    JSON.stringify({ success: true, data, pagination: { total: data.length } }, null, indent);
  /** What a body read record by record amounts to: the envelope with the records put back. */
  const whole = (read: ReturnType<typeof readPageJson>) => {
    if (!read.ok || read.texts === undefined) return read.ok ? read.value : undefined;
    return { ...(read.value as object), data: read.texts.map((t) => JSON.parse(t.toString("utf8"))) };
  };

  it("reads a body, damaged or not, exactly when JSON.parse does, and to the same value", () => {
    // One byte of a valid page changed, dropped or doubled: whatever is read must be the body.
    fc.assert(
      fc.property(
        fc.array(anyJson, { maxLength: 5 }),
        layout,
        fc.nat(),
        fc.constantFrom("replace", "drop", "double", "swap"),
        fc.constantFrom(...'{}[],:"\\ 0a-'.split("")),
        (data, indent, at, how, byte) => {
          const valid = page(data, indent);
          const k = at % valid.length;
          // "swap": a bracket or brace turned into the other kind, wherever one stands.
          const brackets = [...valid.matchAll(/[[\]{}]/g)].map((m) => m.index);
          const b = brackets[at % brackets.length] as number;
          const other: Record<string, string> = { "[": "{", "{": "[", "]": "}", "}": "]" };
          const body =
            how === "replace"
              ? valid.slice(0, k) + byte + valid.slice(k + 1)
              : how === "drop"
                ? valid.slice(0, k) + valid.slice(k + 1)
                : how === "double"
                  ? valid.slice(0, k + 1) + valid.slice(k)
                  : valid.slice(0, b) + other[valid[b] as string] + valid.slice(b + 1);
          let expected: unknown;
          try {
            expected = JSON.parse(body);
          } catch {
            expected = undefined;
          }
          const read = readPageJson(Buffer.from(body), "application/json", ["data"]);
          let got: unknown;
          try {
            got = whole(read);
          } catch {
            got = undefined; // a record's text that is not JSON: the page is refused
          }
          expect(got).toEqual(expected);
        },
      ),
      { seed: SEED, numRuns: 3000 },
    );
  });

  it("refuses an array closed by a brace, which the envelope and the elements alone would not show", () => {
    for (const body of ['{"data":[}}', '{"data":[1}}', '{"data":[1},"n":{"a":1}}'])
      expect(readPageJson(Buffer.from(body), undefined, ["data"])).toMatchObject({ ok: false });
    const feed = '{"data":{"bookings":[1,2}}}';
    expect(readPageJson(Buffer.from(feed), undefined, ["data", "bookings"])).toMatchObject({ ok: false });
  });

  it("gives the texts with the envelope's array left empty", () => {
    const body = '{"data": [ {"a":"\u00e9"} , 2 ], "n": 1}';
    const read = readPageJson(Buffer.from(body), undefined, ["data"]);
    expect(read).toMatchObject({ ok: true, value: { data: [], n: 1 } });
    expect(read.ok && read.texts?.map((t) => t.toString("utf8"))).toEqual(['{"a":"\u00e9"}', "2"]);
  });
});
