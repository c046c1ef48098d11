/** The package's version, read once from package.json (for `--version` and the User-Agent). */
import { readFileSync } from "node:fs";

export const PACKAGE_VERSION = readPackageVersion();

function readPackageVersion(): string {
  try {
    // src/ and dist/ both sit one level below the package root.
    const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    return typeof version === "string" ? version : "0.0.0";
  } catch {
    return "0.0.0";
  }
}
