/**
 * The page shell every page shares (head, header, footer) and the check form. Every value goes
 * through `html`, so it is escaped.
 */
import { ASSETS } from './assets.js';
import { demoBanner, demoExamples, type DemoSettings } from './demo.js';
import { html, keepHyphenatedWhole, type SafeHtml } from './html.js';

/** Where the form sends its domain (GET). */
export const CHECK_PATH = '/check';
/** The name of the form's one input, as the brief and the API call it. */
export const DOMAIN_FIELD = 'domain';

/** What a page needs besides its body. */
export interface PageOptions {
  title: string;
  /** For search engines and link previews. */
  description?: string;
  body: SafeHtml;
  /** Marks the page as not to be indexed (error pages, results). */
  noindex?: boolean;
  /** In demo mode (`serve --demo`): the banner, and a footer that does not claim public DNS. */
  demo?: DemoSettings | null;
  /** The header's navigation in place of the public page's (the console's: src/console/views.ts). */
  nav?: SafeHtml;
  /** The footer's text in place of the public page's. */
  footer?: SafeHtml;
  /** A wider column (the console's tables). */
  wide?: boolean;
  /**
   * Hold hyphenated words whole (`keepHyphenatedWhole`, the default); false for a body that keeps
   * its own long lines from breaking (the console's overview table: a thousand rows of names and dates).
   */
  keepWhole?: boolean;
}

/** The public page's navigation. */
const SITE_NAV = html`<nav aria-label="Site"><a href="/">Check a domain</a><a href="/docs">API docs</a><a href="/openapi.json">OpenAPI</a></nav>`;

/** A complete HTML document. */
export function page({ title, description, body, noindex, demo = null, nav = SITE_NAV, footer, wide = false, keepWhole = true }: PageOptions): SafeHtml {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${title} · spoof-checker</title>
${description ? html`<meta name="description" content="${description}">` : null}
${noindex ? html`<meta name="robots" content="noindex">` : null}
<link rel="icon" href="${ASSETS.icon.path}" type="image/svg+xml">
<link rel="stylesheet" href="${ASSETS.stylesheet.path}">
<script src="${ASSETS.script.path}" defer></script>
</head>
<body${wide ? html` class="wide"` : null}>
<a class="skip" href="#main">Skip to the content</a>
<header class="site"><div class="wrap">
<a class="brand" href="/"><img src="${ASSETS.icon.path}" alt="" width="22" height="22">spoof-checker</a>
${nav}
</div></header>
${demo ? keepHyphenatedWhole(demoBanner(demo)) : null}
<main id="main" tabindex="-1"><div class="wrap">
${keepWhole ? keepHyphenatedWhole(body) : body}
</div></main>
<footer class="site"><div class="wrap">
<p>${footer ?? null}${footer ? null : demo ? html`This is a demo: spoof-checker answers from ${demo.source}, not from public DNS. It sends no mail and keeps no record of what you check.` : 'spoof-checker reads public DNS (and, for "Mail sent to you", greets your mail servers and asks for TLS): it sends no mail and keeps no record of what you check.'}
${footer ? null : html`The same check is available as an API: <a href="/docs">documentation</a>, <a href="/openapi.json">OpenAPI document</a>.`}</p>
</div></footer>
<p id="copy-status" class="visually-hidden" aria-live="polite"></p>
</body>
</html>
`;
}

/** The examples under the form outside the demo. */
const EXAMPLES = ['example.com', 'you@example.com', 'https://www.example.com/contact'];

/**
 * The check form, filled with what was typed; `error` marks the field invalid and says why. In the
 * demo its examples are demo inputs (example.com is not in the demo's zones).
 */
export function checkForm(value: string, error?: { message: string; fix: string }, demo: DemoSettings | null = null): SafeHtml {
  const examples = demo ? demoExamples(demo) : EXAMPLES;
  const describedBy = error ? 'domain-hint domain-error' : 'domain-hint';
  return html`<form class="check" action="${CHECK_PATH}" method="get" role="search" aria-label="Check a domain">
<label for="domain">Domain, email address or website</label>
<div class="row">
<input type="text" id="domain" name="${DOMAIN_FIELD}" value="${value}" required autocomplete="url" autocapitalize="none" spellcheck="false" aria-describedby="${describedBy}"${error ? html` aria-invalid="true"` : null}>
<button type="submit">Check</button>
</div>
${error ? html`<p class="field-error" id="domain-error">${error.message} ${error.fix}</p>` : null}
<p class="hint" id="domain-hint">For example ${examples.map((e, i) => html`${i === 0 ? '' : i === examples.length - 1 ? ' or ' : ', '}<code>${e}</code>`)}.</p>
</form>`;
}
