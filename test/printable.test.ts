/** Text from the source made safe for a terminal: every control visible, cuts only between whole characters. */
import { describe, expect, it } from "vitest";
import { escapeJsonControls, printable, printableShort } from "../src/printable.js";
import { rawControls } from "./support/controls.js";

const ESC = "\u001b";
const BEL = "\u0007";
const CSI = "\u009b";
const HOSTILE = `quota ${ESC}]0;pwned${BEL}${ESC}[2J\rover${CSI}31m`;

/** Whether `text` holds a character a terminal may act on, or one UTF-8 cannot carry: none may survive. */
const CONTROL = { test: (text: string) => rawControls(text).length > 0 };

describe("printable", () => {
  it.each([
    ["plain text", "plain text"],
    ["", ""],
    ["naïve café ₦12,000 — 日本 😀", "naïve café ₦12,000 — 日本 😀"],
    [`${ESC}]0;title${BEL}`, "\\u001b]0;title\\u0007"],
    [`${ESC}[2J`, "\\u001b[2J"],
    ["a\rb", "a\\rb"],
    ["a\nb", "a\\nb"],
    ["a\tb", "a\\tb"],
    ["\u0000", "\\u0000"],
    ["\u001f", "\\u001f"],
    [" ~", " ~"],
    ["\u007f", "\\u007f"],
    [CSI, "\\u009b"],
    ["\u0080\u009f", "\\u0080\\u009f"],
    ["\u00a0¡", "\u00a0¡"],
    ["\ud83d", "\\ud83d"],
    ["x\ude00y", "x\\ude00y"],
    ["\ud83d\ude00", "\ud83d\ude00"],
    ["a\\u001b", "a\\u001b"],
    [HOSTILE, "quota \\u001b]0;pwned\\u0007\\u001b[2J\\rover\\u009b31m"],
  ])("%j prints as %j", (input, expected) => {
    expect(printable(input)).toBe(expected);
  });

  it("keeps line feeds where asked (a stack), and every other control still visible", () => {
    expect(printable(`Error: x${ESC}[2J\r\n    at f`, { keepNewlines: true })).toBe(
      "Error: x\\u001b[2J\\r\n    at f",
    );
  });

  it("leaves nothing a terminal acts on, for every code unit 0..0xFFFF", () => {
    const left: string[] = [];
    for (let code = 0; code <= 0xffff; code++) {
      if (CONTROL.test(printable(`a${String.fromCharCode(code)}b`))) left.push(code.toString(16));
    }
    expect(left).toEqual([]);
  });

  it("is idempotent: printing printed text changes nothing", () => {
    expect(printable(printable(HOSTILE))).toBe(printable(HOSTILE));
  });
});

describe("printableShort", () => {
  it.each([
    // text, max, expected
    ["short", 10, "short"],
    ["exactly10!", 10, "exactly10!"],
    ["eleven char", 10, "eleven ch…"],
    ["abc", 1, "…"],
    ["abc", 0, ""],
    // An escape that does not fit whole is left out whole, never cut.
    [`abcdefgh${ESC}xyz`, 10, "abcdefgh…"],
    [`abc${ESC}xyz`, 10, "abc\\u001b…"],
    [`ab${ESC}`, 10, "ab\\u001b"],
    [`abcdefg\rxyz`, 10, "abcdefg\\r…"],
    [`abcdefgh\rxyz`, 10, "abcdefgh…"],
    // A surrogate pair is one character: kept whole or left out.
    ["abcdefgh😀xyz", 10, "abcdefgh…"],
    ["abcdefg😀xyz", 10, "abcdefg😀…"],
  ])("%j in %i characters is %j", (text, max, expected) => {
    expect(printableShort(text, max)).toBe(expected);
  });

  it("never opens a sequence or splits a character, at any length", () => {
    const text = `${HOSTILE} 😀${CSI}${ESC}[0m end`;
    const whole = printable(text);
    for (let max = 0; max <= whole.length + 2; max++) {
      const out = printableShort(text, max);
      expect(out.length, `max ${max}`).toBeLessThanOrEqual(max);
      expect(CONTROL.test(out), `max ${max}`).toBe(false);
      // What precedes the ellipsis is a prefix of the whole printable text, ending between escapes.
      const kept = out.endsWith("…") ? out.slice(0, -1) : out;
      expect(whole.startsWith(kept), `max ${max}`).toBe(true);
      expect(kept, `max ${max}`).not.toMatch(/\\(u[0-9a-f]{0,3})?$/);
      if (max >= whole.length) expect(out).toBe(whole);
    }
  });
});

describe("escapeJsonControls", () => {
  it("escapes DEL and C1 controls inside JSON text, which JSON.stringify leaves raw: same value, nothing raw", () => {
    const value = { message: `a${CSI}b\u007f${ESC}c`, n: 1, nested: ["\u0085"] };
    const json = JSON.stringify(value);
    expect(json).toContain(CSI);
    const safe = escapeJsonControls(json);
    expect(safe).toBe('{"message":"a\\u009bb\\u007f\\u001bc","n":1,"nested":["\\u0085"]}');
    expect(JSON.parse(safe)).toEqual(value);
    expect(CONTROL.test(safe)).toBe(false);
  });

  it("leaves JSON without them as it was", () => {
    const json = JSON.stringify({ a: "plain ₦ 😀", b: "\\u009b literally" }, null, 2);
    expect(escapeJsonControls(json)).toBe(json);
  });
});
