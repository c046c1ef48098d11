/** A bar chart as an inline SVG string: one `<rect>` per bar, even a zero one, and no library. */
import { html, type Markup } from "./status-html.js";

export interface Bar {
  /** Under the axis for the first, middle and last bar, and in each bar's tooltip: a day. */
  label: string;
  value: number;
  /** The value as the tooltip says it, e.g. "12 bookings". */
  text: string;
}

export interface BarChartSpec {
  /** Its `data-chart` attribute. */
  id: string;
  /** Its `<title>`, and the start of its `aria-label`. */
  title: string;
  bars: Bar[];
  /** Formats the axis's top value. */
  axis: (value: number) => string;
}

// Drawing units of the viewBox; the page scales the SVG to its width and keeps the ratio.
const WIDTH = 720;
const HEIGHT = 200;
const TOP = 26;
const BASE = 176;

export function barChart({ id, title, bars, axis }: BarChartSpec): Markup {
  const max = Math.max(0, ...bars.map((b) => b.value));
  const peak = max > 0 ? bars.find((b) => b.value === max) : undefined;
  const label = `${title}; highest ${axis(max)}${peak ? ` on ${peak.label}` : ""}`;
  return html`<svg class="chart" data-chart="${id}" role="img" aria-label="${label}" viewBox="0 0 ${WIDTH} ${HEIGHT}" xmlns="http://www.w3.org/2000/svg">
<title>${title}</title>
<line class="grid" x1="0" x2="${WIDTH}" y1="${TOP}" y2="${TOP}"/>
<text class="max" x="0" y="${TOP - 8}">${axis(max)}</text>
<g class="bars">${bars.map((b, i) => bar(b, i, bars.length, max))}</g>
<line class="axis" x1="0" x2="${WIDTH}" y1="${BASE}" y2="${BASE}"/>
${dayLabels(bars)}
</svg>`;
}

function bar(b: Bar, index: number, count: number, max: number): Markup {
  const slot = WIDTH / count;
  // A bar is at least one unit tall when its value is not zero, so a quiet day still shows.
  const height = b.value > 0 ? Math.max(1, (b.value / max) * (BASE - TOP)) : 0;
  return html`<rect x="${round(index * slot + slot * 0.15)}" y="${round(BASE - height)}" width="${round(slot * 0.7)}" height="${round(height)}"><title>${b.label}: ${b.text}</title></rect>`;
}

/** The first, middle and last labels under the axis. */
function dayLabels(bars: Bar[]): Markup {
  const slot = WIDTH / Math.max(1, bars.length);
  const middle = Math.floor(bars.length / 2);
  const at = (i: number, anchor: string, x: number) =>
    bars[i]
      ? html`<text x="${round(x)}" y="${HEIGHT - 4}" text-anchor="${anchor}">${bars[i].label}</text>`
      : "";
  return html`${at(0, "start", 0)}${bars.length > 2 ? at(middle, "middle", (middle + 0.5) * slot) : ""}${at(bars.length - 1, "end", WIDTH)}`;
}

function round(n: number): string {
  return String(Math.round(n * 10) / 10);
}
