/**
 * The "Mail sent to you" section: how mail TO the domain travels (MTA-STS, TLS-RPT, STARTTLS of
 * every MX). The result page shows a placeholder at once (the spoof verdict is never delayed by
 * it) with a link to `/transport/<domain>`, which renders it on the server (no JavaScript needed);
 * the page's script fetches the fragment form (`?fragment=1`) and puts it in place. Every value
 * goes through the escaping `html` template.
 */
import { ADDRESS_CLASS_TEXT, classifyAddress, type TransportResult } from '@spoof-checker/engine';
import { html, type SafeHtml } from './html.js';
import { checkForm, page } from './layout.js';
import type { DemoSettings } from './demo.js';

/** `transport.dane` in words (RFC 7672): what DANE-validating senders do with mail to the domain. */
const DANE_WORDS: Record<NonNullable<TransportResult['dane']>, string> = {
  valid: 'valid on every mail server: senders that validate DANE require TLS with the certificate your TLSA records name',
  partial: 'valid on some mail servers, broken on none',
  broken: 'broken: a mail server has TLSA records that match nothing it presents, so senders that validate DANE refuse or delay mail to it',
  none: 'not in use (no mail server has a usable, DNSSEC-secure TLSA record)',
};
/** A mail server's TLSA state. */
const TLSA_WORDS: Record<string, string> = {
  secure: 'published and DNSSEC-secure',
  insecure: 'published in an unsigned zone (ignored by DANE senders)',
  bogus: 'DNSSEC-bogus (DANE senders defer mail)',
  indeterminate: 'could not be validated',
  none: 'none published',
  'not-applicable': 'not applicable (the MX or its addresses are not DNSSEC-secure)',
};
/** DANE for one address. */
const DANE_ADDRESS_WORDS: Record<string, string> = {
  match: 'the certificate matches the TLSA records',
  mismatch: 'the certificate matches NO TLSA record',
  'no-usable-tlsa': 'no usable TLSA record',
  'not-applicable': 'not applicable',
};

/** Where the transport section of a domain is rendered. */
export const TRANSPORT_PATH = '/transport';
/** The query parameter asking for the section alone (for the page's script). */
export const FRAGMENT_PARAM = 'fragment';

/** The path of the transport page of a (normalised) domain. */
export function transportPath(domain: string): string {
  return `${TRANSPORT_PATH}/${encodeURIComponent(domain)}`;
}

type Tone = 'critical' | 'warning' | 'success' | 'info';

const VERDICTS: Record<TransportResult['verdict'], { label: string; tone: Tone; text: string }> = {
  enforced: { label: 'Enforced', tone: 'success', text: 'Senders that support MTA-STS deliver to you only over TLS with a valid certificate.' },
  opportunistic: { label: 'Opportunistic', tone: 'warning', text: 'Mail to you is encrypted when it happens to work, but nothing makes senders require it: an attacker on the path can strip it.' },
  'at-risk': { label: 'At risk', tone: 'critical', text: 'Some of your mail servers offer no TLS: mail sent to them travels in clear text.' },
  broken: { label: 'Broken', tone: 'critical', text: 'Your MTA-STS policy is in enforce mode, but some mail servers fail it: senders that follow it refuse to deliver, and mail to you is being lost.' },
  untested: { label: 'Untested', tone: 'info', text: 'None of your mail servers could be probed from here (each is not public or did not answer), so whether mail to you is protected in transit is not known.' },
  'no-mail': { label: 'Accepts no mail', tone: 'info', text: 'Your domain publishes a null MX (RFC 7505): it accepts no mail, so there is no mail in transit to protect and nothing to publish for it.' },
};

const OUTCOMES: Record<string, string> = {
  ok: 'TLS with a valid certificate',
  unreachable: 'not reachable from here',
  'no-starttls': 'no STARTTLS',
  'tls-failed': 'TLS handshake failed',
  'cert-expired': 'certificate expired',
  'cert-untrusted': 'certificate not trusted',
  'cert-name-mismatch': 'certificate for another name',
};

/** How an address's outcome reads; a refused address by the address guard's class ("an address reserved for documentation"), as its finding says. */
function outcomeWords(probe: TransportResult['mx'][number]['addresses'][number]): string {
  if (probe.outcome === 'refused-private') return `${ADDRESS_CLASS_TEXT[probe.addressClass ?? classifyAddress(probe.address)]}, not probed`;
  return OUTCOMES[probe.outcome] ?? probe.outcome;
}

/** The placeholder on the result page: a link that works without JavaScript, filled in by the script. */
export function transportPlaceholder(domain: string, displayDomain: string): SafeHtml {
  const path = transportPath(domain);
  return html`<section class="detail" aria-labelledby="transport-title" id="transport" data-transport-src="${path}?${FRAGMENT_PARAM}=1" aria-live="polite">
<h2 id="transport-title">Mail sent to you</h2>
<p>Is mail sent to ${displayDomain} protected in transit, and will it still arrive? This checks MTA-STS, TLS reporting and the TLS of every mail server; it connects to them and takes a few seconds.</p>
<p><a id="transport-link" href="${path}">Check how mail sent to ${displayDomain} travels</a></p>
</section>`;
}

/** The section itself (the fragment the script fetches). */
export function transportSection(transport: TransportResult, displayDomain: string): SafeHtml {
  const verdict = VERDICTS[transport.verdict];
  const sts = transport.mtaSts;
  return html`<section class="detail" aria-labelledby="transport-title" id="transport" data-transport-verdict="${transport.verdict}">
<h2 id="transport-title">Mail sent to you</h2>
<div class="card verdict tone-${verdict.tone}">
<p><span class="badge" id="transport-verdict">${verdict.label}</span></p>
<p>${verdict.text}</p>
<dl class="facts">
<dt>MTA-STS</dt><dd id="transport-mta-sts">${sts.status}${sts.id ? html` (id <code>${sts.id}</code>)` : null}${sts.policy ? html`, max_age ${sts.policy.maxAge}, mx ${sts.policy.mx.map((m, i) => html`${i > 0 ? ', ' : ''}<code>${m}</code>`)}` : null}${sts.fetch?.error ? html`; policy fetch: ${sts.fetch.error}` : null}</dd>
<dt>TLS reporting</dt><dd id="transport-tlsrpt">${transport.tlsRpt.status}${transport.tlsRpt.rua.length > 0 ? html` (${transport.tlsRpt.rua.join(', ')})` : null}</dd>
${transport.dane ? html`<dt>DANE</dt><dd id="transport-dane" data-dane="${transport.dane}">${DANE_WORDS[transport.dane]}</dd>` : null}
</dl>
</div>
${transport.mx.length > 0 ? html`<h3>Mail servers of ${displayDomain}</h3>
<ul class="list-plain" id="transport-mx">${transport.mx.map(
    (mx) => html`<li><code>${mx.host}</code> (preference ${mx.preference})${mx.mtaStsCovered === null ? null : mx.mtaStsCovered ? ', in the MTA-STS policy' : html`, <strong>not in the MTA-STS policy</strong>`}${mx.tlsa ? html`<br><span class="muted" data-tlsa="${mx.tlsa.status}">TLSA: ${TLSA_WORDS[mx.tlsa.status] ?? mx.tlsa.status}${mx.tlsa.records.length > 0 ? html`, ${mx.tlsa.records.length} record${mx.tlsa.records.length === 1 ? '' : 's'}${mx.tlsa.usable ? '' : ', none usable for SMTP'}` : null}</span>` : null}
<ul>${mx.addresses.length === 0 ? html`<li class="muted">not probed</li>` : mx.addresses.map(
      (a) => html`<li><code>${a.address}</code>: <span data-outcome="${a.outcome}">${outcomeWords(a)}</span>${a.tlsVersion ? html` (${a.tlsVersion})` : null}${a.dane ? html`; DANE: <span data-dane-address="${a.dane}">${DANE_ADDRESS_WORDS[a.dane]}</span>` : null}${a.certificate ? html`<br><span class="muted">certificate for ${a.certificate.san.slice(0, 4).join(', ') || a.certificate.subject}, issued by ${a.certificate.issuer}, valid until ${a.certificate.notAfter.slice(0, 10)}</span>` : null}</li>`,
    )}</ul></li>`,
  )}</ul>` : null}
${transport.findings.length > 0 ? html`<h3>What we found</h3>
<ul class="reasons">${transport.findings.map(
    (f) => html`<li class="tone-${f.severity}" data-finding="${f.id}"><span class="badge">${f.severity}</span><h3>${f.title}</h3>${detailBlocks(f.detail, f.title)}</li>`,
  )}</ul>` : null}
</section>`;
}

/**
 * A finding's detail: prose lines as paragraphs, each run of indented lines (a policy, a record) as
 * one block to copy, named after its finding (and numbered when there are several), so that each Copy
 * button says what it copies to a screen reader.
 */
function detailBlocks(detail: string, title: string): SafeHtml[] {
  const blocks: SafeHtml[] = [];
  let record: string[] = [];
  let copied = 0;
  const runs = detail.split('\n').filter((line, i, all) => /^\s/.test(line) && (i === 0 || !/^\s/.test(all[i - 1]!))).length;
  const flush = (): void => {
    if (record.length > 0) {
      copied++;
      const name = `the record for ${title}${runs > 1 ? ` (${copied} of ${runs})` : ''}`;
      blocks.push(html`<pre tabindex="0" class="record" data-copy="${name}"><code>${record.join('\n')}</code></pre>`);
    }
    record = [];
  };
  for (const line of detail.split('\n')) {
    if (/^\s/.test(line)) record.push(line.trim());
    else {
      flush();
      blocks.push(html`<p>${line}</p>`);
    }
  }
  flush();
  return blocks;
}

/** The whole transport page (the no-JavaScript link's target). */
export function transportPage(transport: TransportResult, domain: string, displayDomain: string, demo: DemoSettings | null = null): SafeHtml {
  return page({
    title: `${displayDomain}: mail sent to you is ${VERDICTS[transport.verdict].label.toLowerCase()}`,
    description: VERDICTS[transport.verdict].text,
    noindex: true,
    demo,
    body: transportPageBody(domain, displayDomain, transportSection(transport, displayDomain), demo),
  });
}

/** The transport page when the check cannot be given here: the same page, with the reason in the section. */
export function transportUnavailablePage(message: string, domain: string, displayDomain: string, demo: DemoSettings | null = null): SafeHtml {
  return page({ title: `${displayDomain}: mail sent to you`, description: message, noindex: true, demo, body: transportPageBody(domain, displayDomain, transportUnavailable(message), demo) });
}

/** The transport page's body: the form (demo names in its hints), the page's one h1, the way back, the section. */
function transportPageBody(domain: string, displayDomain: string, section: SafeHtml, demo: DemoSettings | null): SafeHtml {
  return html`${checkForm(displayDomain, undefined, demo)}
<h1>Mail sent to ${displayDomain}</h1>
<p><a href="/check/${encodeURIComponent(domain)}">← Can someone send as ${displayDomain}?</a></p>
${section}`;
}

/** The section when the transport check cannot be given (not enabled on this server, rate limited). */
export function transportUnavailable(message: string): SafeHtml {
  return html`<section class="detail" aria-labelledby="transport-title" id="transport">
<h2 id="transport-title">Mail sent to you</h2>
<p class="muted">${message}</p>
</section>`;
}
