/**
 * The text of each record as it arrived, cut from the response body. The mirror keeps every record
 * as received (`summary_json`, `detail_json`); serialising the parsed record again costs about as
 * much as parsing it did, while one pass over the body, jumping from quote to quote, costs a third
 * of that and allocates next to nothing (the texts are slices of the body).
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
 * The texts of the elements of the array found by following object keys `path` from the top of
 * `body` (for `["data"]`: `{"data": [a, b]}` gives the texts of a and b), in order, without
 * surrounding whitespace. As `JSON.parse` does, a key given twice means its last value.
 * Undefined when there is no such array or the scan cannot be sure (see above).
 */
export function arrayElementTexts(body: string, path: readonly string[]): string[] | undefined {
  const n = body.length;
  const target = path.length + 1; // the array's depth: the top-level object is depth 1
  let depth = 0;
  /** Open containers that lie on the path: the top-level object, then each one `path` leads to. */
  let onPath = 0;
  /** The last string directly inside the deepest on-path object is the next key of the path. */
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
  while (i < n) {
    const c = body.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(body, i);
      if (end < 0) return undefined;
      if (onPath === target && depth === target) {
        if (start < 0) start = i;
      } else if (depth === onPath && onPath > 0 && onPath < target) {
        keyMatches = spells(body, i, end, path[onPath - 1] as string);
      }
      i = end + 1;
      continue;
    }
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (onPath === target && depth === target && start < 0) start = i;
      depth++;
      if (depth === 1 && c === OPEN_OBJECT) onPath = 1;
      else if (depth === onPath + 1 && keyMatches) {
        // The value of the path's next key: an object to go on into, or at the end, the array.
        const last = depth === target;
        if ((last && c === OPEN_ARRAY) || (!last && c === OPEN_OBJECT)) {
          onPath = depth;
          if (last) current = [];
        }
      }
      keyMatches = false;
      i++;
      continue;
    }
    if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (onPath === target && depth === target) {
        if (start >= 0) endOfElement(i);
        texts = current;
      }
      depth--;
      if (onPath > depth) onPath = depth;
      keyMatches = false;
      i++;
      continue;
    }
    if (onPath === target && depth === target) {
      if (c === COMMA) endOfElement(i);
      else if (start < 0 && !isSpace(c)) start = i;
    }
    i++;
  }
  return texts;
}
