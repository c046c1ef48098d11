/**
 * The daemon's status page (GET /): one server-rendered HTML document with inline SVG charts and no
 * script. Pure: data in, HTML out. Every interpolated value is escaped unless it is markup built here,
 * since run errors quote the source and may hold anything, `<script>` included.
 */
import { age } from "../cli/status-text.js";
import type { DailyTotal, StatusPageData } from "../store/daily.js";
import type { RunStatus, Status, StreamStatus } from "../store/status.js";
import { barChart } from "./status-chart.js";
import { html, type Markup, trusted } from "./status-html.js";

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
const naira = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
const compact = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });

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

function ago(seconds: number | null): string {
  return seconds === null ? "" : `${age(seconds)} ago`;
}

function figures(s: Status): Markup {
  const last = s.lastSuccess;
  const drift = s.drift;
  return html`<section aria-label="Figures"><dl class="figures">
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
  html`<span data-figure="bookings-details">${count.format(s.bookings.withDetails)}</span> with details · <span data-figure="bookings-missing">${count.format(s.bookings.missing)}</span> missing`,
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
${card(
  "Database",
  html`${size(s.database.bytes)}`,
  s.database.backend === "postgres" ? html`PostgreSQL` : html`write-ahead log ${size(s.database.walBytes)}`,
)}
</dl></section>`;
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
${barChart({
  id: "bookings",
  title: `Bookings per Lagos day, ${first} to ${last}`,
  bars: daily.map((d) => ({
    label: d.day,
    value: d.bookings,
    text: `${count.format(d.bookings)} bookings`,
  })),
  axis: (v) => count.format(v),
})}
</figure>
<figure><figcaption><strong>Revenue per day</strong> (sum of total_amount) · ₦<span data-figure="chart-revenue-total">${naira.format(revenue)}</span> in ${daily.length} days</figcaption>
${barChart({
  id: "revenue",
  title: `Revenue (sum of total_amount, NGN) per Lagos day, ${first} to ${last}`,
  bars: daily.map((d) => ({ label: d.day, value: d.totalAmount, text: `₦${naira.format(d.totalAmount)}` })),
  axis: (v) => `₦${compact.format(v)}`,
})}
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
        html`<tr><td>${d.day}</td><td class="n">${count.format(d.bookings)}</td><td class="n">${naira.format(d.totalAmount)}</td></tr>`,
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
  return html`<tr data-stream="${st.stream}"><td>${st.stream}</td><td>${st.checkpoint === null ? "none yet" : when(st.checkpoint)}</td>
<td>${ago(st.checkpointAgeSeconds)}</td><td>${st.inProgress ? "walk in progress" : ""}</td><td>${when(st.updatedAt)}</td></tr>`;
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

/** Inline (the page loads nothing); light or dark as the reader's system is. */
const STATUS_PAGE_CSS = trusted(`
:root { color-scheme: light dark; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --card: #f6f8fa;
  --bar: #2f6fde; --bad: #c0392b; --ok: #1a7f37; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --muted: #9198a1; --line: #3d444d; --card: #151b23; --bar: #4c8dff;
    --bad: #ff7b72; --ok: #3fb950; }
}
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); }
main { max-width: 1000px; margin: 0 auto; padding: 24px 20px 48px; }
header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 16px; }
h1 { font-size: 22px; margin: 0; }
h2 { font-size: 17px; margin: 32px 0 12px; }
header p, small, .empty, figcaption, summary { color: var(--muted); }
header p { margin: 0; }
.figures { display: grid; grid-template-columns: repeat(auto-fill, minmax(180px, 1fr)); gap: 12px; margin: 20px 0 0; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; }
.card dt { font-size: 13px; color: var(--muted); }
.card dd { margin: 0; }
.card strong { display: block; font-size: 22px; font-weight: 600; font-variant-numeric: tabular-nums; }
.card small { display: block; font-size: 12.5px; }
.bad { color: var(--bad); }
.charts { display: grid; gap: 24px; }
figure { margin: 0; overflow-x: auto; }
figcaption { font-size: 13.5px; margin-bottom: 6px; }
figcaption strong { color: var(--fg); font-weight: 600; }
svg.chart { display: block; width: 100%; min-width: 480px; height: auto; }
svg.chart rect { fill: var(--bar); }
svg.chart text { font-size: 12px; fill: var(--muted); font-variant-numeric: tabular-nums; }
svg.chart .axis { stroke: var(--muted); }
svg.chart .grid { stroke: var(--line); stroke-dasharray: 4 4; }
details { margin-top: 12px; }
table { border-collapse: collapse; width: 100%; font-size: 13.5px; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); white-space: nowrap; }
.n { text-align: right; font-variant-numeric: tabular-nums; }
.scroll { overflow-x: auto; }
.runs td, .streams td { white-space: nowrap; }
.runs tr.has-error td { border-bottom: none; padding-bottom: 2px; }
.runs tr.error td { white-space: pre-wrap; overflow-wrap: anywhere; color: var(--bad); font-size: 12.5px; padding-top: 0; }
td[data-status="success"] { color: var(--ok); }
td[data-status="failed"], td[data-status="interrupted"] { color: var(--bad); }
`);
