/** The settings of scheduled work and the daemon's HTTP endpoint: rows of the one table in settings.ts. */
import { z } from "zod";
import { DEFAULT_MAX_MISSING_PERCENT } from "../sync/list/missing-share.js";
import type { Setting } from "./setting.js";
import { cronExpr, int, percent } from "./values.js";

export const DAEMON_SETTINGS = [
  {
    key: "schedule",
    env: "SYNC_SCHEDULE",
    flag: "schedule",
    schema: cronExpr,
    default: "* * * * *",
    accepts: "a cron expression, e.g. '*/5 * * * *'",
    help: "when `run` syncs (cron)",
  },
  {
    key: "reconcileSchedule",
    env: "RECONCILE_SCHEDULE",
    flag: "reconcileSchedule",
    schema: cronExpr,
    accepts: "a cron expression, e.g. '0 3 * * *'",
    help: "when `run` reconciles (cron; off when unset)",
    unset: "to turn scheduled reconciles off",
  },
  {
    key: "reconcileMaxMissingPercent",
    env: "RECONCILE_MAX_MISSING_SHARE",
    flag: "maxMissingShare",
    schema: percent,
    default: DEFAULT_MAX_MISSING_PERCENT,
    accepts: "a percentage from 0 to 100, e.g. 10 or 10%",
    help: "most bookings one reconcile marks missing, percent of those it judges; more wait for --apply-missing",
  },
  {
    key: "httpPort",
    env: "HTTP_PORT",
    flag: "httpPort",
    schema: int(0, 65535),
    default: 8080,
    accepts: "a port from 0 to 65535 (0 disables)",
    help: "port of the status page /, /healthz, /readyz, /metrics, POST /sync",
  },
  {
    key: "httpHost",
    env: "HTTP_HOST",
    flag: "httpHost",
    schema: z.string().min(1),
    default: "127.0.0.1",
    accepts: "a host or IP address to bind",
    help: "address the HTTP endpoint binds",
  },
  {
    key: "readyMaxAgeSeconds",
    env: "READY_MAX_AGE_SECONDS",
    schema: int(1, 30 * 86400),
    accepts: "whole seconds",
    help: "/readyz fails when the last success is older (default 3 schedule periods)",
    unset: "for 3 schedule periods",
  },
  {
    key: "triggerToken",
    env: "TRIGGER_TOKEN",
    schema: z.string().min(1),
    accepts: "a non-empty shared secret",
    help: "bearer token POST /sync requires (unset: open on loopback, refused beyond)",
    secret: true,
  },
  {
    key: "triggerTokenFile",
    env: "TRIGGER_TOKEN_FILE",
    schema: z.string().min(1),
    accepts: "a path to a file holding the trigger token",
    help: "read the trigger token from this file (container secrets)",
  },
] as const satisfies readonly Setting[];
