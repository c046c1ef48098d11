/**
 * HTML built by a tagged template that escapes every interpolated value unless it is `Markup` the
 * template itself made: forgetting to escape takes effort, not the other way round.
 */
import { printable } from "../printable.js";

/** Markup this module built (or `trusted` text written in this codebase); interpolated as is. */
export class Markup {
  constructor(readonly html: string) {}
}

const ENTITIES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Text safe in element content and in quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);
}

/** A constant written here (CSS, say), never data: it is interpolated without escaping. */
export function trusted(text: string): Markup {
  return new Markup(text);
}

/** `html\`<td>${value}</td>\``: values escaped (controls made visible, then HTML), `Markup` and arrays of it kept, null and undefined empty. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Markup {
  let out = strings[0] ?? "";
  values.forEach((value, i) => {
    out += piece(value) + (strings[i + 1] ?? "");
  });
  return new Markup(out);
}

function piece(value: unknown): string {
  if (value instanceof Markup) return value.html;
  if (Array.isArray(value)) return value.map(piece).join("");
  if (value === null || value === undefined) return "";
  // Data may be the source's text: its controls show as escapes here as in every other output.
  return escapeHtml(printable(String(value)));
}
