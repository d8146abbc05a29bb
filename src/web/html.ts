/**
 * Escape-by-default HTML: the `html` tagged template escapes every interpolated value unless it is
 * already `SafeHtml` (the output of another `html` template, or `unsafeRaw` for markup written in
 * this codebase). Arrays are joined, null, undefined and false render nothing. There is no other
 * way to put text into a page, so a value from DNS, the URL or a header cannot become markup.
 */

const SAFE = Symbol('SafeHtml');

/** Markup that is safe to insert as is. Only `html` and `unsafeRaw` make one. */
export interface SafeHtml {
  readonly [SAFE]: true;
  readonly value: string;
}

/** What a template may interpolate. */
export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

/** Escapes text for an HTML element body or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c] ?? c);
}

function makeSafe(value: string): SafeHtml {
  return Object.freeze({ [SAFE]: true as const, value });
}

/** True for markup made by `html` or `unsafeRaw`. */
export function isSafeHtml(value: unknown): value is SafeHtml {
  return typeof value === 'object' && value !== null && (value as Partial<SafeHtml>)[SAFE] === true;
}

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (isSafeHtml(value)) return value.value;
  if (Array.isArray(value)) return value.map((v: HtmlValue) => render(v)).join('');
  return escapeHtml(String(value));
}

/** The tagged template: literal parts are markup, every interpolation is escaped unless SafeHtml. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '');
  return makeSafe(out);
}

/**
 * Marks a string written in this codebase as markup. Never pass it anything that came from a
 * request, DNS or a file a user controls.
 */
export function unsafeRaw(markup: string): SafeHtml {
  return makeSafe(markup);
}

/** A hyphen between letters or digits, with the character after it (kept on one line together). */
const HYPHEN_AND_NEXT = /(?<=[\p{L}\p{N}])-[\p{L}\p{N}]/gu;

/** Elements whose text is not markup (or not shown): left as they are by `keepHyphenatedWhole`. */
const RAW_TEXT_ELEMENTS = /^<(script|style|textarea|title|desc|text)\b/i; // desc, text: an SVG chart's (HTML inside is not drawn)

/**
 * The same markup, with every word that holds a hyphen between letters or digits (a domain such as
 * `p-none.example`, a record term) in a `<span class="nb">`: browsers may break a line after a
 * hyphen, and `p-⏎none.example` reads as another name. The stylesheet makes the span an
 * inline-block that never breaks while it fits on a line and breaks where the line ends when it is
 * wider than the line, but never right after a hyphen: each hyphen is held to the character after
 * it (`<span class="nh">-n</span>`, no wrap inside). Only text between tags changes: tags and attribute values
 * (an href, a form value) are kept byte for byte, and so is the text of script, style, textarea and
 * title elements. The text of the page (what is copied) does not change.
 */
export function keepHyphenatedWhole(markup: SafeHtml): SafeHtml {
  const parts = markup.value.split(/(<[^>]*>)/);
  let raw: string | null = null;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (i % 2 === 1) {
      // A tag: entering or leaving an element whose text is not to be touched.
      if (raw === null) raw = RAW_TEXT_ELEMENTS.exec(part)?.[1]?.toLowerCase() ?? null;
      else if (part.toLowerCase() === `</${raw}>`) raw = null;
      continue;
    }
    if (raw !== null || !part.includes('-')) continue;
    parts[i] = part.replace(/[^\s]*[\p{L}\p{N}]-[\p{L}\p{N}][^\s]*/gu, (word) => `<span class="nb">${word.replace(HYPHEN_AND_NEXT, '<span class="nh">$&</span>')}</span>`);
  }
  return makeSafe(parts.join(''));
}

/** The markup of a value, as a string (for the response body). */
export function toHtmlString(value: SafeHtml): string {
  return value.value;
}
