/** The transport rules of DESIGN-NOTES invariant 7: which API URLs and hosts are acceptable, and loopback. */
import { BlockList, isIP } from "node:net";
import { ConfigError } from "../errors.js";

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

/** What loopback means here, for messages and `--help`. */
export const LOOPBACK_HOSTS = "localhost, 127.0.0.0/8 or ::1";

/** True for `localhost`, 127.0.0.0/8 and `::1` (bracketed or IPv4-mapped too); no name is resolved. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  if (h === "localhost") return true;
  const family = isIP(h);
  return family !== 0 && LOOPBACK.check(h, family === 4 ? "ipv4" : "ipv6");
}

/** `raw` with any `user:password@` replaced by `***@` (slashes optional, as the URL parser reads them). */
export function maskUserinfo(raw: string): string {
  const masked = raw.replace(/^(\s*[a-z][a-z0-9+.-]*:[/\\]*)[^/?#\\]*@/i, "$1***@");
  const url = URL.canParse(masked.trim()) ? new URL(masked.trim()) : undefined;
  // Whatever the pattern missed, a parser would still find: quote nothing of it then.
  if (url && (url.password || (url.username && url.username !== "***"))) return "(a URL with credentials)";
  return masked;
}

/**
 * Why the token must not be sent to `url`, or undefined; `allowInsecure` is BOOKING_API_ALLOW_INSECURE.
 * `expected` is what would be accepted, the last words of the error; `hint` the fix, after "Try: ".
 */
export function apiUrlProblem(
  url: string,
  allowInsecure: boolean,
): { expected: string; hint: string } | undefined {
  const u = new URL(url);
  const fixed = new URL(url);
  fixed.username = "";
  fixed.password = "";
  if (u.username || u.password) {
    return {
      expected:
        "a URL without user:password@ (booking-sync authenticates with BOOKING_API_TOKEN or BOOKING_API_TOKEN_FILE)",
      hint: `remove the credentials, e.g. ${fixed.href.replace(/\/+$/, "")}, and put the token in BOOKING_API_TOKEN or BOOKING_API_TOKEN_FILE`,
    };
  }
  if (u.protocol === "http:" && !allowInsecure && !isLoopbackHost(u.hostname)) {
    fixed.protocol = "https:";
    return {
      expected: `an https URL (plain http only to ${LOOPBACK_HOSTS}, or with BOOKING_API_ALLOW_INSECURE=true)`,
      hint: `use ${fixed.href.replace(/\/+$/, "")}, or set BOOKING_API_ALLOW_INSECURE=true for a test rig on a network you trust`,
    };
  }
  return undefined;
}

/**
 * The URL if `value` names a PostgreSQL database (`postgres:` or `postgresql:`), else undefined.
 * One that does not parse is refused without echoing it, nor its parser's error (which quotes it):
 * its password could not be hidden.
 */
export function postgresUrl(value: string): URL | undefined {
  if (!/^postgres(ql)?:/i.test(value.trim())) return undefined;
  try {
    return new URL(value.trim());
  } catch {
    throw new ConfigError("the PostgreSQL URL does not parse", {
      hint: "write it as postgres://USER@HOST:5432/DATABASE (percent-encode special characters)",
    });
  }
}
