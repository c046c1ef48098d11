/** The settings of the booking events stream (pull and push): rows of the one table in settings.ts. */
import { z } from "zod";
import { ConfigError } from "../errors.js";
import { MAX_BATCH } from "../events/message.js";
import { parseSecrets } from "../events/sign.js";
import { webhookUrlProblem } from "../events/webhook-url.js";
import type { Setting } from "./setting.js";
import { bool, int } from "./values.js";

export const EVENT_SETTINGS = [
  {
    key: "eventsRetentionDays",
    env: "EVENTS_RETENTION_DAYS",
    schema: int(0, 3650),
    default: 30,
    accepts: "whole days from 0 to 3650",
    help: "days booking events are kept once delivered (0: no events are recorded)",
  },
  {
    key: "eventsMaxUndelivered",
    env: "EVENTS_MAX_UNDELIVERED",
    schema: int(1000, 1_000_000_000),
    default: 1_000_000,
    accepts: "a whole number from 1000",
    help: "most events kept waiting for the webhook; past it the oldest are dropped, with a warning",
  },
  {
    key: "eventsToken",
    env: "EVENTS_TOKEN",
    schema: z.string().min(1),
    accepts: "a non-empty shared secret",
    help: "bearer token GET /events requires (unset: open on loopback, refused beyond)",
    secret: true,
  },
  {
    key: "eventsTokenFile",
    env: "EVENTS_TOKEN_FILE",
    schema: z.string().min(1),
    accepts: "a path to a file holding the events token",
    help: "read the events token from this file (container secrets)",
  },
  {
    key: "eventsWebhookUrl",
    env: "EVENTS_WEBHOOK_URL",
    schema: z.url({ protocol: /^https?$/ }),
    accepts: "an https URL (http only to loopback or with EVENTS_WEBHOOK_ALLOW_INSECURE)",
    help: "where `run` POSTs booking events, signed (Standard Webhooks; off when unset)",
    unset: "to send no webhooks",
    secret: true,
  },
  {
    key: "eventsWebhookSecret",
    env: "EVENTS_WEBHOOK_SECRET",
    schema: z.string().trim().min(1),
    accepts: "one or more whsec_… secrets separated by spaces (two while rotating)",
    help: "signing secret(s) of the webhooks, whsec_… (required with EVENTS_WEBHOOK_URL)",
    secret: true,
  },
  {
    key: "eventsWebhookSecretFile",
    env: "EVENTS_WEBHOOK_SECRET_FILE",
    schema: z.string().min(1),
    accepts: "a path to a file holding the secret(s)",
    help: "read the webhook secret(s) from this file (container secrets)",
  },
  {
    key: "eventsWebhookAllowInsecure",
    env: "EVENTS_WEBHOOK_ALLOW_INSECURE",
    schema: bool,
    default: false,
    accepts: "true or false (or yes/no, 1/0)",
    help: "allow a plain http:// webhook URL to a host that is not loopback (test rigs only)",
  },
  {
    key: "eventsWebhookBatch",
    env: "EVENTS_WEBHOOK_BATCH",
    schema: int(1, MAX_BATCH),
    default: 100,
    accepts: `a whole number from 1 to ${MAX_BATCH}`,
    help: "most events one webhook message carries",
  },
] as const satisfies readonly Setting[];

/**
 * A webhook needs a usable secret and a URL the events may go to (https, or loopback, or allowed):
 * refused at start, not at the first delivery. `out` is the config being built, secrets resolved.
 */
export function checkEventSettings(out: Record<string, unknown>): void {
  const url = out.eventsWebhookUrl as string | undefined;
  if (url === undefined) return;
  const secret = out.eventsWebhookSecret as string | undefined;
  if (secret === undefined) {
    throw new ConfigError(
      "EVENTS_WEBHOOK_URL is set but not EVENTS_WEBHOOK_SECRET: webhooks are always signed",
      {
        hint: "set EVENTS_WEBHOOK_SECRET (or EVENTS_WEBHOOK_SECRET_FILE) to whsec_ and base64, e.g. whsec_$(openssl rand -base64 32)",
      },
    );
  }
  parseSecrets(secret);
  const problem = webhookUrlProblem(url, out.eventsWebhookAllowInsecure === true);
  if (problem) throw new ConfigError(problem, { hint: "use an https URL, or a receiver on this host" });
}
