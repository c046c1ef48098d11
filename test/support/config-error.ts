/** The ConfigError `fn` throws; fails the test when it throws nothing, or something else. */
import { ConfigError } from "../../src/errors.js";

export function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error("expected a ConfigError");
}
