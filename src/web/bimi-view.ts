/**
 * The "Your logo in the inbox" section (BIMI). Like "Mail sent to you": the result page shows a
 * placeholder at once (the spoof verdict is never delayed by it) with a link to `/bimi/<domain>`,
 * which renders it on the server (no JavaScript needed); the page's script fetches the fragment
 * form (`?fragment=1`) and puts it in place. The logo is shown only after it passed every SVG Tiny
 * PS rule, and only as an image (`<img src="data:…">`, where no script runs and nothing is
 * fetched), never inline. Every value goes through the escaping `html` template.
 */
import type { BimiResult } from '@spoof-checker/engine';
import { html, type SafeHtml } from './html.js';
import { checkForm, page } from './layout.js';
import { FRAGMENT_PARAM } from './transport-view.js';

/** Where the BIMI section of a domain is rendered. */
export const BIMI_PATH = '/bimi';

/** The path of the BIMI page of a (normalised) domain. */
export function bimiPath(domain: string): string {
  return `${BIMI_PATH}/${encodeURIComponent(domain)}`;
}

type Tone = 'critical' | 'warning' | 'success' | 'info';

const GRADES: Record<BimiResult['grade'], { label: string; tone: Tone; text: string }> = {
  'ready-vmc': { label: 'Ready (VMC)', tone: 'success', text: 'Everything checks out, with a Verified Mark Certificate: Gmail (with the check mark), Apple Mail and Yahoo may show your logo.' },
  'ready-cmc': { label: 'Ready (CMC)', tone: 'success', text: 'Everything checks out, with a Common Mark Certificate: Gmail and Yahoo may show your logo; Apple Mail needs a VMC.' },
  'ready-self-asserted': { label: 'Ready (no certificate)', tone: 'warning', text: 'The record, DMARC and the logo check out. Yahoo may show it; Gmail and Apple Mail need a mark certificate.' },
  'not-ready': { label: 'Not ready', tone: 'critical', text: 'Something keeps mailbox providers from showing your logo: see the first step below.' },
  declined: { label: 'Declined', tone: 'info', text: 'The domain publishes an empty BIMI record: it asks providers not to show a logo.' },
  'not-published': { label: 'Not published', tone: 'info', text: 'No BIMI record is published, so no mailbox provider shows a logo for this domain.' },
  unknown: { label: 'Unknown', tone: 'warning', text: 'A lookup or a download failed, so we cannot tell; check again later.' },
};

/** The placeholder on the result page: a link that works without JavaScript, filled in by the script. */
export function bimiPlaceholder(domain: string, displayDomain: string): SafeHtml {
  const path = bimiPath(domain);
  return html`<section class="detail" aria-labelledby="bimi-title" id="bimi" data-bimi-src="${path}?${FRAGMENT_PARAM}=1" aria-live="polite">
<h2 id="bimi-title">Your logo in the inbox</h2>
<p>Can mailbox providers show the logo of ${displayDomain} beside its mail (BIMI)? This reads the BIMI record and downloads the logo and its certificate; it takes a few seconds.</p>
<p><a id="bimi-link" href="${path}">Check the BIMI logo of ${displayDomain}</a></p>
</section>`;
}

/** The section itself (the fragment the script fetches). */
export function bimiSection(bimi: BimiResult, displayDomain: string): SafeHtml {
  const grade = GRADES[bimi.grade];
  const logo = bimi.logo;
  const cert = bimi.certificate;
  const provider = (name: string, p: { eligible: boolean; why: string }) => html`<li data-provider="${name.toLowerCase()}" data-eligible="${p.eligible ? 'yes' : 'no'}"><strong>${name}</strong>: ${p.eligible ? 'eligible' : 'not eligible'} (${p.why})</li>`;
  return html`<section class="detail" aria-labelledby="bimi-title" id="bimi" data-bimi-grade="${bimi.grade}">
<h2 id="bimi-title">Your logo in the inbox</h2>
<div class="card verdict tone-${grade.tone}">
${logo?.dataUri ? html`<p><img class="bimi-logo" id="bimi-logo" src="${logo.dataUri}" alt="The logo published for ${displayDomain}" width="96" height="96"></p>` : null}
<p><span class="badge" id="bimi-grade">${grade.label}</span></p>
<p>${grade.text}</p>
<dl class="facts">
<dt>Record</dt><dd id="bimi-record">${bimi.record ? html`<code>${bimi.record.name}</code>: <code>${bimi.record.text}</code>` : 'none'}</dd>
<dt>DMARC</dt><dd id="bimi-dmarc">${bimi.dmarc.eligible === null ? 'could not be checked' : bimi.dmarc.eligible ? 'at enforcement' : html`not strict enough for a logo: ${bimi.dmarc.blockedBy.map((b, i) => html`${i > 0 ? '; ' : ''}${b.detail}`)}.`}</dd>
${logo ? html`<dt>Logo</dt><dd id="bimi-logo-state">${logo.fetch ? html`not downloaded: ${logo.fetch.error}` : logo.violations.length === 0 ? html`valid SVG Tiny PS, ${logo.bytes} bytes` : html`${logo.violations.length} rule(s) broken`}</dd>` : null}
${cert ? html`<dt>Certificate</dt><dd id="bimi-certificate">${cert.fetch ? html`not downloaded: ${cert.fetch.error}` : html`${cert.kind ?? 'unknown kind'}, chain ${cert.chain.trusted ? 'trusted' : html`<strong>not trusted</strong>`}${cert.chain.anchor ? html` (to <span id="bimi-anchor">${cert.chain.anchor}</span>)` : null}, valid until ${cert.notAfter?.slice(0, 10) ?? '?'}`}</dd>` : null}
</dl>
</div>
${logo && logo.violations.length > 0 ? html`<h3>SVG Tiny PS rules broken</h3>
<ul class="list-plain" id="bimi-violations">${logo.violations.map((v) => html`<li data-rule="${v.rule}">line ${v.line}: ${v.detail}</li>`)}</ul>` : null}
${cert && cert.chain.problems.length > 0 ? html`<h3>Certificate problems</h3>
<ul class="list-plain" id="bimi-chain">${cert.chain.problems.map((p) => html`<li>${p}</li>`)}</ul>` : null}
<h3>Mailbox providers</h3>
<ul class="list-plain" id="bimi-providers">${provider('Gmail', bimi.providers.gmail)}${provider('Apple', bimi.providers.apple)}${provider('Yahoo', bimi.providers.yahoo)}</ul>
${bimi.nextSteps.length > 0 ? html`<h3>What to do</h3>
<ol id="bimi-steps">${bimi.nextSteps.map((step) => html`<li>${step}</li>`)}</ol>` : null}
</section>`;
}

/** The whole BIMI page (the no-JavaScript link's target). */
export function bimiPage(bimi: BimiResult, domain: string, displayDomain: string): SafeHtml {
  return page({
    title: `${displayDomain}: BIMI ${GRADES[bimi.grade].label.toLowerCase()}`,
    description: GRADES[bimi.grade].text,
    noindex: true,
    body: html`${checkForm(displayDomain)}
<p><a href="/check/${encodeURIComponent(domain)}">← Can someone send as ${displayDomain}?</a></p>
${bimiSection(bimi, displayDomain)}`,
  });
}

/** The section when the BIMI check cannot be given (not enabled on this server). */
export function bimiUnavailable(message: string): SafeHtml {
  return html`<section class="detail" aria-labelledby="bimi-title" id="bimi">
<h2 id="bimi-title">Your logo in the inbox</h2>
<p class="muted">${message}</p>
</section>`;
}
