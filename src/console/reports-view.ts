/**
 * The report dashboards of the console (`/console/domains/<domain>/reports`, `/console/reports`) and
 * of a shared link: drawn on the server from `showReports` (src/summaries/summary.ts), the one
 * implementation behind `reports show --json`, so every figure here equals the CLI's. The chart is
 * an SVG with a title and description, and its figures are in a table beside it (no JavaScript; a
 * screen reader and a printer read both). Untrusted reports (RFC 7489 §7.1 gives anyone a `rua`
 * address to mail) are apart and marked, never in the figures unless the person asks.
 */
import type { ReportsSummarySender } from '@spoof-checker/engine';
import type { ReportDayTotals } from '../store/reports.js';
import { REPORT_WINDOWS, type ShownReports } from '../summaries/summary.js';
import { html, type SafeHtml } from '../web/html.js';
import { CONSOLE_PATH } from './accounts.js';
import { consolePage, domainPath, type ConsoleViewer, type Notice } from './views.js';

/** The windows offered as links (days). */
export { REPORT_WINDOWS };
/** Domains per page of `/console/reports` (the CSV has every one). */
export const ORGANISATION_REPORT_ROWS_PER_PAGE = 100;

/** The tables a dashboard downloads as CSV (`reports.csv?table=`). */
export const REPORT_TABLES = ['daily', 'senders', 'services', 'blockers', 'selectors', 'tls', 'untrusted'] as const;
export type ReportTable = (typeof REPORT_TABLES)[number];

/** The window a page shows: the last `days` days up to the end of `until` (UTC), or up to now. */
export interface DashboardWindow {
  days: number;
  /** `YYYY-MM-DD` when dates were chosen, else null (up to now). */
  from: string | null;
  until: string | null;
  /** `?untrusted=include`: the untrusted reports' messages added to the chart and daily figures, marked. */
  includeUntrusted: boolean;
}

/** Figures in full, grouped by thousands (12,345; never 12.3k). */
export const figure = (n: number): string => FIGURES.format(n);
/** One formatter for every figure: `toLocaleString` with options builds a new one per call (a dashboard shows thousands of figures). */
const FIGURES = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** A share of all messages, as a percentage with one decimal ("—" when there are none). */
export function rate(part: number, whole: number): string {
  if (whole <= 0) return '—';
  const share = (part / whole) * 100;
  return `${share.toFixed(share > 0 && share < 0.1 ? 2 : 1)}%`;
}

/** The daily rows of the chart and its table: trusted, plus untrusted when asked. */
export function dailyRows(series: readonly ReportDayTotals[], includeUntrusted: boolean): { day: string; messages: number; dmarcPass: number; spfAligned: number; dkimAligned: number; failing: number }[] {
  const byDay = new Map<string, { day: string; messages: number; dmarcPass: number; spfAligned: number; dkimAligned: number; failing: number }>();
  for (const t of series) {
    if (!t.trusted && !includeUntrusted) continue;
    const row = byDay.get(t.day) ?? { day: t.day, messages: 0, dmarcPass: 0, spfAligned: 0, dkimAligned: 0, failing: 0 };
    row.messages += t.messages;
    row.dmarcPass += t.dmarcPass;
    row.spfAligned += t.spfAligned;
    row.dkimAligned += t.dkimAligned;
    row.failing += t.failing;
    byDay.set(t.day, row);
  }
  return [...byDay.values()].sort((a, b) => a.day.localeCompare(b.day));
}

/** The totals of the shown daily rows. */
export function totalsOf(rows: ReturnType<typeof dailyRows>): { messages: number; dmarcPass: number; spfAligned: number; dkimAligned: number; failing: number } {
  const sum = { messages: 0, dmarcPass: 0, spfAligned: 0, dkimAligned: 0, failing: 0 };
  for (const r of rows) {
    sum.messages += r.messages;
    sum.dmarcPass += r.dmarcPass;
    sum.spfAligned += r.spfAligned;
    sum.dkimAligned += r.dkimAligned;
    sum.failing += r.failing;
  }
  return sum;
}

/** A sending service: the provider (by its DKIM or SPF domain, or its published ranges), else the confirmed reverse name's parent, else the address alone. */
export function serviceOf(sender: ReportsSummarySender): string {
  if (sender.provider) return sender.provider;
  // A confirmed reverse name (forward-confirmed, RFC 8601 §3 "iprev"): its parent names the network.
  if (sender.reverseName?.status === 'found' && sender.reverseName.confirmed) {
    const labels = sender.reverseName.name.replace(/\.$/, '').split('.');
    return labels.length > 2 ? labels.slice(1).join('.') : labels.join('.');
  }
  return `Unnamed (${sender.source})`;
}

/** The senders grouped by their service, busiest first. */
export function servicesOf(senders: readonly ReportsSummarySender[]): { service: string; senders: ReportsSummarySender[]; messages: number; dmarcPass: number; spfAligned: number; dkimAligned: number; classes: string[] }[] {
  const groups = new Map<string, ReportsSummarySender[]>();
  for (const s of senders) {
    const key = serviceOf(s);
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  return [...groups.entries()]
    .map(([service, list]) => ({
      service,
      senders: list,
      messages: list.reduce((n, s) => n + s.messages, 0),
      dmarcPass: list.reduce((n, s) => n + s.dmarcPass, 0),
      spfAligned: list.reduce((n, s) => n + s.spfAligned, 0),
      dkimAligned: list.reduce((n, s) => n + s.dkimAligned, 0),
      classes: [...new Set(list.map((s) => s.class))].sort(),
    }))
    .sort((a, b) => b.messages - a.messages || a.service.localeCompare(b.service));
}

const CHART_WIDTH = 720;
const CHART_HEIGHT = 240;
const CHART_LEFT = 64;
const CHART_PAD = 28;

/** Every UTC day from `from` to `to` (YYYY-MM-DD), at most MAX_CHART_DAYS. */
function daysBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`), end = Date.parse(`${to}T00:00:00Z`); t <= end && out.length < MAX_CHART_DAYS; t += 86_400_000) out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}

/** The most days a chart draws (the longest window, MAX_REPORT_DAYS, and a day of overlap). */
export const MAX_CHART_DAYS = 367;

/** Messages per day as stacked bars (passing DMARC under failing), one slot per day of the window, with a title and description. */
export function messagesChart(reported: ReturnType<typeof dailyRows>, caption: string, window: { from: string; to: string }): SafeHtml {
  const byDay = new Map(reported.map((r) => [r.day, r]));
  const span = daysBetween(window.from, window.to);
  const rows = span.length > 0 ? span.map((day) => byDay.get(day) ?? { day, messages: 0, dmarcPass: 0, spfAligned: 0, dkimAligned: 0, failing: 0 }) : reported;
  const max = Math.max(1, ...rows.map((r) => r.messages));
  const plotWidth = CHART_WIDTH - CHART_LEFT - CHART_PAD;
  const plotHeight = CHART_HEIGHT - 2 * CHART_PAD;
  const slot = rows.length > 0 ? plotWidth / rows.length : plotWidth;
  const bar = Math.max(1, slot * 0.8);
  const base = CHART_PAD + plotHeight;
  const total = totalsOf(reported);
  const desc = total.messages === 0 ? 'No messages were reported in this window.' : `${figure(total.messages)} messages from ${rows[0]!.day} to ${rows.at(-1)!.day}; ${figure(total.dmarcPass)} passed DMARC and ${figure(total.failing)} failed. The busiest day had ${figure(max)}. The table after the chart has every day's figures.`;
  return html`<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${CHART_WIDTH} ${CHART_HEIGHT}" role="img" aria-labelledby="chart-title chart-desc" id="messages-chart" preserveAspectRatio="xMinYMin meet">
<title id="chart-title">${caption}</title><desc id="chart-desc">${desc}</desc>
<line x1="${CHART_LEFT}" y1="${base}" x2="${CHART_WIDTH - CHART_PAD}" y2="${base}"></line>
<line x1="${CHART_LEFT}" y1="${CHART_PAD}" x2="${CHART_LEFT}" y2="${base}"></line>
<text x="${CHART_LEFT - 6}" y="${CHART_PAD + 4}" text-anchor="end">${figure(max)}</text>
<text x="${CHART_LEFT - 6}" y="${base}" text-anchor="end">0</text>
${rows.map((r, i) => {
  const x = (CHART_LEFT + i * slot + (slot - bar) / 2).toFixed(1);
  const passHeight = (r.dmarcPass / max) * plotHeight;
  const failHeight = (r.failing / max) * plotHeight;
  return html`<rect class="pass" x="${x}" y="${(base - passHeight).toFixed(1)}" width="${bar.toFixed(1)}" height="${passHeight.toFixed(1)}"></rect><rect class="fail" x="${x}" y="${(base - passHeight - failHeight).toFixed(1)}" width="${bar.toFixed(1)}" height="${failHeight.toFixed(1)}"></rect>`;
})}
<text x="${CHART_LEFT}" y="${CHART_HEIGHT - 6}">${rows[0]?.day ?? ''}</text>
<text x="${CHART_WIDTH - CHART_PAD}" y="${CHART_HEIGHT - 6}" text-anchor="end">${rows.at(-1)?.day ?? ''}</text>
</svg>
<p class="chart-key muted"><span class="key key-pass" aria-hidden="true"></span> Passed DMARC <span class="key key-fail" aria-hidden="true"></span> Failed DMARC</p>`;
}

/** A scrolling table with its caption and its CSV link. */
function table(id: string, caption: string, csv: string | null, head: string[], rows: SafeHtml[], numeric: number[] = []): SafeHtml {
  return html`<div class="table-scroll" tabindex="0" role="region" aria-labelledby="${id}-caption"><table id="${id}"><caption id="${id}-caption">${caption}${csv ? html` <a href="${csv}" class="csv-link" download>Download CSV<span class="visually-hidden"> of ${caption}</span></a>` : null}</caption>
<thead><tr>${head.map((h, i) => html`<th scope="col"${numeric.includes(i) ? html` class="num"` : null}>${h}</th>`)}</tr></thead>
<tbody>${rows}</tbody></table></div>`;
}

const num = (n: number) => html`<td class="num">${figure(n)}</td>`;
const CLASS_WORDS: Readonly<Record<string, string>> = { legitimate: 'Legitimate', forwarded: 'Forwarded', unauthorised: 'Unauthorised', unauthorized: 'Unauthorised' };

/** The query of a window, for links (`days=30` or `from=…&until=…`, and `untrusted=include`). */
export function windowQuery(window: DashboardWindow, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  if (window.from && window.until) {
    params.set('from', window.from);
    params.set('until', window.until);
  } else params.set('days', String(window.days));
  if (window.includeUntrusted) params.set('untrusted', 'include');
  for (const [k, v] of Object.entries(extra)) params.set(k, v);
  return params.toString();
}

/**
 * The window's choices: the 7/30/90-day links (the one shown marked `aria-current="page"`, and drawn
 * apart by the stylesheet) and a GET form of two dates (checked on the server: real dates, from before
 * until, at most MAX_REPORT_DAYS days; a bad one is a 400 that says what to type). `shown` fills the
 * form with the window's days.
 */
export function windowControls(base: string, window: DashboardWindow, shown: { from: string; to: string }): SafeHtml {
  return html`<nav aria-label="Window" class="actions window-links">${REPORT_WINDOWS.map((d) => html`<a href="${base}?${windowQuery({ ...window, days: d, from: null, until: null })}"${!window.from && window.days === d ? html` aria-current="page"` : null}>Last ${d} days</a>`)}${window.from ? html`<span aria-current="page" class="window-current">${window.from} to ${window.until}</span>` : null}</nav>
<form method="get" action="${base}" class="console-form inline" id="window-form"><div><label for="from">From</label><input type="date" id="from" name="from" value="${window.from ?? shown.from}" required></div><div><label for="until">Until</label><input type="date" id="until" name="until" value="${window.until ?? shown.to}" required></div>${window.includeUntrusted ? html`<input type="hidden" name="untrusted" value="include">` : null}<button type="submit" class="secondary">Show these dates</button></form>`;
}

/** The body of one domain's dashboard (the console's page and the shared link's). */
export function dashboardBody(options: { shown: ShownReports; window: DashboardWindow; base: string; csvBase: string; heading: SafeHtml }): SafeHtml {
  const { shown, window, base, csvBase } = options;
  const s = shown.summary;
  const rows = dailyRows(s.series, window.includeUntrusted);
  const total = totalsOf(rows);
  const csv = (t: ReportTable) => `${csvBase}?${windowQuery(window, { table: t })}`;
  const services = servicesOf(s.senders);
  const u = s.untrusted;
  return html`${options.heading}
${windowControls(base, window, s.window)}
<dl class="facts" id="report-figures"><dt>Window</dt><dd id="window">${s.window.from} to ${s.window.to} (${figure(s.days)} days)</dd>
<dt>Aggregate reports</dt><dd id="reports-count">${figure(s.reports)}${s.duplicates > 0 ? ` (${figure(s.duplicates)} received again, counted once)` : ''}</dd>
<dt>Messages</dt><dd id="messages">${figure(total.messages)}</dd>
<dt>DMARC pass rate</dt><dd id="pass-rate">${rate(total.dmarcPass, total.messages)} <span class="muted">(${figure(total.dmarcPass)} of ${figure(total.messages)} messages)</span></dd>
<dt>Aligned SPF</dt><dd id="spf-rate">${rate(total.spfAligned, total.messages)} <span class="muted">(${figure(total.spfAligned)})</span></dd>
<dt>Aligned DKIM</dt><dd id="dkim-rate">${rate(total.dkimAligned, total.messages)} <span class="muted">(${figure(total.dkimAligned)})</span></dd></dl>
${window.includeUntrusted ? html`<p class="card notice tone-warning" id="untrusted-included"><strong>Untrusted reports included.</strong> The chart and the figures above add ${figure(u.messages)} message(s) from reports anyone could have sent. <a href="${base}?${windowQuery({ ...window, includeUntrusted: false })}">Show trusted reports only</a>.</p>` : null}
<section aria-labelledby="readiness-title" class="card"><h2 id="readiness-title">Ready for quarantine and reject?</h2>
<p id="readiness-summary"><strong>${s.readiness.verdict === 'ready' ? 'Ready.' : 'Not yet.'}</strong> ${s.readiness.summary}</p>
<p><code>p=quarantine</code> would have acted on ${figure(s.readiness.quarantine.messages)} message(s) (${rate(s.readiness.quarantine.messages, s.messages)}); <code>p=reject</code> on ${figure(s.readiness.reject.messages)} (${rate(s.readiness.reject.messages, s.messages)}).</p>
${s.readiness.blockers.length > 0
  ? table('blockers', 'Fix these first', csv('blockers'), ['Source', 'Service', 'Failing messages', 'Exact fix'], s.readiness.blockers.map((b) => html`<tr><td><code>${b.source}</code></td><td>${b.provider ?? ''}</td>${num(b.messages)}<td>${b.fix}</td></tr>`), [2])
  : html`<p id="no-blockers">No legitimate sender would be hurt.</p>`}
${s.readiness.blockersLeftOut > 0 ? html`<p class="muted">And ${figure(s.readiness.blockersLeftOut)} more sender(s) to fix (the CSV and <code>reports show --json</code> list the first ${s.readiness.blockers.length}).</p>` : null}
</section>
<section aria-labelledby="chart-heading"><h2 id="chart-heading">Messages over time</h2>
${messagesChart(rows, `Messages per day for ${s.domain}: passing and failing DMARC`, s.window)}
<details class="card" open><summary>The chart's figures</summary>
${table('daily', 'Messages per day (days with reports)', csv('daily'), ['Day', 'Messages', 'DMARC pass', 'Aligned SPF', 'Aligned DKIM', 'Failing', 'Pass rate'], rows.map((r) => html`<tr><td>${r.day}</td>${num(r.messages)}${num(r.dmarcPass)}${num(r.spfAligned)}${num(r.dkimAligned)}${num(r.failing)}<td class="num">${rate(r.dmarcPass, r.messages)}</td></tr>`), [1, 2, 3, 4, 5, 6])}
</details></section>
<section aria-labelledby="services-title"><h2 id="services-title">Sending services</h2>
${services.length === 0
  ? html`<p id="no-senders">No sender was reported in this window.</p>`
  : table('services', 'Senders grouped by the service that sends', csv('services'), ['Service', 'Class', 'Messages', 'DMARC pass', 'Aligned SPF', 'Aligned DKIM', 'Addresses'], services.map((g) => html`<tr><th scope="row">${g.service}</th><td>${g.classes.map((c) => CLASS_WORDS[c] ?? c).join(', ')}</td>${num(g.messages)}<td class="num">${rate(g.dmarcPass, g.messages)}</td><td class="num">${rate(g.spfAligned, g.messages)}</td><td class="num">${rate(g.dkimAligned, g.messages)}</td><td><details><summary>${figure(g.senders.length)} address(es)</summary><ul class="list-plain">${g.senders.map((x) => html`<li><code>${x.source}</code>${x.reverseName?.status === 'found' ? html` (${x.reverseName.name})` : null}: ${figure(x.messages)}, ${CLASS_WORDS[x.class] ?? x.class}${x.fix ? html`. Fix: ${x.fix}` : null}</li>`)}</ul></details></td></tr>`), [2, 3, 4, 5])}
${table('senders', 'Every sender', csv('senders'), ['Source', 'Service', 'Class', 'Messages', 'DMARC pass', 'Aligned SPF', 'Aligned DKIM', 'Why'], s.senders.map((x) => html`<tr><td><code>${x.source}</code></td><td>${serviceOf(x)}</td><td>${CLASS_WORDS[x.class] ?? x.class}</td>${num(x.messages)}${num(x.dmarcPass)}${num(x.spfAligned)}${num(x.dkimAligned)}<td>${x.why}</td></tr>`), [3, 4, 5, 6])}
${s.sendersLeftOut > 0 ? html`<p class="muted" id="senders-left-out">And ${figure(s.sendersLeftOut)} more sender(s) with fewer messages (counted in the figures above).</p>` : null}
</section>
<section aria-labelledby="spf-title"><h2 id="spf-title">SPF tightening</h2>
${s.spfTighten
  ? html`<p>Publish this record instead (it keeps ${s.spfTighten.keep.join(', ')}):</p><pre id="spf-tighten"><code>${s.spfTighten.record}</code></pre>`
  : html`<p id="spf-tighten-none">${s.spf.status === 'not-looked-up' ? 'Not computed: this service has no resolver for reports. Run reports show with --resolver to compute it.' : `Nothing to tighten (the SPF record: ${s.spf.status}).`}</p>`}
${s.spfUnused.length > 0 ? html`<p>SPF terms no reported mail passed through: ${s.spfUnused.map((t) => html`<code>${t.term}</code> `)}</p>` : null}
</section>
<section aria-labelledby="selectors-title"><h2 id="selectors-title">DKIM selectors seen</h2>
${s.selectors.length === 0 ? html`<p id="no-selectors">None in this window.</p>` : html`<ul class="list-plain" id="selectors">${s.selectors.map((x) => html`<li><code>${x}</code></li>`)}</ul>`}
${s.selectorsLeftOut > 0 ? html`<p class="muted">And ${figure(s.selectorsLeftOut)} more.</p>` : null}
<p><a href="${csv('selectors')}" download>Download CSV of the selectors</a></p>
</section>
<section aria-labelledby="tls-title"><h2 id="tls-title">TLS reports</h2>
${s.tls.policies.length === 0
  ? html`<p id="no-tls">No TLS report (RFC 8460) in this window.</p>`
  : table('tls', `TLS sessions per policy (${figure(s.tls.reports)} report(s))`, csv('tls'), ['Policy', 'Mode', 'Successful', 'Failed', 'Failures', 'Can it be enforced?'], s.tls.policies.map((p) => html`<tr><td>${p.policy}</td><td>${p.mode ?? ''}</td>${num(p.successful)}${num(p.failed)}<td>${p.failures.map((f) => `${f.resultType} ${figure(f.sessions)}`).join(', ')}</td><td>${p.enforce ? p.enforce.answer : p.policyType === 'tlsa' ? (p.failed === 0 ? 'DANE: no failed session reported.' : 'DANE: fix the failures first.') : ''}</td></tr>`), [2, 3])}
</section>
<section aria-labelledby="untrusted-title" class="card untrusted"><h2 id="untrusted-title">Untrusted reports <span class="badge tone-warning">Untrusted</span></h2>
<p>${u.note}</p>
<p id="untrusted-figures">${figure(u.reports)} report(s), ${figure(u.messages)} message(s), ${figure(u.dmarcPass)} passing DMARC.${u.messages > 0 && !window.includeUntrusted ? html` <a href="${base}?${windowQuery({ ...window, includeUntrusted: true })}">Include them in the chart and figures</a>.` : null}</p>
${u.sources.length > 0 ? table('untrusted', 'Sources in untrusted reports', csv('untrusted'), ['Source', 'Messages', 'DMARC pass', 'Failing'], u.sources.map((x) => html`<tr><td><code>${x.source}</code></td>${num(x.messages)}${num(x.dmarcPass)}${num(x.failing)}</tr>`), [1, 2, 3]) : null}
${u.sourcesLeftOut > 0 ? html`<p class="muted">And ${figure(u.sourcesLeftOut)} more source(s).</p>` : null}
</section>`;
}

/** `/console/domains/<domain>/reports`. */
export function domainReportsPage(options: { viewer: ConsoleViewer; domain: string; shown: ShownReports; window: DashboardWindow; notice: Notice | null; shares: SafeHtml | null }): SafeHtml {
  const base = `${domainPath(options.domain)}/reports`;
  return consolePage({
    title: `Reports for ${options.domain}`,
    viewer: options.viewer,
    current: `${CONSOLE_PATH}/reports`,
    notice: options.notice,
    body: html`${dashboardBody({
      shown: options.shown,
      window: options.window,
      base,
      csvBase: `${base}.csv`,
      heading: html`<p><a href="${domainPath(options.domain)}">${options.domain}</a> · <a href="${CONSOLE_PATH}/reports">Reports of every domain</a></p>
<h1 id="reports-title">DMARC and TLS reports for ${options.domain}</h1>`,
    })}${options.shares}`,
  });
}

/** One domain's row on the organisation's page. */
export interface OrganisationReportRow {
  domain: string;
  reports: number;
  messages: number;
  dmarcPass: number;
  spfAligned: number;
  dkimAligned: number;
  /** Messages failing DMARC: what quarantine or reject would act on (the domain's dashboard says which senders). */
  failing: number;
  untrustedMessages: number;
}

/** `/console/reports`: a row per domain with its totals and pass rate, linking to its dashboard; a page of them at a time, the totals over every domain. */
export function organisationReportsPage(options: {
  viewer: ConsoleViewer;
  rows: OrganisationReportRow[];
  window: DashboardWindow;
  windowLabel: string;
  /** The window's UTC days (the date form's values). */
  shownDays: { from: string; to: string };
  /** Every domain's messages and passes (not only this page's). */
  total: { messages: number; dmarcPass: number };
  /** Domains with reports in all, and this page of them (from 1). */
  domains: number;
  page: number;
  pages: number;
}): SafeHtml {
  const { rows, window, page, pages } = options;
  const base = `${CONSOLE_PATH}/reports`;
  const total = options.total;
  const first = (page - 1) * ORGANISATION_REPORT_ROWS_PER_PAGE + 1;
  const pageHref = (n: number) => `${base}?${windowQuery(window, n === 1 ? {} : { page: String(n) })}`;
  return consolePage({
    title: 'Reports',
    viewer: options.viewer,
    current: base,
    body: html`<h1 id="reports-title">Reports of ${options.viewer.organizationName}</h1>
${windowControls(base, window, options.shownDays)}
<p id="org-totals">${options.windowLabel}: ${figure(total.messages)} message(s) in all, ${rate(total.dmarcPass, total.messages)} passing DMARC.</p>
${rows.length === 0
  ? html`<p id="no-reports">${options.domains === 0 ? "No report has been received for this organisation's domains yet." : 'No domain on this page.'}</p>`
  : html`<p id="domains-shown">${options.domains} domain(s) with reports${pages > 1 ? `; showing ${first}\u2013${first + rows.length - 1}, by name` : ''}.</p>
${table('domains-reports', 'Every domain with reports', `${base}.csv?${windowQuery(window)}`, ['Domain', 'Reports', 'Messages', 'DMARC pass rate', 'Aligned SPF', 'Aligned DKIM', 'Failing DMARC', 'Untrusted messages (apart)'], rows.map((r) => html`<tr><th scope="row"><a href="${domainPath(r.domain)}/reports?${windowQuery(window)}">${r.domain}</a></th>${num(r.reports)}${num(r.messages)}<td class="num">${rate(r.dmarcPass, r.messages)}</td><td class="num">${rate(r.spfAligned, r.messages)}</td><td class="num">${rate(r.dkimAligned, r.messages)}</td>${num(r.failing)}${num(r.untrustedMessages)}</tr>`), [1, 2, 3, 4, 5, 6, 7])}`}
${pages > 1
  ? html`<nav aria-label="Pages of domains" class="actions" id="pages">${page > 1 ? html`<a href="${pageHref(page - 1)}" rel="prev">Previous ${ORGANISATION_REPORT_ROWS_PER_PAGE}</a>` : null}<span>Page ${page} of ${pages}</span>${page < pages ? html`<a href="${pageHref(page + 1)}" rel="next">Next ${ORGANISATION_REPORT_ROWS_PER_PAGE}</a>` : null}</nav>`
  : null}`,
  });
}

/** A CSV field (RFC 4180 §2): quoted when it holds a comma, quote or line break; a leading formula sign defused. */
export function csvField(value: string | number): string {
  let text = String(value);
  if (/^[=+\-@\t\r]/.test(text) && typeof value === 'string') text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

const csvLines = (head: string[], rows: (string | number)[][]): string => [head, ...rows].map((r) => r.map(csvField).join(',')).join('\r\n') + '\r\n';

/** One table of a domain's dashboard as CSV (RFC 4180), with the same figures as the page. */
export function dashboardCsv(shown: ShownReports, table: ReportTable, includeUntrusted: boolean): string {
  const s = shown.summary;
  switch (table) {
    case 'daily':
      return csvLines(['day', 'messages', 'dmarc_pass', 'spf_aligned', 'dkim_aligned', 'failing'], dailyRows(s.series, includeUntrusted).map((r) => [r.day, r.messages, r.dmarcPass, r.spfAligned, r.dkimAligned, r.failing]));
    case 'senders':
      return csvLines(['source', 'service', 'class', 'messages', 'dmarc_pass', 'spf_aligned', 'dkim_aligned', 'failing', 'selectors', 'fix'], s.senders.map((x) => [x.source, serviceOf(x), x.class, x.messages, x.dmarcPass, x.spfAligned, x.dkimAligned, x.failing, x.selectors.join(' '), x.fix ?? '']));
    case 'services':
      return csvLines(['service', 'classes', 'addresses', 'messages', 'dmarc_pass', 'spf_aligned', 'dkim_aligned'], servicesOf(s.senders).map((g) => [g.service, g.classes.join(' '), g.senders.length, g.messages, g.dmarcPass, g.spfAligned, g.dkimAligned]));
    case 'blockers':
      return csvLines(['source', 'provider', 'failing_messages', 'fix'], s.readiness.blockers.map((b) => [b.source, b.provider ?? '', b.messages, b.fix]));
    case 'selectors':
      return csvLines(['selector'], s.selectors.map((x) => [x]));
    case 'tls':
      return csvLines(['policy', 'mode', 'successful', 'failed', 'enforce'], s.tls.policies.map((p) => [p.policy, p.mode ?? '', p.successful, p.failed, p.enforce?.answer ?? '']));
    case 'untrusted':
      return csvLines(['source', 'messages', 'dmarc_pass', 'failing', 'marked'], s.untrusted.sources.map((x) => [x.source, x.messages, x.dmarcPass, x.failing, 'untrusted']));
  }
}

/** The organisation's table as CSV. */
export function organisationCsv(rows: readonly OrganisationReportRow[]): string {
  return csvLines(['domain', 'reports', 'messages', 'dmarc_pass', 'spf_aligned', 'dkim_aligned', 'failing', 'untrusted_messages'], rows.map((r) => [r.domain, r.reports, r.messages, r.dmarcPass, r.spfAligned, r.dkimAligned, r.failing, r.untrustedMessages]));
}
