/**
 * The result page: the API's spoof check result, rendered in full on the server. It reads the
 * spec's fields and `details` defensively: `details` grows (new fields are ignored until rendered,
 * missing ones leave their line out), so the page never breaks on a result shape it does not know.
 */
import { parseDmarcRecord } from '@spoof-checker/engine';
import type { Finding } from '@spoof-checker/engine';
import type { SpoofCheckResult, Verdict, InboxOutcome } from '@spoof-checker/engine';
import { MAX_DNS_TERMS, MAX_VOID_LOOKUPS } from '@spoof-checker/engine';
import { html, type SafeHtml } from './html.js';
import type { DemoSettings } from './demo.js';
import { lookalikesPlaceholder } from './lookalikes-view.js';
import { transportPlaceholder, transportSection } from './transport-view.js';
import { bimiPlaceholder, bimiSection } from './bimi-view.js';
import { checkForm, page } from './layout.js';

type Tone = 'critical' | 'warning' | 'success' | 'info';

/** The badge of each verdict: words first (colour is never the only signal). */
export const VERDICT_LABELS: Readonly<Record<Verdict, { label: string; tone: Tone }>> = {
  spoofable: { label: 'Spoofable', tone: 'critical' },
  // The API's own words (`partially_protected`), so page and JSON read the same.
  partially_protected: { label: 'Partially protected', tone: 'warning' },
  protected: { label: 'Protected', tone: 'success' },
};

const INBOX_OUTCOMES: Readonly<Record<InboxOutcome, string>> = {
  delivered: 'Delivered to the inbox',
  spam: 'Sent to the spam folder',
  rejected: 'Rejected by the receiving server',
};

const SEVERITY_LABELS: Readonly<Record<string, { label: string; tone: Tone }>> = {
  critical: { label: 'Critical', tone: 'critical' },
  warning: { label: 'Warning', tone: 'warning' },
  info: { label: 'Info', tone: 'info' },
  success: { label: 'Pass', tone: 'success' },
};

// Tolerant readers of `details`, whose shape is open.
type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** Where the page was reached from, for the permanent link. */
export interface ResultPageContext {
  /** `https://host` as the request named it, or null to show the path alone. */
  origin: string | null;
  /** In the demo (`serve --demo`): the banner, and demo examples under the form. */
  demo?: DemoSettings | null;
  /** Link the domain's public monitoring history (only when the operator enabled `--public-history`). */
  historyLink?: boolean;
  /** Show the "Names that look like yours" placeholder (the server runs lookalike searches). */
  lookalikes?: boolean;
}

/** The path of the public history page of a (normalised) domain. */
export function historyPath(domain: string): string {
  return `/history/${encodeURIComponent(domain)}`;
}

/** The path of the result page for a (normalised) domain. */
export function resultPath(domain: string): string {
  return `/check/${encodeURIComponent(domain)}`;
}

/** The whole result page. */
export function resultPage(result: SpoofCheckResult, context: ResultPageContext): SafeHtml {
  const details = obj(result.details);
  const displayDomain = str(details['displayDomain']) ?? result.domain;
  const verdict = VERDICT_LABELS[result.verdict] ?? { label: result.verdict, tone: 'info' as Tone };
  return page({
    title: `${displayDomain}: ${verdict.label}`,
    description: result.headline,
    noindex: true,
    demo: context.demo ?? null,
    body: html`${checkForm(displayDomain, undefined, context.demo ?? null)}
${resultSections(result, context)}`,
  });
}

/**
 * The result's sections (the verdict, the next step, what was found, the details): the public
 * page's body under its form, and the console's domain page (src/console/views.ts) from the same code.
 */
export function resultSections(result: SpoofCheckResult, context: ResultPageContext): SafeHtml {
  const details = obj(result.details);
  const displayDomain = str(details['displayDomain']) ?? result.domain;
  const verdict = VERDICT_LABELS[result.verdict] ?? { label: result.verdict, tone: 'info' as Tone };
  const path = resultPath(result.domain);
  return html`<section class="card verdict tone-${verdict.tone}" aria-labelledby="headline">
<p><span class="badge" id="verdict" data-verdict="${result.verdict}">${verdict.label}</span></p>
${result.source === 'fixture-zones' && !context.demo ? html`<p id="source-note" role="note"><strong>From fixture zones.</strong> These answers come from zone files loaded in memory, not from the live DNS: they are stand-in records and say nothing about the real ${displayDomain}.</p>` : null}
<h1 id="headline">${result.headline}</h1>
<p id="summary">${result.summary}</p>
<dl class="facts">
<dt>A forged message would be</dt><dd id="inbox-outcome">${INBOX_OUTCOMES[result.inboxOutcome] ?? result.inboxOutcome}</dd>
${subdomainNoteShown(result) ? html`<dt>Subdomains</dt><dd id="subdomain-note">${result.subdomainNote}</dd>` : null}
</dl>
</section>
${nextStepSection(result.nextStep)}
<section aria-labelledby="reasons-title">
<h2 id="reasons-title">What we found</h2>
<ul class="reasons">${result.reasons.map(reasonItem)}</ul>
</section>
${result.transport ? transportSection(result.transport, displayDomain) : transportPlaceholder(result.domain, displayDomain)}
${context.lookalikes ? lookalikesPlaceholder(result.domain, displayDomain) : null}
${result.bimi ? bimiSection(result.bimi, displayDomain) : bimiPlaceholder(result.domain, displayDomain)}
${spfSection(result, obj(details['spf']))}
${sharedInfrastructureSection(obj(obj(details['spf'])['sharedInfrastructure']))}
${dmarcSection(result, obj(details['dmarc']))}
${dkimSection(result, obj(details['dkim']))}
${mxSection(result, obj(details['mx']))}
${uncheckedSection(details)}
<section class="detail" aria-labelledby="about-title">
<h2 id="about-title">About this check</h2>
<dl class="facts">
${result.dnssec && result.dnssec.status !== 'not-checked' ? html`<dt>DNSSEC</dt><dd id="dnssec" data-dnssec="${result.dnssec.status}">${result.dnssec.status}${result.dnssec.reason.code !== null ? ` (EDE ${result.dnssec.reason.code})` : ''}: ${proseWithRecords(result.dnssec.reason.text, 'the DS record')}${result.dnssec.status === 'bogus' ? html` <span id="dnssec-fix"><strong>Fix:</strong> ${(result.dnssec.nextSteps ?? []).join(' ')}</span>` : null}${context.demo?.dnssec ? html` <span class="muted" id="dnssec-anchor">Validated against ${context.demo.dnssec.anchor}.</span>` : null}</dd>` : null}
<dt>Answers from</dt><dd id="source" data-source="${result.source}">${result.source === 'fixture-zones' ? 'fixture zone files (stand-in records, not the live DNS)' : 'the DNS'}</dd>
<dt>Checked</dt><dd><time datetime="${result.resolvedAt}" id="checked-at">${formatTime(result.resolvedAt)}</time>, in ${result.responseTimeMs} ms${num(obj(details['dns'])['queries']) !== null ? html`, ${plural(num(obj(details['dns'])['queries'])!, 'DNS query', 'DNS queries')}` : null}</dd>
<dt>Link to this check</dt><dd><a id="permalink" href="${path}">${context.origin ?? ''}${path}</a> <span class="muted">(opening it checks again)</span></dd>
<dt>As JSON</dt><dd><code>curl -H 'Accept: application/json' ${context.origin ?? ''}${path}</code></dd>
${context.historyLink ? html`<dt>Over time</dt><dd><a id="history-link" href="${historyPath(result.domain)}">Monitoring history of ${displayDomain}</a></dd>` : null}
</dl>
</section>`;
}

/** The subdomain note, unless a reason on the page already says it word for word (it is the subdomain reason's detail). */
function subdomainNoteShown(result: SpoofCheckResult): boolean {
  return result.subdomainNote !== null && result.subdomainNote !== '' && !result.reasons.some((reason) => reason.detail === result.subdomainNote);
}

function formatTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

function reasonItem(reason: Finding): SafeHtml {
  const severity = SEVERITY_LABELS[reason.severity] ?? { label: reason.severity, tone: 'info' as Tone };
  return html`<li class="tone-${severity.tone}" data-reason="${reason.id}">
<span class="badge">${severity.label}</span>
<h3>${reason.title}</h3>
<p>${reason.detail}</p>
</li>`;
}

/**
 * The next step. Its body is prose with the records to publish on lines indented by two spaces
 * (src/verdict/advice.ts): those become copyable blocks; a block after a line ending "from" or "reads:" is the
 * record as it stands, the others are what to publish.
 */
function nextStepSection(step: SpoofCheckResult['nextStep']): SafeHtml {
  const parts: SafeHtml[] = [];
  let previous = '';
  let prose: string[] = [];
  const flush = () => {
    if (prose.length > 0) parts.push(html`<p>${prose.join(' ')}</p>`);
    prose = [];
  };
  for (const line of step.body.split('\n')) {
    if (/^\s{2,}\S/.test(line)) {
      flush();
      const current = /\b(?:from|reads:)$/i.test(previous.trim());
      parts.push(
        current
          ? html`<p class="record-label current">Current record</p><pre tabindex="0" class="record current" data-copy="the current record"><code>${line.trim()}</code></pre>`
          : html`<p class="record-label">Record to publish</p><pre tabindex="0" class="record publish" data-copy="the record to publish"><code>${line.trim()}</code></pre>`,
      );
    } else if (line.trim() !== '') {
      prose.push(line.trim());
    }
    if (line.trim() !== '') previous = line;
  }
  flush();
  return html`<section class="card next" aria-labelledby="next-title">
<p class="muted">Next step</p>
<h2 id="next-title">${step.title}</h2>
${parts}
<p><a href="${safeHref(step.href)}" id="guide-link">Read the guide: how and why</a></p>
</section>`;
}

/** Only relative and http(s) links are followed; anything else (javascript:…) becomes inert. */
function safeHref(href: string): string {
  return /^(?:\/(?!\/)|https?:\/\/)/i.test(href) ? href : '#';
}

/** Separator of the path from the top record to the term that opens SPF (`include:x.example → +all`). */
const PATH_SEPARATOR = ' → ';

/**
 * The path, from the top record down, of the term that lets anyone pass: from the pass set when the
 * result has one (`details.spf.passSet.open.term`), else from a test address that passed.
 */
function openingPath(spf: Obj): string[] {
  const term = str(obj(obj(spf['passSet'])['open'])['term']);
  if (term) return term.split(PATH_SEPARATOR).map((t) => t.trim().toLowerCase());
  for (const outside of arr(spf['outsideAddresses'])) {
    const o = obj(outside);
    const matched = str(o['matchedTerm']);
    if (o['result'] === 'pass' && matched) return [matched.toLowerCase()];
  }
  return [];
}

/**
 * A share of an address space in words: 100%, 0.39%, less than 0.01%, more than 99.99%, none.
 * Only the whole space is "100%": `-ip4:192.0.2.0/24 … +all` leaves some addresses out, and the
 * page must not round that to 100% while the summary says "over 99.9%".
 */
export function formatShare(share: number): string {
  if (share <= 0) return 'none';
  if (share >= 1) return '100%';
  const percent = share * 100;
  if (percent < 0.01) return 'less than 0.01%';
  if (percent > 99.99) return 'more than 99.99%';
  // 99.5 to 99.99: two decimals, so that rounding never says 100%.
  if (percent >= 99.5) return `${percent.toFixed(2)}%`;
  return `${percent >= 10 ? percent.toFixed(0) : percent.toPrecision(2)}%`;
}

/** An `ip4:`/`ip6:` term with its prefix length (RFC 7208 §5.6: ip4-cidr-length, ip6-cidr-length). */
const ADDRESS_RANGE_TERM = /^[+]?(ip4|ip6):[^/\s]+\/(\d{1,3})$/i;

/**
 * What the term that opens SPF does, in words. `+all` (or an include that ends in it) lets any
 * server pass; an address range lets its own share pass (`ip4:0.0.0.0/1` is half of IPv4, not
 * "any server": the other half may pass through another term, which the pass-set figures count).
 */
export function openerWords(raw: string): string {
  const range = ADDRESS_RANGE_TERM.exec(raw.trim());
  if (!range) return 'lets any server pass';
  const family = range[1]!.toLowerCase() === 'ip4' ? 'IPv4' : 'IPv6';
  const prefix = Number(range[2]);
  return `lets ${formatShare(2 ** -prefix)} of all ${family} addresses pass`;
}

const FLAG_LABELS: Readonly<Record<string, string>> = {
  unreachable: 'never reached (after all)',
  ignored: 'ignored (record has all)',
  macro: 'macro: depends on the sender',
  expanded: 'macro expanded',
  repeated: 'repeated',
  loop: 'loop',
  truncated: 'walk stopped here',
};

function treeNode(node: unknown, opening: string[], depth: number, parentOnPath: boolean): SafeHtml {
  const n = obj(node);
  const raw = str(n['raw']) ?? '';
  const lookups = num(n['lookups']) ?? 0;
  const voids = num(n['voidLookups']) ?? 0;
  const flags = Object.entries(obj(n['flags'])).filter(([, on]) => on === true).map(([name]) => FLAG_LABELS[name] ?? name);
  // On the opening path when the parent was and this term is the path's next step; the last one is the opener.
  const onPath = parentOnPath && opening[depth] === raw.toLowerCase();
  const opens = onPath && depth === opening.length - 1;
  const record = str(n['record']);
  const children = arr(n['children']);
  const errors = arr(n['errors']).map(str).filter((e): e is string => e !== null);
  return html`<li${onPath ? html` data-opens="true"` : null}><span class="term">${raw}</span>
${lookups > 0 || voids > 0 ? html`<span class="term-meta">${[lookups > 0 ? plural(lookups, 'DNS lookup') : null, voids > 0 ? plural(voids, 'void lookup') : null].filter(Boolean).join(', ')}</span>` : null}${flags.map((f) => html`<span class="flag">${f}</span>`)}
${opens ? html` <span class="opens">${openerWords(raw)}</span>` : onPath ? html` <span class="opens">leads to the term that opens SPF to anyone</span>` : null}
${record ? html`<div class="term-meta">→ <code>${record}</code></div>` : null}
${errors.length > 0 ? html`<ul class="list-plain">${errors.map((e) => html`<li>${e}</li>`)}</ul>` : null}
${children.length > 0 ? html`<ul>${children.map((c) => treeNode(c, opening, depth + 1, onPath))}</ul>` : null}
</li>`;
}

/** What the record's final `all` tells receivers about a server it does not list (RFC 7208 §4.6.2, §8). */
const ALL_MEANINGS: Readonly<Record<string, string>> = {
  '-all': 'fail for servers not listed (receivers may reject)',
  '~all': 'softfail for servers not listed (accepted, marked suspicious)',
  '?all': 'neutral for servers not listed (no opinion)',
  '+all': 'pass for every server (anyone may send)',
};

const SPF_STATUS: Readonly<Record<string, string>> = {
  found: 'One SPF record published',
  none: 'No SPF record',
  multiple: 'Several SPF records: receivers treat this as an error (RFC 7208 §4.5)',
  temperror: 'The SPF lookup failed',
};

function spfSection(result: SpoofCheckResult, spf: Obj): SafeHtml {
  const status = str(spf['status']);
  const records = arr(spf['records']).map(str).filter((r): r is string => r !== null);
  if (records.length === 0 && result.spf.rawRecord) records.push(result.spf.rawRecord);
  const lookups = num(spf['lookupCount']) ?? result.spf.lookupCount;
  const minimum = spf['lookupCountIsMinimum'] === true;
  const voids = num(spf['voidLookups']);
  const size = num(spf['sizeOctets']);
  const errors = arr(spf['errors']).map(str).filter((e): e is string => e !== null);
  const tree = arr(spf['tree']);
  const opening = openingPath(spf);
  const passSet = obj(spf['passSet']);
  const pass = obj(passSet['pass']);
  const openTerm = str(obj(passSet['open'])['term']);
  const outside = arr(spf['outsideAddresses']).map(obj);
  return html`<section class="detail" aria-labelledby="spf-title" id="spf">
<h2 id="spf-title">SPF: who may send</h2>
<p>${status ? (SPF_STATUS[status] ?? status) : result.spf.published ? SPF_STATUS['found'] : SPF_STATUS['none']}.</p>
${records.map((r) => html`<pre tabindex="0" class="record" data-copy="the SPF record"><code>${r}</code></pre>`)}
${result.spf.published || records.length > 0
    ? html`<dl class="facts">
<dt>DNS lookups</dt><dd id="spf-lookups">${minimum ? 'at least ' : ''}${lookups} of ${MAX_DNS_TERMS} allowed${lookups > MAX_DNS_TERMS ? html` <strong class="opens">over the limit: receivers return permerror</strong>` : null}</dd>
${voids !== null ? html`<dt>Void lookups</dt><dd>${voids} of ${MAX_VOID_LOOKUPS} allowed</dd>` : null}
${result.spf.qualifier ? html`<dt>Ends with</dt><dd><code>${result.spf.qualifier}</code>${ALL_MEANINGS[result.spf.qualifier] ? html`: ${ALL_MEANINGS[result.spf.qualifier]}` : null}</dd>` : null}
${size !== null ? html`<dt>Size</dt><dd>${size} characters</dd>` : null}
</dl>`
    : null}
${errors.length > 0 ? html`<h3>Problems</h3><ul class="list-plain">${errors.map((e) => html`<li>${e}</li>`)}</ul>` : null}
${num(pass['ipv4Share']) !== null
    ? html`<h3>Who passes SPF</h3><dl class="facts" id="spf-pass-set">
<dt>IPv4 addresses</dt><dd>${formatShare(num(pass['ipv4Share'])!)}</dd>
${num(pass['ipv6Share']) !== null ? html`<dt>IPv6 addresses</dt><dd>${formatShare(num(pass['ipv6Share'])!)}</dd>` : null}
${openTerm ? html`<dt>Opened by</dt><dd><code class="opens" id="spf-opened-by">${openTerm}</code></dd>` : null}
${passSet['wide'] === true ? html`<dt>Note</dt><dd>Far more addresses pass than any one sender needs.</dd>` : null}
</dl>`
    : null}
${tree.length > 0 ? html`<h3>Include and redirect tree</h3><ul class="tree" id="spf-tree">${tree.map((node) => treeNode(node, opening, 0, true))}</ul>` : null}
${outside.length > 0
    ? html`<h3>Test: mail from addresses nobody owns</h3><ul class="list-plain">${outside.map(
        (o) => html`<li><code>${str(o['ip'])}</code>: <strong>${str(o['result'])}</strong>${str(o['matchedTerm']) ? html` (matched <code>${str(o['matchedTerm'])}</code>)` : null}${str(o['problem']) ? html`: ${str(o['problem'])}` : null}</li>`,
      )}</ul>`
    : null}
${organizationalSpf(result, obj(spf['organizational']))}
</section>`;
}

/**
 * The providers whose shared space passes SPF (cloud compute, CI runners, CDN edges), with the
 * addresses per family and the term that lets them in; nothing when none does.
 */
function sharedInfrastructureSection(report: Obj): SafeHtml | null {
  const exposures = arr(report['exposures']).map(obj);
  if (exposures.length === 0) return null;
  const data = obj(report['data']);
  const count = (n: number | null, family: string) => (n !== null && n > 0 ? `${n > Number.MAX_SAFE_INTEGER ? `about 2^${Math.round(Math.log2(n))}` : n.toLocaleString('en-US')} ${family}` : null);
  return html`<section class="detail" aria-labelledby="shared-title" id="shared-infrastructure">
<h2 id="shared-title">SPF: rented servers that pass</h2>
<p>Addresses your SPF lets pass that belong to shared infrastructure: anyone who rents a server, starts a CI job or relays through the edge there sends mail that passes SPF as you.</p>
<table class="shared">
<thead><tr><th scope="col">Provider</th><th scope="col">Addresses</th><th scope="col">Through</th><th scope="col">Severity</th></tr></thead>
<tbody>${exposures.map(
    (e) => html`<tr data-provider="${str(e['provider']) ?? ''}" data-severity="${str(e['severity']) ?? ''}"><td>${str(e['label']) ?? str(e['providerName'])}</td><td>${[count(num(e['ipv4Addresses']), 'IPv4'), count(num(e['ipv6Addresses']), 'IPv6')].filter((c) => c !== null).join(', ')}</td><td><code>${str(e['path'])}</code>${str(e['recordDomain']) !== str(e['checkedDomain']) ? html` <span class="muted">(in the record at ${str(e['recordDomain'])})</span>` : null}</td><td>${str(e['severity'])}</td></tr>`,
  )}</tbody>
</table>
<p class="muted">${data['stale'] === true ? html`<strong>The provider data is ${num(data['ageDays']) ?? '?'} days old</strong> (dated ${str(data['date']) ?? '?'}): the providers may have published other ranges since.` : html`Provider data dated ${str(data['date']) ?? '?'}.`} Blocking outbound port 25 by default is friction for an attacker, not protection.</p>
</section>`;
}

/**
 * The organisational domain's SPF, for a subdomain: under relaxed SPF alignment (RFC 7489 §3.1.2,
 * aspf=r, the default) a pass for the organisational domain aligns with this one, so an open record
 * there opens this name too. Without it, `www.org-open-relaxed.example` read "spoofable" above a
 * tight SPF record of its own and never showed the record that made it so.
 */
function organizationalSpf(result: SpoofCheckResult, org: Obj): SafeHtml | null {
  const domain = str(org['domain']);
  if (!domain) return null;
  const record = str(org['record']);
  const pass = obj(obj(org['passSet'])['pass']);
  const openTerm = str(obj(obj(org['passSet'])['open'])['term']);
  const parsed = result.dmarc.rawRecord ? parseDmarcRecord(result.dmarc.rawRecord) : null;
  const aspf = parsed?.kind === 'record' ? parsed.record.aspf : null;
  const why =
    aspf === 'r'
      ? `The DMARC record asks for relaxed SPF alignment (aspf=r, the default), so an SPF pass for ${domain} also counts for ${result.domain}.`
      : aspf === 's'
        ? `The DMARC record asks for strict SPF alignment (aspf=s), so an SPF pass for ${domain} does not count for ${result.domain}.`
        : `Once a DMARC record with relaxed SPF alignment (aspf=r, the default) applies, an SPF pass for ${domain} also counts for ${result.domain}.`;
  return html`<div id="spf-organizational">
<h3>SPF of the organisational domain, ${domain}</h3>
<p>${why}</p>
${record ? html`<pre tabindex="0" class="record" data-copy="the organisational domain's SPF record"><code>${record}</code></pre>` : html`<p>${SPF_STATUS[str(org['status']) ?? 'none'] ?? SPF_STATUS['none']}.</p>`}
${num(pass['ipv4Share']) !== null
    ? html`<dl class="facts">
<dt>IPv4 addresses</dt><dd>${formatShare(num(pass['ipv4Share'])!)}</dd>
${num(pass['ipv6Share']) !== null ? html`<dt>IPv6 addresses</dt><dd>${formatShare(num(pass['ipv6Share'])!)}</dd>` : null}
${openTerm ? html`<dt>Opened by</dt><dd><code class="opens">${openTerm}</code>: ${openerWords(openTerm.split(PATH_SEPARATOR).at(-1) ?? openTerm)}</dd>` : null}
</dl>`
    : null}
</div>`;
}

const DMARC_STATUS: Readonly<Record<string, string>> = {
  found: 'A DMARC record applies to this domain',
  none: 'No DMARC record',
  multiple: 'Several DMARC records: receivers ignore all of them',
  temperror: 'The DMARC lookup failed',
};

const DESTINATION_STATUS: Readonly<Record<string, string>> = {
  'same-organization': 'same organisation, no authorisation needed',
  verified: 'the destination accepts these reports',
  unverified: 'not authorised by the destination: receivers drop these reports',
  error: 'could not be checked (the lookup failed)',
  'not-checkable': 'no host name to check',
};

const ALIGNMENT = { r: 'relaxed', s: 'strict' } as const;

function dmarcSection(result: SpoofCheckResult, dmarc: Obj): SafeHtml {
  const status = str(dmarc['status']);
  const raw = result.dmarc.rawRecord;
  const parsed = raw ? parseDmarcRecord(raw) : null;
  const record = parsed?.kind === 'record' ? parsed.record : null;
  const np = str(dmarc['nonExistentSubdomainPolicy']);
  const effective = str(dmarc['effectivePolicy']);
  const applied = str(dmarc['appliedTag']);
  const destinations = arr(dmarc['reportDestinations']).map(obj);
  const foundAt = str(dmarc['foundAt']);
  return html`<section class="detail" aria-labelledby="dmarc-title" id="dmarc">
<h2 id="dmarc-title">DMARC: what receivers are told to do</h2>
<p>${status ? (DMARC_STATUS[status] ?? status) : result.dmarc.published ? DMARC_STATUS['found'] : DMARC_STATUS['none']}.</p>
${raw ? html`<pre tabindex="0" class="record" data-copy="the DMARC record"><code>${raw}</code></pre>` : null}
<dl class="facts">
${foundAt ? html`<dt>Found at</dt><dd><code>${foundAt}</code></dd>` : null}
${str(dmarc['organizationalDomain']) ? html`<dt>Organisational domain</dt><dd>${str(dmarc['organizationalDomain'])}</dd>` : null}
${effective ? html`<dt>Applies here</dt><dd><strong>${effective}</strong>${applied ? html` (from <code>${applied}=</code>)` : null}</dd>` : null}
${result.dmarc.policy ? html`<dt>Policy (p)</dt><dd>${result.dmarc.policy}</dd>` : null}
${result.dmarc.subdomainPolicy ? html`<dt>Subdomains (sp)</dt><dd>${result.dmarc.subdomainPolicy}</dd>` : null}
${np ? html`<dt>Names that do not exist (np)</dt><dd>${np}</dd>` : null}
${result.dmarc.percentage !== null ? html`<dt>Share of mail (pct)</dt><dd>${result.dmarc.percentage}%</dd>` : null}
${dmarc['testing'] === true ? html`<dt>Testing (t=y)</dt><dd>yes: receivers apply one level lower</dd>` : null}
${record ? html`<dt>Alignment</dt><dd>DKIM ${ALIGNMENT[record.adkim]} (adkim), SPF ${ALIGNMENT[record.aspf]} (aspf)</dd>` : null}
</dl>
${raw
    ? html`<h3>Aggregate report destinations</h3>${
        destinations.length > 0
          ? html`<ul class="list-plain">${destinations.map(
              (d) => html`<li>${arr(d['uris']).map((u, i) => html`${i > 0 ? ', ' : ''}<code>${str(obj(u)['uri'])}</code>`)}: ${DESTINATION_STATUS[str(d['status']) ?? ''] ?? str(d['status'])}</li>`,
            )}</ul>`
          : html`<p>None: no <code>rua=</code> tag, so nobody receives reports of who sends as this domain.</p>`
      }`
    : null}
</section>`;
}

function dkimSection(result: SpoofCheckResult, dkim: Obj): SafeHtml {
  const found = arr(dkim['found']).map(obj);
  const probed = num(dkim['probed']);
  return html`<section class="detail" aria-labelledby="dkim-title" id="dkim">
<h2 id="dkim-title">DKIM: signing keys</h2>
${found.length > 0
    ? html`<ul class="list-plain">${found.map((k) => {
        const type = str(k['keyType']);
        const bits = num(k['keyLength']);
        const notes = [k['usable'] === false ? 'not usable' : null, k['testing'] === true ? 'testing (t=y)' : null, k['revoked'] === true ? 'revoked' : null, str(k['provider'])].filter(Boolean);
        return html`<li>Selector <code>${str(k['selector'])}</code>${type ? html`: ${type.toUpperCase()}` : null}${bits !== null ? html`, ${bits}-bit` : null}${notes.length > 0 ? html` (${notes.join(', ')})` : null}</li>`;
      })}</ul>`
    : result.dkim.selector
      ? html`<p>Selector <code>${result.dkim.selector}</code>${result.dkim.keyLength !== null ? html`, ${result.dkim.keyLength}-bit` : null}.</p>`
      : result.dkim.published === null
        ? html`<p>Could not be checked: ${plural(arr(dkim['failed']).length, 'selector lookup')} failed, so a key may exist (see below).</p>`
        : html`<p>No key found.</p>`}
<p class="muted">DKIM keys can only be found by asking for a selector by name${probed !== null ? html`: ${plural(probed, 'common selector')} tried` : null}. A key under another selector is not seen here.</p>
</section>`;
}

const MX_STATUS: Readonly<Record<string, string>> = {
  found: 'Receives mail',
  'null-mx': 'Null MX: the domain says it accepts no mail (RFC 7505)',
  none: 'No MX record: senders fall back to the domain’s own address, if any',
  temperror: 'Could not be checked: the MX lookup failed',
};

function mxSection(result: SpoofCheckResult, mx: Obj): SafeHtml {
  const status = str(mx['status']);
  const hosts = arr(mx['hosts']).map(obj).filter((h) => h['exchange'] !== '');
  return html`<section class="detail" aria-labelledby="mx-title" id="mx">
<h2 id="mx-title">MX: where mail is received</h2>
<p>${status ? (MX_STATUS[status] ?? status) : result.mx.published === null ? MX_STATUS['temperror'] : result.mx.published ? MX_STATUS['found'] : MX_STATUS['none']}${result.mx.provider ? html`, by <strong>${result.mx.provider}</strong>` : null}.</p>
${hosts.length > 0
    ? html`<ul class="list-plain">${hosts.map((h) => {
        const addresses = obj(h['addresses']);
        const ips = [...arr(addresses['ipv4']), ...arr(addresses['ipv6'])].map(str).filter((a): a is string => a !== null);
        const problems = arr(h['problems']).map(str).filter((p): p is string => p !== null);
        return html`<li><code>${num(h['preference'])} ${str(h['exchange'])}</code>${str(h['provider']) ? html` (${str(h['provider'])})` : null}${ips.length > 0 ? html` <span class="term-meta">${ips.join(', ')}</span>` : null}${problems.map((p) => html`<br><span class="opens">${p}</span>`)}</li>`;
      })}</ul>`
    : null}
</section>`;
}

/** Everything that could not be checked: lookups that failed where the verdict did not rest on them. */
function uncheckedSection(details: Obj): SafeHtml {
  const items: SafeHtml[] = [];
  const dkim = obj(details['dkim']);
  for (const failure of arr(dkim['failed']).map(obj)) {
    items.push(html`<li>DKIM selector <code>${str(failure['selector'])}</code>: the lookup of <code>${str(failure['name'])}</code> failed (${str(failure['reason'])}), so a key there may exist.</li>`);
  }
  const spf = obj(details['spf']);
  const passSet = obj(spf['passSet']);
  const unknown = str(obj(passSet['unknown'])['problem']);
  if (unknown) items.push(html`<li>SPF: ${unknown}, so whether anyone can pass is not known.</li>`);
  const temperror = num(obj(passSet['temperror'])['ipv4Share']);
  if (!unknown && temperror !== null && temperror > 0) items.push(html`<li>SPF: for ${formatShare(temperror)} of IPv4 addresses a lookup failed, so their result is unknown.</li>`);
  for (const problem of arr(passSet['problems']).map(str)) if (problem) items.push(html`<li>SPF: ${problem}</li>`);
  if (spf['lookupCountIsMinimum'] === true) items.push(html`<li>SPF: part of the record depends on the sender (macros) or was too deep to follow, so the lookup count is a minimum.</li>`);
  for (const outside of arr(spf['outsideAddresses']).map(obj)) {
    if (outside['result'] === 'temperror') items.push(html`<li>SPF test from <code>${str(outside['ip'])}</code>: a lookup failed${str(outside['problem']) ? html` (${str(outside['problem'])})` : null}.</li>`);
  }
  const mx = obj(details['mx']);
  if (mx['status'] === 'temperror') items.push(html`<li>MX: the lookup failed, so where the domain receives mail is unknown.</li>`);
  for (const host of arr(mx['hosts']).map(obj)) {
    const addresses = obj(host['addresses']);
    for (const failure of arr(addresses['failures']).map(obj)) {
      items.push(html`<li>MX host <code>${str(host['exchange'])}</code>: the ${str(failure['type'])} lookup failed (${str(failure['reason'])}).</li>`);
    }
  }
  for (const destination of arr(obj(details['dmarc'])['reportDestinations']).map(obj)) {
    if (destination['status'] === 'error') items.push(html`<li>DMARC reports to <code>${str(destination['destination'])}</code>: the authorisation lookup failed.</li>`);
  }
  return html`<section class="detail${items.length > 0 ? ' unchecked' : ''}" aria-labelledby="unchecked-title" id="unchecked">
<h2 id="unchecked-title">What could not be checked</h2>
${items.length > 0 ? html`<ul class="list-plain">${items}</ul><p class="muted">None of these changes the verdict: a lookup the verdict rests on that fails gives no verdict at all.</p>` : html`<p>Nothing: every lookup answered.</p>`}
</section>`;
}

/** Text whose indented lines are records to publish (a DS at the registrar): the prose as text, each record in its own copyable box. */
function proseWithRecords(text: string, what: string): SafeHtml {
  return html`${text.split('\n').map((line) => (/^\s/.test(line) ? html`<pre tabindex="0" class="record publish" data-copy="${what}"><code>${line.trim()}</code></pre>` : html`${line}`))}`;
}
