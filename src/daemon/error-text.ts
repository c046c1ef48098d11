/**
 * Errors as one line for logs and the /readyz body: the message and its causes, never a stack
 * (stacks are for debug level only).
 */
import { coerceError } from "../errors.js";

/**
 * The error's message followed by each cause's message that it does not already contain,
 * e.g. "sync stream all: fetch page 3: HTTP 503". Walks at most 10 causes.
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
  return parts.join(": ");
}
