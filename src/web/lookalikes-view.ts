/**
 * "Names that look like yours": the registered lookalikes of the checked domain, graded by what each
 * can do with mail. As with "Mail sent to you", the result page shows a placeholder at once (the
 * verdict never waits for it) with a link to `/lookalikes/<domain>`, which renders it on the server
 * (no JavaScript needed); the page's script fetches the fragment form (`?fragment=1`) and puts it in
 * place. Every value goes through the escaping `html` template.
 */
import type { LookalikeReport } from '@spoof-checker/engine';
import { html, type SafeHtml } from './html.js';
import { checkForm, page } from './layout.js';
import { FRAGMENT_PARAM } from './transport-view.js';

/** Where the lookalikes section of a domain is rendered. */
export const LOOKALIKES_PATH = '/lookalikes';

/** The path of the lookalikes page of a (normalised) domain. */
export function lookalikesPath(domain: string): string {
  return `${LOOKALIKES_PATH}/${encodeURIComponent(domain)}`;
}

type Tone = 'critical' | 'warning' | 'success' | 'info';

const GRADES: Record<string, { label: string; tone: Tone }> = {
  critical: { label: 'Critical', tone: 'critical' },
  high: { label: 'High', tone: 'critical' },
  medium: { label: 'Medium', tone: 'warning' },
  unknown: { label: 'Unknown', tone: 'info' },
  protected: { label: 'Protected', tone: 'success' },
};

/** The placeholder on the result page: a link that works without JavaScript, filled in by the script. */
export function lookalikesPlaceholder(domain: string, displayDomain: string): SafeHtml {
  const path = lookalikesPath(domain);
  return html`<section class="detail" aria-labelledby="lookalikes-title" id="lookalikes" data-lookalikes-src="${path}?${FRAGMENT_PARAM}=1" aria-live="polite">
<h2 id="lookalikes-title">Names that look like yours</h2>
<p>Can someone register a name that looks like ${displayDomain} (a typo, a look-alike letter) and send mail from it? This asks DNS about a few hundred such names and takes a few seconds.</p>
<p><a id="lookalikes-link" href="${path}">Find the names that look like ${displayDomain}</a></p>
</section>`;
}

/** The section itself (the fragment the script fetches). */
export function lookalikesSection(report: LookalikeReport): SafeHtml {
  const listed = report.lookalikes;
  const worrying = report.counts.critical + report.counts.high;
  return html`<section class="detail" aria-labelledby="lookalikes-title" id="lookalikes" data-lookalikes-count="${String(listed.length)}">
<h2 id="lookalikes-title">Names that look like yours</h2>
<p id="lookalikes-summary">${listed.length === 0
    ? html`None of the ${String(report.generated)} names tried that look like ${report.unicode} resolves.`
    : html`${String(listed.length)} of the ${String(report.generated)} names tried that look like ${report.unicode} resolve${worrying > 0 ? html`; <strong>${String(worrying)} can send or receive mail</strong>` : null}.`}
Names that do not resolve (${String(report.counts.none)}) are not listed: not resolving is not the same as available.</p>
${report.looksLike ? html`<p><strong>${report.unicode} itself looks like ${report.looksLike}.</strong> If someone sent you this name, it may be a lookalike.</p>` : null}
${listed.length > 0 ? html`<ul class="reasons" id="lookalikes-list">${listed.map((l) => {
    const grade = GRADES[l.grade] ?? { label: l.grade, tone: 'info' as Tone };
    return html`<li class="tone-${grade.tone}" data-grade="${l.grade}" data-lookalike="${l.domain}"><span class="badge">${grade.label}</span>
<h3>${l.unicode}${l.unicode !== l.domain ? html` <span class="muted">(${l.domain})</span>` : null}</h3>
<p class="muted">${l.fuzzers.join(', ')}; ${String(l.distance)} character${l.distance === 1 ? '' : 's'} away. MX ${l.mx.status}; SPF ${l.spf.status}; DMARC ${l.dmarc.status}.</p>
<p>${l.note}</p></li>`;
  })}</ul>` : null}
${report.nextSteps.map((step) => html`<h3>${step.title}</h3><p>${step.body}</p>${step.records ? html`<pre tabindex="0" class="record" data-copy="parking records"><code>${step.records.join('\n')}</code></pre>` : null}`)}
</section>`;
}

/** The whole lookalikes page (the no-JavaScript link's target). */
export function lookalikesPage(report: LookalikeReport): SafeHtml {
  return page({
    title: `${report.unicode}: names that look like yours`,
    description: `${report.lookalikes.length} registered names look like ${report.unicode}.`,
    noindex: true,
    body: html`${checkForm(report.unicode)}
<p><a href="/check/${encodeURIComponent(report.domain)}">← Can someone send as ${report.unicode}?</a></p>
${lookalikesSection(report)}`,
  });
}
