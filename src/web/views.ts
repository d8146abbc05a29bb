/**
 * The pages other than the result: home, errors (invalid input, unknown domain, DNS failure, rate
 * limit, not found) and the guides.
 */
import type { FailedQuery } from '@spoof-checker/engine';
import { demoDomainsSection, type DemoSettings } from './demo.js';
import { html, type SafeHtml } from './html.js';
import { checkForm, page } from './layout.js';

/** `GET /`: one form and what it checks; in the demo, where the answers come from and what to try. */
export function homePage(demo: DemoSettings | null = null): SafeHtml {
  return page({
    title: 'Can someone send email as your domain?',
    description: 'Check whether mail can be forged as your domain: DMARC, SPF, DKIM and MX checked and explained, with the exact record to publish.',
    demo,
    body: html`<h1>Can someone send email as your domain?</h1>
${
  demo
    ? html`<p class="lead">Type a domain, an email address or a website. In this demo the DNS records are read from ${demo.source} instead of public DNS: you see what the check says about each case it covers, whether a forged message would reach an inbox, and the exact record that would stop it.</p>`
    : html`<p class="lead">Type a domain, an email address or a website. We read its public DNS records, tell you whether a forged message would reach an inbox, and give you the exact record to publish to stop it.</p>`
}
${checkForm('', undefined, demo)}
${demo ? demoDomainsSection(demo) : null}
<h2>What is checked</h2>
<ul class="checks">
<li><strong>DMARC</strong> Whether receivers are told to reject or quarantine mail that fails authentication, for the domain, its subdomains and names that do not exist.</li>
<li><strong>SPF</strong> Which servers may send as the domain, whether any server at all can, and the limit of 10 DNS lookups, include by include.</li>
<li><strong>DKIM</strong> Public signing keys under the selectors that mail services commonly use, with their type and size.</li>
<li><strong>MX</strong> Where the domain receives mail and from which provider, or a null MX for a domain that takes none.</li>
<li><strong>Shared infrastructure</strong> Whether SPF lets addresses pass that anyone can rent: cloud servers, CI runners and CDN edges, by provider, from the providers' own published ranges.</li>
<li><strong>Mail sent to you</strong> On the result page, after the verdict: MTA-STS and TLS-RPT, and whether each mail server offers STARTTLS with a valid certificate, so that mail to the domain is encrypted in transit.</li>
<li><strong>DNSSEC</strong> Whether the answers the verdict rests on are signed and the signatures hold, from the root down; a broken chain is named with its fix.</li>
<li><strong>Your logo in the inbox (BIMI)</strong> The BIMI record, whether DMARC is strict enough for a logo, the logo held to SVG Tiny PS, and the mark certificate.</li>
<li><strong>Names that look like yours (lookalikes)</strong> Registered typos and look-alike spellings of the domain, graded by what each can do with mail.</li>
</ul>
<h2>What it cannot see</h2>
<p>${demo ? 'Only DNS records are read (here, the demo\'s): nothing is sent, nothing is stored.' : 'The check reads public DNS, and "Mail sent to you" also connects to the domain\'s mail servers and its MTA-STS policy host, sending no mail: nothing is stored.'} A DKIM key under a selector nobody can guess stays invisible, and a DNS server that fails to answer gives no verdict rather than a wrong one: the result page says what could not be checked.</p>
<h2>For developers</h2>
<p>The same check is an API: see the <a href="/docs">API documentation</a> and the <a href="/openapi.json">OpenAPI document</a>. A result page also answers JSON when asked with <code>Accept: application/json</code>.</p>`,
  });
}

/** What an error page says. */
export interface ErrorPageOptions {
  status: number;
  title: string;
  message: string;
  why: string;
  fix: string;
  /** What the person typed, put back in the form. */
  typed: string;
  /** Show the message under the field (invalid input) rather than as the page's text. */
  fieldError?: boolean;
  query?: FailedQuery;
  /** A link to try the same check again (DNS failures). */
  retryHref?: string;
  /** In the demo: the banner, and the form's demo examples. */
  demo?: DemoSettings | null;
}

/** An error as a page: what was wrong, why it matters, what to do; the form keeps what was typed. */
export function errorPage(options: ErrorPageOptions): SafeHtml {
  const { status, title, message, why, fix, typed, query, retryHref } = options;
  const demo = options.demo ?? null;
  const tone = status === 429 || status >= 500 ? 'tone-warning' : 'tone-critical';
  return page({
    title,
    description: message,
    noindex: true,
    demo,
    body: html`<div class="error-page ${tone}">
<p class="muted">Error ${status}</p>
<h1>${title}</h1>
${options.fieldError ? null : html`<div class="card"><p><strong>${message}</strong></p><p>${why}</p><p>${fix}</p>
${query ? html`<dl class="facts"><dt>Lookup</dt><dd><code>${query.type} ${query.name}</code></dd><dt>Outcome</dt><dd>${query.reason.toUpperCase()}${query.detail ? html` (${query.detail})` : null}</dd></dl>` : null}
${retryHref ? html`<p><a href="${retryHref}">Check again</a></p>` : null}</div>`}
${options.fieldError ? html`<p>${why}</p>` : null}
${checkForm(typed, options.fieldError ? { message, fix } : undefined, demo)}
</div>`,
  });
}

/** `GET /guides/<topic>`: a guide rendered from docs/guides, with a way back to the result it was opened from. */
export function guidePage(guide: { title: string; description: string; body: SafeHtml }, domain: string | null, demo: DemoSettings | null = null): SafeHtml {
  return page({
    title: guide.title,
    description: guide.description,
    demo,
    body: html`<article class="guide">
${domain ? html`<p><a href="/check/${encodeURIComponent(domain)}">← Back to the result for ${domain}</a></p>` : null}
<h1>${guide.title}</h1>
${guide.body}
<p><a href="/">Check another domain</a></p>
</article>`,
  });
}

/**
 * In the demo, a name outside its zones: no verdict. Even where a fixture file stands in for a real
 * provider's records (google.com), those are a few records a scenario needs, not the domain's DNS.
 */
export function notInDemoPage(typed: string, domain: string, demo: DemoSettings): SafeHtml {
  return page({
    title: `${domain} is not in the demo`,
    description: `${domain} is not one of the demo's domains: the demo answers from ${demo.source}, not from public DNS.`,
    noindex: true,
    demo,
    body: html`<div class="error-page tone-warning" id="not-in-demo">
<p class="muted">Error 404</p>
<h1>${domain} is not in the demo</h1>
<div class="card"><p><strong>This demo answers from ${demo.source}, not from public DNS, and ${domain} is not one of its domains.</strong></p>
<p>A verdict for ${domain} here would be made up: the demo has no copy of its DNS records (at most a few stand-in records that a demo domain refers to).</p>
<p>Pick a domain from the list below, or run <code>spoof-checker serve</code> without <code>--demo</code> to check real domains in public DNS.</p></div>
${checkForm(typed, undefined, demo)}
${demoDomainsSection(demo)}
</div>`,
  });
}

/** One row of a public history: a check or a confirmed change (no organisation, no webhook). */
export interface PublicHistoryRow {
  type: 'check' | 'change';
  at: string;
  /** A check: its verdict or what kept it from one; a change: the fields that changed. */
  text: string;
}

/** `GET /history/<domain>` (with `--public-history`): the checks and changes of a monitored domain, newest first. */
export function historyPage(domain: string, rows: PublicHistoryRow[], total: number): SafeHtml {
  return page({
    title: `${domain}: monitoring history`,
    description: `The checks and confirmed changes of ${domain}'s mail protection, newest first.`,
    noindex: true,
    body: html`<h1>Monitoring history of ${domain}</h1>
<p class="lead">The latest ${rows.length} of ${total} entries, newest first. A change is listed once two checks in a row agree on it.</p>
<table id="history"><thead><tr><th>When (UTC)</th><th>What</th><th>Seen</th></tr></thead><tbody>
${rows.map((row) => html`<tr class="history-${row.type}"><td><time datetime="${row.at}">${row.at.slice(0, 19).replace('T', ' ')}</time></td><td>${row.type === 'change' ? 'Change' : 'Check'}</td><td>${row.text}</td></tr>`)}
</tbody></table>
<p><a href="/check/${encodeURIComponent(domain)}">Check ${domain} now</a></p>`,
  });
}
