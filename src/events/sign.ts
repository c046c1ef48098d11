/**
 * Signing per Standard Webhooks with its reference library. During a secret rotation
 * `EVENTS_WEBHOOK_SECRET` holds several secrets and every message carries a signature for each, so
 * a receiver that knows either one accepts it.
 */
import { Webhook } from "standardwebhooks";
import { ConfigError } from "../errors.js";

const SETTING = "EVENTS_WEBHOOK_SECRET";
const HINT = `set ${SETTING} (or ${SETTING}_FILE) to one or more whsec_<base64> secrets separated by spaces`;

/** Signs a message: the `webhook-signature` header's value for `id`, the attempt's `at`, and `body`. */
export type Signer = (id: string, at: Date, body: string) => string;

/**
 * The secrets in `text` (one or more `whsec_…`, separated by whitespace), each checked by the
 * library itself. Throws a ConfigError that names the setting and which secret, never its value.
 */
export function parseSecrets(text: string): string[] {
  const secrets = text.split(/\s+/).filter(Boolean);
  if (secrets.length === 0) throw new ConfigError(`${SETTING} is empty`, { hint: HINT });
  secrets.forEach((secret, i) => void webhookFor(secret, i, secrets.length));
  return secrets;
}

/** A signer for `secrets` (at least one, as `parseSecrets` returns them); throws a ConfigError for a bad one. */
export function signer(secrets: readonly string[]): Signer {
  if (secrets.length === 0) throw new ConfigError(`${SETTING} is empty`, { hint: HINT });
  const hooks = secrets.map((secret, i) => webhookFor(secret, i, secrets.length));
  // The spec's header: every `v1,<base64>` signature, space-separated.
  return (id, at, body) => hooks.map((hook) => hook.sign(id, at, body)).join(" ");
}

function webhookFor(secret: string, index: number, count: number): Webhook {
  const which = count > 1 ? ` (secret ${index + 1} of ${count})` : "";
  if (!secret.startsWith("whsec_")) {
    throw new ConfigError(`${SETTING}${which} does not start with whsec_`, { hint: HINT });
  }
  // The library decodes the base64 after the prefix; a secret it cannot use would fail every message.
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(secret.slice("whsec_".length))) {
    throw new ConfigError(`${SETTING}${which} is not base64 after whsec_`, { hint: HINT });
  }
  try {
    return new Webhook(secret);
  } catch (err) {
    throw new ConfigError(`${SETTING}${which} cannot be used: ${(err as Error).message}`, { hint: HINT });
  }
}
