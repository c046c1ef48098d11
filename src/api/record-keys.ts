/**
 * Finds, as a body streams by, the `_id` and `createdAt` of the first record at the record's own top
 * level: the contract puts `createdAt` after `receiver` in the summary view and after `packages` in
 * the full one, so in a record too large to keep they may sit anywhere in it, and a nested item's
 * `_id` or `createdAt` may come first. A small JSON tokenizer over strings and nesting, in constant
 * memory (a string is kept only while it could be a key or one of the two values).
 */

/** Longest string kept: keys, ids and times are far shorter. */
const KEEP = 1024;

export class RecordKeys {
  readonly found: { _id?: string; createdAt?: string } = {};
  /** Open containers, and the key each sits under in its parent object (null in an array or at the root). */
  #stack: Array<{ array: boolean; key: string | null }> = [];
  #inString = false;
  #escaped = false;
  #text = "";
  #afterColon = false;
  #key: string | null = null;
  #done = false;

  /** `path`: the keys from the body's root to the records array (`["data", "bookings"]` for the feed, `["data"]` for the list). */
  constructor(private readonly path: readonly string[]) {}

  /** Whether both were found, or the first record ended: nothing more to read. */
  get done(): boolean {
    return this.#done || (this.found._id !== undefined && this.found.createdAt !== undefined);
  }

  /** Reads the next piece of the body's text. */
  push(chunk: string): void {
    for (let i = 0; i < chunk.length && !this.done; i++) {
      if (this.#inString) i = this.#string(chunk, i);
      else this.#token(chunk.charCodeAt(i));
    }
  }

  /** Reads string content from `i`, jumping to the next quote or backslash; returns the last index read. */
  #string(chunk: string, i: number): number {
    if (this.#escaped) {
      this.#escaped = false;
      this.#keep(chunk[i] as string);
      return i;
    }
    let end = i;
    while (end < chunk.length && chunk[end] !== '"' && chunk[end] !== "\\") end++;
    this.#keep(chunk.slice(i, end));
    if (end === chunk.length) return end - 1;
    if (chunk[end] === "\\") {
      this.#escaped = true;
      this.#keep("\\");
      return end;
    }
    this.#inString = false;
    this.#closeString();
    return end;
  }

  #keep(piece: string): void {
    if (this.#text.length <= KEEP) this.#text += piece.slice(0, KEEP + 1 - this.#text.length);
  }

  #closeString(): void {
    const top = this.#stack.at(-1);
    const text = this.#text.length > KEEP ? null : this.#text;
    if (top && !top.array && !this.#afterColon) {
      this.#key = text;
      return;
    }
    const key = this.#key;
    // A value with an escape is left out: the record checks' patterns never read one either.
    if (this.#atRecord() && (key === "_id" || key === "createdAt") && text !== null && !text.includes("\\"))
      this.found[key] ??= text;
  }

  #token(c: number): void {
    if (c === 0x22) {
      this.#inString = true;
      this.#text = "";
    } else if (c === 0x3a) this.#afterColon = true;
    else if (c === 0x2c || c === 0x7b || c === 0x5b || c === 0x7d || c === 0x5d) {
      if (c === 0x7b || c === 0x5b) {
        const top = this.#stack.at(-1);
        this.#stack.push({ array: c === 0x5b, key: top && !top.array ? this.#key : null });
      } else if (c !== 0x2c) {
        if (this.#atRecord()) this.#done = true;
        this.#stack.pop();
      }
      // A comma or a bracket ends the key and value in progress.
      this.#afterColon = false;
      this.#key = null;
    }
  }

  /** Whether the innermost container is the first record's own object. */
  #atRecord(): boolean {
    const s = this.#stack;
    const n = this.path.length;
    if (s.length !== n + 2 || s[n + 1]?.array !== false || s[n]?.array !== true || s[0]?.array) return false;
    return this.path.every((key, k) => s[k + 1]?.key === key);
  }
}
