/** Where events may go: the rule the delivery loop checks at start and each attempt checks again. */
import { isLoopbackHost, LOOPBACK_HOSTS } from "../config/transport.js";

/**
 * Why events may not be sent to `url`, or undefined: not an http(s) URL, or plain http to a host
 * beyond loopback without `allowInsecure`. The reason quotes the origin only.
 */
export function webhookUrlProblem(url: string, allowInsecure: boolean): string | undefined {
  const u = URL.canParse(url) ? new URL(url) : undefined;
  if (!u || (u.protocol !== "https:" && u.protocol !== "http:")) {
    return "EVENTS_WEBHOOK_URL is not an http(s) URL; expected e.g. https://app.example/hooks/bookings";
  }
  if (u.protocol === "http:" && !allowInsecure && !isLoopbackHost(u.hostname)) {
    return (
      `EVENTS_WEBHOOK_URL is plain http to ${u.origin}: events go over https only (plain http to ` +
      `${LOOPBACK_HOSTS}, or with EVENTS_WEBHOOK_ALLOW_INSECURE=true)`
    );
  }
  return undefined;
}
