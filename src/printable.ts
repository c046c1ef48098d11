/**
 * Text from the source made safe to print for people. Error messages, reasons and booking fields
 * may hold terminal controls (`ESC ] 0;title BEL` retitles a window, `ESC [2J` clears the screen, a
 * CR overwrites the line, U+009B is CSI on its own); printed as text they act instead of showing.
 */

/** The escapes people know; every other control is shown as `\uXXXX`. */
const SHORT: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/**
 * `text` with every C0 control (U+0000-U+001F: ESC, BEL, CR, LF and TAB too), DEL, C1 control
 * (U+0080-U+009F) and lone surrogate (which UTF-8 cannot carry) shown as a visible escape such as
 * `\u001b`, `\r` or `\u009b`; everything else as it was. Idempotent: its output has no controls.
 * `keepNewlines` keeps LF as a line break (a multi-line field such as a stack).
 */
export function printable(text: string, options: { keepNewlines?: boolean | undefined } = {}): string {
  if (!hasUnsafe(text)) return text;
  let out = "";
  for (const char of text) out += visible(char, options.keepNewlines === true);
  return out;
}

/**
 * `printable(text)` in at most `maxChars` UTF-16 code units, ending with "…" when shortened. It cuts
 * only between whole characters of the printable text: never inside an escape it made (`\u001b` is
 * kept whole or left out whole) nor inside a surrogate pair, so no cut can open a sequence.
 */
export function printableShort(text: string, maxChars: number): string {
  const whole = printable(text);
  if (whole.length <= maxChars) return whole;
  if (maxChars < 1) return "";
  let out = "";
  for (const char of text) {
    const shown = visible(char, false);
    if (out.length + shown.length > maxChars - 1) break;
    out += shown;
  }
  return `${out}…`;
}

/**
 * JSON text with raw DEL and C1 controls, which `JSON.stringify` leaves as they are, written as
 * `\u00XX` escapes: the same JSON value, exactly, and nothing a terminal acts on. They can only occur
 * inside strings, where the escape means the same character.
 */
export function escapeJsonControls(json: string): string {
  return json.replace(/[\u007f-\u009f]/g, (c) => unicodeEscape(c.charCodeAt(0)));
}

/** One character (a code point, or a lone surrogate as `for…of` yields it) as it may be printed. */
function visible(char: string, keepNewlines: boolean): string {
  if (char.length === 2) return char; // a surrogate pair: an ordinary character beyond U+FFFF
  const code = char.charCodeAt(0);
  if (!isUnsafe(code) || (keepNewlines && char === "\n")) return char;
  return SHORT[char] ?? unicodeEscape(code);
}

/** Whether any code unit may need escaping (a surrogate is checked for its pair later). */
function hasUnsafe(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (isUnsafe(text.charCodeAt(i))) return true;
  return false;
}

function isUnsafe(code: number): boolean {
  return code < 0x20 || (code >= 0x7f && code <= 0x9f) || (code >= 0xd800 && code <= 0xdfff);
}

/** `\u001b`: four lower-case hex digits, as JSON writes them. */
function unicodeEscape(code: number): string {
  return `\\u${code.toString(16).padStart(4, "0")}`;
}
