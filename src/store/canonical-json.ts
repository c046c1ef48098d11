/**
 * A value's canonical JSON text (object keys in code-unit order, no white space), written by an
 * explicit stack: a record may nest 200,000 levels deep, where `JSON.stringify` and anything
 * recursive overflow the call stack. The text comes in chunks, so a hash can take a large value
 * without holding its text whole.
 */

type Frame =
  | { readonly items: readonly unknown[]; next: number }
  | { readonly object: Readonly<Record<string, unknown>>; readonly keys: readonly string[]; next: number };

/** Text is handed on once this many characters are waiting. */
const CHUNK_CHARS = 64 * 1024;

/** Whether `JSON.stringify` would leave this member of an object out. */
const omitted = (v: unknown) => v === undefined || typeof v === "function" || typeof v === "symbol";

/**
 * Yields the canonical JSON text of `value` in pieces; their concatenation equals
 * `JSON.stringify(value)` with every object's keys sorted. Memory grows with the nesting (one small
 * frame a level) and one chunk, never with the call stack.
 */
export function* canonicalJson(value: unknown): Generator<string> {
  const stack: Frame[] = [];
  let text = "";
  /** Writes a scalar whole, or opens a container (its members are written as the stack unwinds). */
  const write = (v: unknown): void => {
    if (Array.isArray(v)) {
      text += "[";
      stack.push({ items: v, next: 0 });
    } else if (typeof v === "object" && v !== null) {
      const object = v as Record<string, unknown>;
      text += "{";
      const keys = Object.keys(object).filter((k) => !omitted(object[k]));
      stack.push({ object, keys: keys.sort(), next: 0 });
    } else text += omitted(v) ? "null" : JSON.stringify(v);
  };
  write(value);
  while (stack.length > 0) {
    if (text.length >= CHUNK_CHARS) {
      yield text;
      text = "";
    }
    const top = stack[stack.length - 1] as Frame;
    const length = "items" in top ? top.items.length : top.keys.length;
    if (top.next === length) {
      text += "items" in top ? "]" : "}";
      stack.pop();
      continue;
    }
    const at = top.next++;
    if (at > 0) text += ",";
    if ("items" in top) write(top.items[at]);
    else {
      const key = top.keys[at] as string;
      text += `${JSON.stringify(key)}:`;
      write(top.object[key]);
    }
  }
  if (text !== "") yield text;
}
