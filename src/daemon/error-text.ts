import { coerceError } from "../errors.js";
import { printable } from "../printable.js";

/**
 * An error as one line for logs and /readyz, never a stack: its message and each cause's it does not
 * already contain, e.g. "sync stream all: fetch page 3: HTTP 503". At most 10 causes. Messages quote
 * the source, so the line is `printable`: a CR, LF or escape sequence shows as `\r`, `\n`, `\u001b`.
 */
export function errorText(err: unknown): string {
  const parts: string[] = [];
  let current: unknown = err;
  for (let depth = 0; current !== undefined && current !== null && depth < 10; depth++) {
    const e = coerceError(current);
    const message = e.message || e.name;
    if (!parts.some((part) => part.includes(message))) parts.push(message);
    // coerceError wraps non-errors with the original as cause; stop there instead of repeating it.
    current = current instanceof Error ? current.cause : undefined;
  }
  return printable(parts.join(": "));
}
