/**
 * Each record's text cut from the body it was parsed from: over random JSON (any strings, quotes,
 * backslashes and brackets; any layout) the texts must be exactly the array's elements, in order, and
 * count their keys, so a record whose text repeats a key is never stored as text. Seeded (FC_SEED to
 * vary); fast-check prints the seed and the shrunk case on failure.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { recordTexts } from "../src/api/record-texts.js";
import { checkRecord, parseFeed, parseList } from "../src/api/response.js";
import { fullBookingSchema } from "../src/api/schemas.js";

const SEED = Number(process.env.FC_SEED ?? 20261128);

const anyJson = fc.jsonValue({ maxDepth: 3 });
const layout = fc.constantFrom<string | number | undefined>(undefined, 0, 1, 2, "\t", " \n ");
const otherKey = fc.string({ maxLength: 8 }).filter((k) => k !== "data" && k !== "bookings");

/** Object keys in a parsed value, at any depth. */
function keysIn(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + keysIn(v), 0);
  if (typeof value !== "object" || value === null) return 0;
  return Object.values(value).reduce((n: number, v) => n + 1 + keysIn(v), 0);
}

describe("recordTexts", () => {
  it("gives each element of data as it stands in the body, and its keys, whatever the layout", () => {
    fc.assert(
      fc.property(
        fc.array(anyJson, { maxLength: 6 }),
        fc.dictionary(otherKey, anyJson, { maxKeys: 3 }),
        fc.dictionary(otherKey, anyJson, { maxKeys: 3 }),
        layout,
        (data, before, after, indent) => {
          const body = JSON.stringify({ ...before, data, ...after }, null, indent);
          const texts = recordTexts(body, ["data"]);
          expect(texts).toHaveLength(data.length);
          texts?.forEach(({ text, keys }, i) => {
            const element = JSON.parse(JSON.stringify(data[i]));
            expect(body.includes(text)).toBe(true);
            expect(JSON.parse(text)).toEqual(element);
            expect(keys).toBe(keysIn(element));
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
          const texts = recordTexts(body, ["data", "bookings"]);
          expect(texts?.map((t) => JSON.parse(t.text))).toEqual(JSON.parse(JSON.stringify(bookings)));
        },
      ),
      { seed: SEED, numRuns: 300 },
    );
  });

  it("takes the last of a key given twice, as JSON.parse does", () => {
    fc.assert(
      fc.property(anyJson, fc.array(anyJson, { maxLength: 4 }), anyJson, (first, data, last) => {
        const texts = (body: string) => recordTexts(body, ["data"])?.map((t) => t.text);
        const earlier = `{"data":${JSON.stringify(first)},"data":${JSON.stringify(data)}}`;
        expect(texts(earlier)).toEqual(data.map((d) => JSON.stringify(d)));
        const later = `{"data":${JSON.stringify(data)},"data":${JSON.stringify(last)}}`;
        expect(texts(later)).toEqual(Array.isArray(last) ? last.map((d) => JSON.stringify(d)) : undefined);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it.each([
    ['{"data":[1,2],"data":[3, "x"]}', ["data"], ["3", '"x"']],
    ['{"d\\u0061ta":[{"a":1}]}', ["data"], ['{"a":1}']],
    ['{"x":"data","y":[1]}', ["data"], undefined],
    ['{"p":{"data":[1]}}', ["data"], undefined],
    ['{"data":{"a":[1]}}', ["data"], undefined],
    ["[[1]]", ["data"], undefined],
    ['{"data":[ ]}', ["data"], []],
    ['{"data":[1,2],"data":null}', ["data"], undefined],
    ['{"data":{"bookings":[1]},"data":{"x":[2]}}', ["data", "bookings"], undefined],
    ['{"data":{"bookings":[1],"bookings":"[2]"}}', ["data", "bookings"], undefined],
    ['{"data":{"bookings":[1]},"data":{"bookings":[2,3]}}', ["data", "bookings"], ["2", "3"]],
    ['{"data":[1]}', [], undefined],
    ['{"data":[ "a\\\\", "b\\"]" , {"c":"}"} ]}', ["data"], ['"a\\\\"', '"b\\"]"', '{"c":"}"}']],
    [
      '{"data":[ {"a" : [ 1 , {"b":2} ] } , 12345678901234567890.50 ]}',
      ["data"],
      ['{"a" : [ 1 , {"b":2} ] }', "12345678901234567890.50"],
    ],
    ['{"data":[{"a":"x:y","a":2}]}', ["data"], ['{"a":"x:y","a":2}']],
  ])("reads %s at %j", (body, path, expected) => {
    expect(recordTexts(body, path)?.map((t) => t.text)).toEqual(expected);
  });
});

describe("a record keeps its text as served", () => {
  const booking = { _id: "b1", createdAt: "2026-11-28T00:00:00.000Z", totalAmount: 10.5, paid: true };
  const served = (text: string) => recordTexts(`{"data":[${text}]}`, ["data"])?.[0];

  it("to the digit, when the text holds what the parsed record holds", () => {
    const text = '{"_id":"b1", "createdAt":"2026-11-28T00:00:00.000Z","totalAmount":10.50,"paid":true}';
    const checked = checkRecord(fullBookingSchema, JSON.parse(text), served(text));
    expect(checked).toMatchObject({ ok: true, text });
  });

  it("not when the text repeats a key, nor when bounds replaced part of the record", () => {
    const repeated = '{"_id":"b1","createdAt":"2026-11-28T00:00:00.000Z","paid":false,"paid":true}';
    const checked = checkRecord(fullBookingSchema, JSON.parse(repeated), served(repeated));
    expect(checked).toMatchObject({ ok: true, record: { paid: true } });
    expect(checked).not.toHaveProperty("text");
    const huge = JSON.stringify({ ...booking, branchName: "x".repeat(70_000) });
    const bounded = checkRecord(fullBookingSchema, JSON.parse(huge), served(huge));
    expect(bounded).not.toHaveProperty("text");
  });

  it("not when white space or escapes make the text larger than a record the bounds let through", () => {
    const padded = `{"_id":"b1",${" ".repeat(400_000)}"createdAt":"2026-11-28T00:00:00.000Z"}`;
    const escaped = JSON.stringify({ ...booking, branchName: "a".repeat(60_000) }).replace(
      /a{60000}/,
      "\\u0061".repeat(60_000),
    );
    for (const text of [padded, escaped]) {
      const checked = checkRecord(fullBookingSchema, JSON.parse(text), served(text));
      expect(checked).toMatchObject({ ok: true, id: "b1" });
      expect(checked).not.toHaveProperty("text");
    }
  });

  it("not when padding makes the body more than twice the texts: a page never holds more than that", () => {
    const list = (gap: string) =>
      `{"success":true,"data":[${JSON.stringify(booking)},${gap}${JSON.stringify(booking)}],"pagination":{"total":2,"page":1,"pageSize":10,"totalPages":1}}`;
    for (const [gap, kept] of [
      ["", true],
      [" ".repeat(10_000), false],
    ] as const) {
      const body = list(gap);
      const page = parseList(JSON.parse(body), body);
      const texts = page.ok ? page.page.records.map((r) => "text" in r) : [];
      expect(texts).toEqual([kept, kept]);
    }
  });

  it("not when the texts kept are under half the body, whatever made the rest not kept", () => {
    // Records padded with a key given twice: their texts are not kept, and must not count as kept.
    const padded = (k: number) =>
      `{"_id":"p${k}","createdAt":"2026-11-28T00:00:00.000Z","pad":"${"x".repeat(100_000)}","pad":1}`;
    const body = `{"success":true,"data":[${JSON.stringify(booking)},${[1, 2, 3].map(padded).join(",")}],"pagination":{"total":4,"page":1,"pageSize":10,"totalPages":1}}`;
    const page = parseList(JSON.parse(body), body);
    expect(page.ok && page.page.records.map((r) => "text" in r)).toEqual([false, false, false, false]);
  });

  it("through both endpoints' pages, given the body they were parsed from", () => {
    // A record of a real one's size: the envelope is a small part of the body.
    const record = { ...booking, branchName: "Bodija Branch ".repeat(40) };
    const feed = `{"success":true,"data":{"bookings":[${JSON.stringify(record)}],"nextCursor":null,"hasMore":false}}`;
    const list = `{"success":true,"data":[ ${JSON.stringify(record)} ],"pagination":{"total":1,"page":1,"pageSize":10,"totalPages":1}}`;
    const feedPage = parseFeed(JSON.parse(feed), feed);
    const listPage = parseList(JSON.parse(list), list);
    expect(feedPage.ok && feedPage.page.records[0]).toMatchObject({ text: JSON.stringify(record) });
    expect(listPage.ok && listPage.page.records[0]).toMatchObject({ text: JSON.stringify(record) });
    const withoutBody = parseList(JSON.parse(list));
    expect(withoutBody.ok && withoutBody.page.records[0]).not.toHaveProperty("text");
  });
});
