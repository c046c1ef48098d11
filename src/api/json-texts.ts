/**
 * The text of each record as it arrived, cut from the response body. The mirror keeps every record
 * as received (`summary_json`, `detail_json`); serialising the parsed record again costs about as
 * much as parsing it did, while one pass over the body, jumping from quote to quote, costs about
 * half of that and allocates next to nothing (the texts are slices of the body).
 *
 * The body has already been parsed by `JSON.parse`, so it is known to be valid JSON; the scan only
 * has to tell strings from structure. When it finds no such array, or the caller finds its count
 * differs from the parsed array's, the caller serialises the parsed records instead.
 */

const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_OBJECT = 123;
const CLOSE_OBJECT = 125;
const OPEN_ARRAY = 91;
const CLOSE_ARRAY = 93;
const COMMA = 44;
const COLON = 58;

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

/** Index of the quote that closes the string opened at `open`. */
function stringEnd(body: string, open: number): number {
  let end = body.indexOf('"', open + 1);
  // A quote preceded by an odd number of backslashes is part of the string.
  while (body.charCodeAt(end - 1) === BACKSLASH) {
    let k = end - 1;
    while (body.charCodeAt(k) === BACKSLASH) k--;
    if ((end - 1 - k) % 2 === 0) break;
    end = body.indexOf('"', end + 1);
  }
  return end;
}

/** Whether the string from quote `open` to quote `close` is `key`, escapes and all. */
function spells(body: string, open: number, close: number, key: string): boolean {
  for (let k = open + 1; k < close; k++) {
    // Rare in keys: compare what the escapes stand for.
    if (body.charCodeAt(k) === BACKSLASH) return JSON.parse(body.slice(open, close + 1)) === key;
  }
  return close - open - 1 === key.length && body.startsWith(key, open + 1);
}

/**
 * The texts of the elements of the array found by following object keys `path` (at least one)
 * from the top of `body` (for `["data"]`: `{"data": [a, b]}` gives the texts of a and b), in
 * order, without surrounding whitespace. As with `JSON.parse`, a key given twice means its last
 * value: an array that a later value of the same key replaces gives nothing. Undefined when there
 * is no such array.
 */
export function arrayElementTexts(body: string, path: readonly string[]): string[] | undefined {
  if (path.length === 0) return undefined;
  const n = body.length;
  const target = path.length + 1; // the array's depth: the top-level object is depth 1
  let depth = 0;
  /** Open containers that lie on the path: the top-level object, then each one `path` leads to. */
  let onPath = 0;
  /** In the deepest on-path object: a colon was passed, so what comes next is a value, not a key. */
  let inValue = false;
  /** ...and the key of that value is the path's next one. */
  let keyMatches = false;
  let texts: string[] | undefined;
  let current: string[] = [];
  let start = -1;
  let i = 0;
  const endOfElement = (at: number) => {
    let end = at;
    while (end > start && isSpace(body.charCodeAt(end - 1))) end--;
    current.push(body.slice(start, end));
    start = -1;
  };
  /** A value of the path's key begins: it replaces whatever an earlier one of that key held. */
  const pathValue = () => {
    const matched = keyMatches;
    if (matched) texts = undefined;
    keyMatches = false;
    inValue = false;
    return matched;
  };
  const inTarget = () => onPath === target && depth === target;
  const inPathObject = () => onPath > 0 && onPath < target && depth === onPath;
  while (i < n) {
    const c = body.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(body, i);
      if (end < 0) return undefined;
      if (inTarget()) {
        if (start < 0) start = i;
      } else if (inPathObject()) {
        if (inValue) pathValue();
        else keyMatches = spells(body, i, end, path[onPath - 1] as string);
      }
      i = end + 1;
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (inTarget() && start < 0) start = i;
      const follows = inPathObject() && pathValue();
      depth++;
      if (depth === 1) {
        if (c === OPEN_OBJECT) onPath = 1;
      } else if (follows) {
        // The value of the path's next key: an object to go on into, or at the end, the array.
        const last = depth === target;
        if ((last && c === OPEN_ARRAY) || (!last && c === OPEN_OBJECT)) {
          onPath = depth;
          if (last) current = [];
        }
      }
      i++;
      continue;
    }
    if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (inTarget()) {
        if (start >= 0) endOfElement(i);
        texts = current;
      }
      depth--;
      if (onPath > depth) onPath = depth;
      inValue = false;
      keyMatches = false;
      i++;
      continue;
    }
    if (inTarget()) {
      if (c === COMMA) endOfElement(i);
      else if (start < 0 && !isSpace(c)) start = i;
    } else if (inPathObject() && !isSpace(c)) {
      if (c === COLON) inValue = true;
      else if (c === COMMA) keyMatches = false;
      else if (inValue) pathValue(); // a number, true, false or null
    }
    i++;
  }
  return texts;
}
