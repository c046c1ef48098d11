/**
 * The daemon's status page (GET /): one server-rendered HTML document with inline SVG charts and no
 * script. Pure: data in, HTML out. Every interpolated value is escaped unless it is markup built here,
 * since run errors quote the source and may hold anything, `<script>` included.
 */
import { knownSource, sourceHost, unknownSource, withheldLine } from "../cli/source-text.js";
import { age, droppedText } from "../cli/status-text.js";
import type { DailyTotal, StatusPageData } from "../store/daily.js";
import type { EventsStatus } from "../store/events-status.js";
import { fillText } from "../store/fill-status.js";
import { failingText, type RunStatus, type Status, type StreamStatus } from "../store/status.js";
import { barChart } from "./status-chart.js";
import { STATUS_PAGE_CSS } from "./status-css.js";
import { html, type Markup } from "./status-html.js";

/** The page's headers: it runs no script, loads nothing, and is never cached. */
export const STATUS_PAGE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "content-security-policy":
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

const count = new Intl.NumberFormat("en-US");
const whole = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
const compact = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });
/** Past this, digits stop meaning anything to a reader (and run to 300 of them): 1.7e+308. */
const COUNTABLE = 1e15;

/**
 * NGN without the sign: whole naira, an exponent past `COUNTABLE`, and "overflow" for a sum too large
 * for a double (SQLite's sum gives Infinity), never "∞" or "NaN".
 */
function amount(n: number, digits: Intl.NumberFormat = whole): string {
  if (!Number.isFinite(n)) return "overflow";
  return Math.abs(n) < COUNTABLE ? digits.format(n) : n.toExponential(1);
}

/** "₦12,345", or "overflow" alone. */
function naira(n: number, digits?: Intl.NumberFormat): string {
  return Number.isFinite(n) ? `₦${amount(n, digits)}` : amount(n);
}

/** The whole page for one reading of the mirror. */
export function renderStatusPage({ status, daily }: StatusPageData): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>booking-sync status</title>
<style>${STATUS_PAGE_CSS}</style>
</head>
<body>
<main>
<header><h1>booking-sync</h1><p>The mirror as of <time datetime="${status.at}">${when(status.at)}</time></p></header>
${failingCard(status)}
${droppedCard(status)}
${status.streams.map(fillCard)}
${figures(status)}
${charts(daily)}
${streamsSection(status.streams)}
${runsSection(status.runs)}
</main>
</body>
</html>
`.html;
}

/** "2025-05-01 12:00:00 UTC" from an ISO 8601 UTC time. */
function when(iso: string): string {
  return iso.replace("T", " ").replace(/(\.\d+)?Z$/, " UTC");
}

/**
 * Above the figures, as wide as the page, only while syncs fail: the cause, which the runs table
 * further down holds too, must be the first thing a person sees.
 */
function failingCard(s: Status): Markup {
  if (!s.failing) return html``;
  return html`<section aria-label="Sync failing" class="card failing" data-figure="failing">
<strong class="bad">Sync failing</strong><p>${failingText(s.failing, when)}</p></section>`;
}

/**
 * Under the failing card, as wide as the page, while a stream's fill runs: the mirror is incomplete
 * until it ends, and how far it has got and when it should end are what a person asks first.
 */
function fillCard({ stream, fill }: StreamStatus): Markup {
  if (!fill) return html``;
  return html`<section aria-label="Filling ${stream}" class="card filling" data-fill="${stream}">
<strong>Filling the mirror: <span data-figure="fill-percent">${fill.percent}%</span></strong>
<progress max="100" value="${fill.percent}">${fill.percent}%</progress>
<p>${stream}: <span data-figure="fill-text">${fillText(fill, when)}</span></p></section>`;
}

function ago(seconds: number | null): string {
  return seconds === null ? "" : `${age(seconds)} ago`;
}

function figures(s: Status): Markup {
  const { lastSuccess: last, drift, reconcileWithheld: withheld } = s;
  const source = knownSource(s.source);
  return html`<section aria-label="Figures"><dl class="figures">
${withheld ? card("Missing marks withheld", html`<span data-figure="reconcile-withheld" class="bad">${count.format(withheld.count)}</span>`, html`${withheldLine(withheld)}`) : null}
${card(
  "Last successful sync",
  last
    ? html`<span data-figure="last-success">${ago(last.ageSeconds)}</span>`
    : html`<span data-figure="last-success" class="bad">never synced</span>`,
  last ? html`run ${last.runId}, finished ${when(last.finishedAt)}` : html`no sync run has succeeded yet`,
)}
${card(
  "Bookings",
  html`<span data-figure="bookings-total">${count.format(s.bookings.total)}</span>`,
  html`<span data-figure="bookings-details">${count.format(s.bookings.withDetails)}</span> with details · <span data-figure="bookings-missing">${count.format(s.bookings.missing)}</span> missing · <span data-figure="bookings-problems">${count.format(s.bookings.withProblems)}</span> with problems`,
)}
${card(
  "Drift",
  drift
    ? html`<span data-figure="drift-difference" class="${drift.difference === 0 ? "" : "bad"}">${count.format(drift.difference)}</span>`
    : html`<span data-figure="drift-difference">not checked yet</span>`,
  drift
    ? html`source <span data-figure="drift-source">${count.format(drift.sourceTotal)}</span> · mirror <span data-figure="drift-mirror">${count.format(drift.localTotal)}</span> (run ${drift.runId}, ${when(drift.at)})`
    : html`no run has compared the totals yet`,
)}
${card(
  "Rejects",
  html`<span data-figure="rejects" class="${s.rejects === 0 ? "" : "bad"}">${count.format(s.rejects)}</span>`,
  html`source records that failed validation, kept aside`,
)}
${eventsCard(s.events)}
${card(
  "Database",
  html`${size(s.database.bytes)}`,
  s.database.backend === "postgres" ? html`PostgreSQL` : html`write-ahead log ${size(s.database.walBytes)}`,
)}
${card(
  "Source",
  html`<span data-figure="source">${source ? sourceHost(source.baseUrl) : unknownSource(s.source).value}</span>`,
  source ? html`${source.baseUrl}, since ${when(source.since)}` : html`${unknownSource(s.source).note}`,
)}
</dl></section>`;
}

/** Beside the failing card: undelivered events dropped past the cap never reach the receiver. */
function droppedCard({ events }: Status): Markup {
  const d = events?.delivery;
  if (!d || d.dropped === 0) return html``;
  return html`<section aria-label="Events dropped" class="card failing" data-figure="events-dropped-card">
<strong class="bad">Events dropped: <span data-figure="events-dropped">${count.format(d.dropped)}</span></strong><p>${droppedText({ ...d, droppedAt: d.droppedAt && when(d.droppedAt) })}</p></section>`;
}

/** The stream's newest id and the webhook's cursor, lag, last error and next attempt (its retention alone without one). */
function eventsCard(events: EventsStatus | null): Markup {
  if (events === null) return card("Events", html`none`, html`this mirror predates them`);
  const last = html`<span data-figure="events-last-id">${count.format(events.lastId)}</span>`;
  const d = events.delivery;
  const kept = events.oldest
    ? html`kept from id ${events.oldest.id} (${when(events.oldest.at)})`
    : html`none kept`;
  if (!d) return card("Events: newest id", last, html`${kept} · no webhook configured`);
  const error = d.lastError
    ? html` · last error <span data-figure="events-last-error-at">${when(d.lastErrorAt ?? "")}</span>: <span data-figure="events-last-error">${d.lastError}</span>`
    : null;
  const next = d.nextAttemptAt
    ? html` · next attempt <span data-figure="events-next-attempt">${when(d.nextAttemptAt)}</span>`
    : null;
  return card(
    "Webhook lag",
    html`<span data-figure="events-lag-events" class="${d.nextAttemptAt === null ? "" : "bad"}">${count.format(d.lagEvents)}</span> events, <span data-figure="events-lag-seconds">${age(d.lagSeconds)}</span>`,
    html`delivered to id <span data-figure="events-cursor">${count.format(d.cursor)}</span> of ${last}${error}${next}`,
  );
}

function card(label: string, value: Markup, note: Markup): Markup {
  return html`<div class="card"><dt>${label}</dt><dd><strong>${value}</strong><small>${note}</small></dd></div>`;
}

function size(bytes: number): string {
  if (bytes < 1_048_576) return `${Math.ceil(bytes / 1024)} KB`;
  return `${(bytes / 1_048_576).toFixed(1)} MB`;
}

function charts(daily: DailyTotal[]): Markup {
  const first = daily[0]?.day ?? "";
  const last = daily.at(-1)?.day ?? "";
  const bookings = daily.reduce((sum, d) => sum + d.bookings, 0);
  const revenue = daily.reduce((sum, d) => sum + d.totalAmount, 0);
  return html`<section aria-labelledby="charts-h"><h2 id="charts-h">Last ${daily.length} days (Lagos time)</h2>
<div class="charts">
<figure><figcaption><strong>Bookings per day</strong> · <span data-figure="chart-bookings-total">${count.format(bookings)}</span> in ${daily.length} days</figcaption>
<div class="plot">${barChart({
    id: "bookings",
    title: `Bookings per Lagos day, ${first} to ${last}`,
    bars: daily.map((d) => ({
      label: d.day,
      value: d.bookings,
      text: `${count.format(d.bookings)} bookings`,
    })),
    axis: (v) => count.format(v),
  })}</div>
</figure>
<figure><figcaption><strong>Revenue per day</strong> (sum of total_amount) · <span data-figure="chart-revenue-total">${naira(revenue)}</span> in ${daily.length} days</figcaption>
<div class="plot">${barChart({
    id: "revenue",
    title: `Revenue (sum of total_amount, NGN) per Lagos day, ${first} to ${last}`,
    bars: daily.map((d) => ({ label: d.day, value: d.totalAmount, text: naira(d.totalAmount) })),
    axis: (v) => naira(v, compact),
  })}</div>
</figure>
</div>
${dailyTable(daily)}
</section>`;
}

function dailyTable(daily: DailyTotal[]): Markup {
  const rows = [...daily]
    .reverse()
    .map(
      (d) =>
        html`<tr><td>${d.day}</td><td class="n">${count.format(d.bookings)}</td><td class="n">${amount(d.totalAmount)}</td></tr>`,
    );
  return html`<details><summary>Figures per day</summary>
<table><thead><tr><th>Lagos day</th><th class="n">Bookings</th><th class="n">Revenue (NGN)</th></tr></thead>
<tbody>${rows}</tbody></table></details>`;
}

function streamsSection(streams: StreamStatus[]): Markup {
  return html`<section aria-labelledby="streams-h"><h2 id="streams-h">Checkpoints</h2>
${
  streams.length === 0
    ? html`<p class="empty">No stream has been walked yet.</p>`
    : html`<div class="scroll"><table class="streams"><thead><tr><th>Stream</th><th>Newest booking mirrored</th><th>Age</th><th>State</th><th>Updated</th></tr></thead>
<tbody>${streams.map(streamRow)}</tbody></table></div>`
}
</section>`;
}

function streamRow(st: StreamStatus): Markup {
  return html`<tr data-stream="${st.stream}"><td>${st.stream}</td><td>${st.checkpoint === null ? (st.note ?? "") : when(st.checkpoint)}</td>
<td>${ago(st.checkpointAgeSeconds)}</td><td>${st.fill ? `filling ${st.fill.percent}%` : st.inProgress ? "walk in progress" : ""}</td><td>${when(st.updatedAt)}</td></tr>`;
}

function runsSection(runs: RunStatus[]): Markup {
  return html`<section aria-labelledby="runs-h"><h2 id="runs-h">Last runs</h2>
${
  runs.length === 0
    ? html`<p class="empty">No runs yet: never synced.</p>`
    : html`<div class="scroll"><table class="runs"><thead><tr><th class="n">Run</th><th>Kind</th><th>Stream</th><th>Status</th><th>Started</th>
<th class="n">Took</th><th class="n">New</th><th class="n">Updated</th><th class="n">Unchanged</th><th class="n">Rejects</th></tr></thead>
<tbody>${runs.map(runRow)}</tbody></table></div>`
}
</section>`;
}

function runRow(r: RunStatus): Markup {
  const took = r.durationSeconds === null ? "running" : `${r.durationSeconds.toFixed(1)} s`;
  // The error gets a row of its own, as wide as the table: the source's texts run long.
  const error = r.error ? html`<tr class="error"><td></td><td colspan="9">${r.error}</td></tr>` : "";
  return html`<tr data-run="${r.id}" class="${r.error ? "has-error" : ""}"><td class="n">${r.id}</td><td>${r.kind}</td><td>${r.stream ?? ""}</td>
<td data-status="${r.status}">${r.status}</td><td>${when(r.startedAt)}</td><td class="n">${took}</td>
<td class="n">${count.format(r.new)}</td><td class="n">${count.format(r.updated)}</td><td class="n">${count.format(r.unchanged)}</td>
<td class="n">${count.format(r.rejects)}</td></tr>${error}`;
}
