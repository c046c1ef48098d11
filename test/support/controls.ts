/** Finds what a terminal would act on in printed text: the oracle of the printable tests. */

/** The hostile server's message: a window title, a screen clear, a CR and C1 CSIs (one before "31m"). */
export const HOSTILE_MESSAGE = `quota ${"\u001b"}]0;pwned${"\u0007"}${"\u001b"}[2J\rOVERWRITTEN${"\u009b"}31m${"\u009b".repeat(12)} end`;

/**
 * Each raw control in `text` (C0, DEL, C1, or a lone surrogate), as "U+001B at 12"; `allow` lists
 * characters that may stay (a line feed between lines). Empty when nothing can act.
 */
export function rawControls(text: string, allow = ""): string[] {
  const found: string[] = [];
  let at = 0;
  for (const char of text) {
    const code = char.charCodeAt(0);
    const lone = char.length === 1 && code >= 0xd800 && code <= 0xdfff;
    const control = code < 0x20 || (code >= 0x7f && code <= 0x9f) || lone;
    if (control && !allow.includes(char)) {
      found.push(`U+${code.toString(16).padStart(4, "0").toUpperCase()} at ${at}`);
    }
    at += char.length;
  }
  return found;
}

/** ESC [ n m: the colour sequences pino-pretty writes on a terminal (built so no regex literal holds ESC). */
const SGR = new RegExp(`${String.fromCharCode(0x1b)}\\[\\d+m`, "g");

/** `text` without colour sequences, and how many there were. */
export function withoutColours(text: string): { text: string; colours: number } {
  return { text: text.replace(SGR, ""), colours: text.match(SGR)?.length ?? 0 };
}
