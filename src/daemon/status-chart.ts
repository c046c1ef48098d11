/** A bar chart as an inline SVG string: one `<rect>` per bar, even a zero one, and no library. */
import { html, type Markup } from "./status-html.js";

export interface Bar {
  /** Under the axis for the first, middle and last bar, and in each bar's tooltip: a day. */
  label: string;
  /** Not finite when its sum overflowed: drawn full height, marked, never as NaN or Infinity. */
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
  // The scale comes from the values that are numbers; an overflowed one tops it.
  const max = Math.max(0, ...bars.filter((b) => Number.isFinite(b.value)).map((b) => b.value));
  const peak = max > 0 ? bars.find((b) => b.value === max) : undefined;
  const overflowed = bars.filter((b) => !Number.isFinite(b.value)).map((b) => b.label);
  const label =
    `${title}; highest ${axis(max)}${peak ? ` on ${peak.label}` : ""}` +
    (overflowed.length ? `; too large to sum on ${overflowed.join(", ")}` : "");
  // The top value at the right end, over the newest days, which a narrow screen shows first.
  return html`<svg class="chart" data-chart="${id}" role="img" aria-label="${label}" viewBox="0 0 ${WIDTH} ${HEIGHT}" xmlns="http://www.w3.org/2000/svg">
<title>${title}</title>
<line class="grid" x1="0" x2="${WIDTH}" y1="${TOP}" y2="${TOP}"/>
<text class="max" x="${WIDTH}" y="${TOP - 8}" text-anchor="end">${axis(max)}</text>
<g class="bars">${bars.map((b, i) => bar(b, i, bars.length, max))}</g>
<line class="axis" x1="0" x2="${WIDTH}" y1="${BASE}" y2="${BASE}"/>
${dayLabels(bars)}
</svg>`;
}

function bar(b: Bar, index: number, count: number, max: number): Markup {
  const slot = WIDTH / count;
  const overflow = !Number.isFinite(b.value);
  // A bar is at least one unit tall when its value is not zero, so a quiet day still shows.
  const height = overflow ? BASE - TOP : b.value > 0 ? Math.max(1, (b.value / max) * (BASE - TOP)) : 0;
  return html`<rect${overflow ? html` class="overflow"` : ""} x="${round(index * slot + slot * 0.15)}" y="${round(BASE - height)}" width="${round(slot * 0.7)}" height="${round(height)}"><title>${b.label}: ${b.text}</title></rect>`;
}

/**
 * Labels under the axis: the first and the last bar, and every seventh back from the last (clear of
 * the first), so a narrow screen, which opens on the newest days, shows some of them.
 */
function dayLabels(bars: Bar[]): Markup {
  const slot = WIDTH / Math.max(1, bars.length);
  const last = bars.length - 1;
  const at = (i: number, anchor: string, x: number) =>
    bars[i]
      ? html`<text x="${round(x)}" y="${HEIGHT - 4}" text-anchor="${anchor}">${bars[i].label}</text>`
      : "";
  const weekly: Array<Markup | string> = [];
  for (let i = last - 7; i >= 5; i -= 7) weekly.unshift(at(i, "middle", (i + 0.5) * slot));
  return html`${at(0, "start", 0)}${weekly}${last > 0 ? at(last, "end", WIDTH) : ""}`;
}

/** A coordinate to one decimal; never "NaN" or "Infinity", which no SVG can draw. */
function round(n: number): string {
  return Number.isFinite(n) ? String(Math.round(n * 10) / 10) : "0";
}
