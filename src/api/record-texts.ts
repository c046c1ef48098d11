/**
 * Each record's JSON text as the source served it, cut from a body `JSON.parse` has just read. The
 * mirror stores that text (`summary_json`, `detail_json`) rather than writing the parsed record out
 * again: the text is what the source served, to the digit (a number past a double's precision, a
 * `10.50`, an escape), and a fill no longer pays for a second serialisation of every record.
 *
 * The body is known to be JSON, so the scan only tells strings from structure. It follows object
 * keys to the records' array as `JSON.parse` reads them (the last of a repeated key wins), and counts
 * the keys in each element: the caller compares that with the parsed record's, so a record that
 * repeats a key, whose text says two things where its parsed form says one, is never stored as text.
 * A text is a slice of the body, which stays in memory as long as any record of its page does: until
 * the page is written.
 */

const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_OBJECT = 123;
const CLOSE_OBJECT = 125;
const OPEN_ARRAY = 91;
const CLOSE_ARRAY = 93;
const COMMA = 44;
const COLON = 58;

/** An element of the records' array: its text, and how many object keys it holds at any depth. */
export interface RecordText {
  text: string;
  keys: number;
}

const isSpace = (c: number) => c === 32 || c === 10 || c === 13 || c === 9;

function skipSpace(body: string, i: number): number {
  let k = i;
  while (k < body.length && isSpace(body.charCodeAt(k))) k++;
  return k;
}

/** Index just past the string whose opening quote is at `open`; -1 if it never closes. */
function stringEnd(body: string, open: number): number {
  let from = open + 1;
  for (;;) {
    const quote = body.indexOf('"', from);
    if (quote < 0) return -1;
    // Escaped only by an odd run of backslashes; the opening quote bounds the run.
    let k = quote - 1;
    while (body.charCodeAt(k) === BACKSLASH) k--;
    if ((quote - 1 - k) % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/**
 * Index just past the value that starts at `i`; -1 if the body ends first. Adds the object keys in it
 * to `seen.keys`: outside strings, each colon of valid JSON follows one key.
 */
function valueEnd(body: string, i: number, seen: { keys: number }): number {
  const first = body.charCodeAt(i);
  if (first === QUOTE) return stringEnd(body, i);
  const n = body.length;
  let k = i;
  if (first !== OPEN_OBJECT && first !== OPEN_ARRAY) {
    // A number, true, false or null: up to what ends it.
    while (k < n) {
      const c = body.charCodeAt(k);
      if (c === COMMA || c === CLOSE_OBJECT || c === CLOSE_ARRAY || isSpace(c)) break;
      k++;
    }
    return k;
  }
  let depth = 0;
  let keys = 0;
  while (k < n) {
    const c = body.charCodeAt(k);
    if (c === QUOTE) {
      k = stringEnd(body, k);
      if (k < 0) return -1;
      continue;
    }
    if (c === COLON) keys++;
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) depth++;
    else if ((c === CLOSE_OBJECT || c === CLOSE_ARRAY) && --depth === 0) {
      seen.keys += keys;
      return k + 1;
    }
    k++;
  }
  return -1;
}

/** Whether the string from quote `open` to index `end` (past its closing quote) reads as `key`. */
function spells(body: string, open: number, end: number, key: string): boolean {
  if (end - open - 2 === key.length && body.startsWith(key, open + 1)) return true;
  // An escape can spell any key: what it stands for is what JSON.parse keyed.
  const quoted = body.slice(open, end);
  return quoted.includes("\\") && JSON.parse(quoted) === key;
}

/** A part read: what was found in it (undefined for nothing) and the index just past it. */
type Read = { texts: RecordText[] | undefined; end: number } | undefined;

/** The elements of the array that opens at `open`. */
function elements(body: string, open: number): Read {
  const texts: RecordText[] = [];
  let k = skipSpace(body, open + 1);
  if (body.charCodeAt(k) === CLOSE_ARRAY) return { texts, end: k + 1 };
  for (;;) {
    const seen = { keys: 0 };
    const end = valueEnd(body, k, seen);
    if (end < 0) return undefined;
    texts.push({ text: body.slice(k, end), keys: seen.keys });
    k = skipSpace(body, end);
    const c = body.charCodeAt(k);
    if (c === CLOSE_ARRAY) return { texts, end: k + 1 };
    if (c !== COMMA) return undefined;
    k = skipSpace(body, k + 1);
  }
}

/** The object that opens at `open`, read for the array `path` (from `level` on) leads to. */
function member(body: string, open: number, path: readonly string[], level: number): Read {
  const key = path[level] as string;
  const last = level === path.length - 1;
  let texts: RecordText[] | undefined;
  let k = skipSpace(body, open + 1);
  if (body.charCodeAt(k) === CLOSE_OBJECT) return { texts, end: k + 1 };
  for (;;) {
    if (body.charCodeAt(k) !== QUOTE) return undefined;
    const keyEnd = stringEnd(body, k);
    if (keyEnd < 0) return undefined;
    const matches = spells(body, k, keyEnd, key);
    k = skipSpace(body, keyEnd);
    if (body.charCodeAt(k) !== COLON) return undefined;
    k = skipSpace(body, k + 1);
    const c = body.charCodeAt(k);
    let end: number;
    if (matches && (last ? c === OPEN_ARRAY : c === OPEN_OBJECT)) {
      const read = last ? elements(body, k) : member(body, k, path, level + 1);
      if (read === undefined) return undefined;
      ({ texts, end } = read);
    } else {
      // A later value of the key replaces the array an earlier one led to.
      if (matches) texts = undefined;
      end = valueEnd(body, k, { keys: 0 });
      if (end < 0) return undefined;
    }
    k = skipSpace(body, end);
    const next = body.charCodeAt(k);
    if (next === CLOSE_OBJECT) return { texts, end: k + 1 };
    if (next !== COMMA) return undefined;
    k = skipSpace(body, k + 1);
  }
}

/**
 * The texts of the elements of the array that object keys `path` lead to from the top of `body`, in
 * order (`["data", "bookings"]`: `{"data": {"bookings": [a, b]}}` gives a's and b's). Undefined when
 * no array is there or the body is not JSON after all.
 */
export function recordTexts(body: string, path: readonly string[]): RecordText[] | undefined {
  const open = skipSpace(body, 0);
  if (path.length === 0 || body.charCodeAt(open) !== OPEN_OBJECT) return undefined;
  return member(body, open, path, 0)?.texts;
}
