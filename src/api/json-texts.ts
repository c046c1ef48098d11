/**
 * Where each record's text lies in a response body, found in its bytes before anything is parsed.
 *
 * The mirror keeps every record as received (`summary_json`, `detail_json`), and a page is read one
 * record at a time: each text is decoded and parsed on its own, validated, and its parsed form
 * dropped before the next (response.ts). Parsing the whole body at once kept a page's every
 * object, and the body as one string, alive until the last record was checked, long enough on a
 * busy backfill to be moved to the old generation: a 20,000-booking backfill at concurrency 8
 * promoted 80–100 MB there that way, against 47–59 MB read record by record. Records keep their
 * text as a view of the body's bytes, decoded again only as their rows are built: a page's texts
 * held as strings while the page was checked were copied by the collections meanwhile and then
 * promoted (126 MB promoted on the main thread in that backfill, against 67 MB as bytes).
 *
 * The scan only tells strings from structure: it does not check that the body is JSON. It is
 * built so that the body is exactly `envelope with [] in place of the array` with the elements
 * put back, separated by commas, so a caller that parses the envelope and every element has
 * parsed the whole body (an empty element, as in `[1,,2]`, or an array closed by `}` gives no
 * spans: neither would show in the parts). Structural characters
 * are ASCII and never occur inside a UTF-8 sequence, so bytes can be scanned as they are.
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

/** Index of the quote that closes the string opened at `open`, or -1 if the body ends first. */
function stringEnd(body: Uint8Array, open: number): number {
  const n = body.length;
  for (let k = open + 1; k < n; k++) {
    const c = body[k];
    if (c === QUOTE) return k;
    if (c === BACKSLASH) k++; // the escaped character, a quote or a backslash included
  }
  return -1;
}

/**
 * Index just past the object or array that opens at `open`, or -1 if the body ends first. Only
 * brackets are counted, of either kind, as the main scan counts them: whether they match is for
 * the element's own parse to say. Most of a page's bytes lie inside its elements, so they get
 * this loop, which looks at nothing else.
 */
function containerEnd(body: Uint8Array, open: number): number {
  const n = body.length;
  let depth = 0;
  for (let k = open; k < n; k++) {
    const c = body[k];
    if (c === QUOTE) {
      k = stringEnd(body, k);
      if (k < 0) return -1;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) depth++;
    else if ((c === CLOSE_OBJECT || c === CLOSE_ARRAY) && --depth === 0) return k + 1;
  }
  return -1;
}

/** Whether the string from quote `open` to quote `close` is `key`, escapes and all. */
function spells(body: Uint8Array, open: number, close: number, key: string): boolean {
  for (let k = open + 1; k < close; k++) {
    if (body[k] === BACKSLASH) {
      // Rare in keys: compare what the escapes stand for (an invalid escape is no key of ours).
      try {
        return JSON.parse(Buffer.from(body.subarray(open, close + 1)).toString("utf8")) === key;
      } catch {
        return false;
      }
    }
  }
  if (close - open - 1 !== key.length) return false;
  // The path's keys are ASCII.
  for (let k = 0; k < key.length; k++) if (body[open + 1 + k] !== key.charCodeAt(k)) return false;
  return true;
}

/** The elements of an array in a body: byte offsets, and where the array itself lies. */
export interface ArraySpans {
  /** Start and end (exclusive) of each element, without surrounding whitespace: 2 numbers each. */
  spans: number[];
  /** Offsets of the array's `[` and `]`. */
  open: number;
  close: number;
}

/**
 * Finds the array reached by following object keys `path` (at least one) from the top of `body`
 * (for `["data"]`: `{"data": [a, b]}` gives the spans of a and b), in order. As with `JSON.parse`,
 * a key given twice means its last value: an array that a later value of the same key replaces
 * gives nothing. Undefined when there is no such array, or the bytes cannot be JSON there (a
 * string left open, an empty element).
 */
export function arrayElementSpans(body: Uint8Array, path: readonly string[]): ArraySpans | undefined {
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
  let found: ArraySpans | undefined;
  let current: number[] = [];
  let open = -1;
  let start = -1;
  let broken = false;
  let i = 0;
  const endOfElement = (at: number) => {
    if (start < 0) {
      broken = true; // nothing between two commas, or after the last one
      return;
    }
    let end = at;
    while (end > start && isSpace(body[end - 1] as number)) end--;
    current.push(start, end);
    start = -1;
  };
  /** A value of the path's key begins: it replaces whatever an earlier one of that key held. */
  const pathValue = () => {
    const matched = keyMatches;
    if (matched) found = undefined;
    keyMatches = false;
    inValue = false;
    return matched;
  };
  const inTarget = () => onPath === target && depth === target;
  const inPathObject = () => onPath > 0 && onPath < target && depth === onPath;
  while (i < n) {
    const c = body[i] as number;
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
      if (inTarget()) {
        // An element (or part of one): skipped whole, back at the array's depth after it.
        if (start < 0) start = i;
        i = containerEnd(body, i);
        if (i < 0) return undefined;
        continue;
      }
      const follows = inPathObject() && pathValue();
      depth++;
      if (depth === 1) {
        if (c === OPEN_OBJECT) onPath = 1;
      } else if (follows) {
        // The value of the path's next key: an object to go on into, or at the end, the array.
        const last = depth === target;
        if ((last && c === OPEN_ARRAY) || (!last && c === OPEN_OBJECT)) {
          onPath = depth;
          if (last) {
            current = [];
            open = i;
            broken = false;
          }
        }
      }
      i++;
      continue;
    }
    if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (inTarget()) {
        // The closer is left out of both the envelope and the elements: it must be the array's.
        if (c !== CLOSE_ARRAY) return undefined;
        // `[]` and `[ ]` have no element; `[1,]` has an empty last one.
        if (start >= 0 || current.length > 0) endOfElement(i);
        found = broken ? undefined : { spans: current, open, close: i };
      }
      depth--;
      if (depth < 0) return undefined;
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
  return found;
}
