/** The status page's style sheet, inlined in its `<style>`: the page loads nothing. */
import { trusted } from "./status-html.js";

/** Inline (the page loads nothing); light or dark as the reader's system is. */
export const STATUS_PAGE_CSS = trusted(`
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
.charts { display: grid; grid-template-columns: minmax(0, 1fr); gap: 24px; }
figure { margin: 0; min-width: 0; }
.failing { margin: 20px 0 0; border-color: var(--bad); }
.failing strong { font-size: 17px; }
.failing p { margin: 4px 0 0; white-space: pre-wrap; overflow-wrap: anywhere; }
.filling { margin: 20px 0 0; }
.filling strong { font-size: 17px; }
.filling progress { display: block; width: 100%; height: 10px; margin: 8px 0 0; accent-color: var(--bar); }
.filling p { margin: 4px 0 0; overflow-wrap: anywhere; }
figcaption { font-size: 13.5px; margin-bottom: 6px; }
figcaption strong { color: var(--fg); font-weight: 600; }
/* Narrower than its drawing, a chart scrolls rather than shrink its labels below 12px; right to left,
   a scroll box opens at its right end, on the newest days. */
.plot { overflow-x: auto; direction: rtl; }
svg.chart { direction: ltr; display: block; width: 100%; min-width: 720px; height: auto; }
svg.chart rect { fill: var(--bar); }
svg.chart rect.overflow { fill: var(--bad); }
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
