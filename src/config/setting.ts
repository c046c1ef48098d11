/** What a row of the settings table (settings.ts) says about one setting. */
import type { z } from "zod";

export interface Setting {
  /** Key in the Config object. */
  key: string;
  /** Environment variable; null for flag-only settings. */
  env: string | null;
  /** Older names of `env`, read as well; two of them set to different values are a config error. */
  aliases?: readonly string[];
  /** Commander option key (camelCase) that overrides the environment; none when omitted. */
  flag?: string;
  /** Parses and validates the raw string (or flag value). */
  schema: z.ZodType;
  /** Used when neither flag nor environment sets it; undefined (unset) when omitted. */
  default?: string | number | boolean;
  /** The default as `--help` and errors write it, where `String(default)` would not (an octal mode). */
  shownDefault?: string;
  /** What is accepted, as the last words of an error and in `--help`. */
  accepts: string;
  /** One line for `--help`. */
  help: string;
  /** Its value never appears in output or errors. */
  secret?: boolean;
  /** It has no default: an error must not suggest unsetting it. */
  required?: boolean;
  /** What leaving it unset does, when it has no default value, e.g. "to sync all booking types". */
  unset?: string;
}
