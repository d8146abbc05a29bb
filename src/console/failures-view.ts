/**
 * `/console/domains/<domain>/failures`: a domain's failure reports (RFC 6591, RFC 7489 §7.3),
 * grouped by sending source (src/ingest/failure-reports.ts `failureReportsBySource`): the reported
 * messages' authentication results and header facts only, never a body (none is stored).
 */
import type { FailureSource } from '../ingest/failure-reports.js';
import type { FailureReport } from '../store/failure-reports.js';
import type { Monitor } from '../store/monitors.js';
import { html, type SafeHtml } from '../web/html.js';
import { CONSOLE_PATH } from './accounts.js';
import { FORM_TOKEN_FIELD } from './sessions.js';
import { consolePage, domainPath, ROLE_CAN, when, type ConsoleViewer, type Notice } from './views.js';

/** Sources whose newest report is shown in full (headers and authentication results). */
export const FAILURE_SOURCES_DETAILED = 20;

/** The windows offered, in days. */
export const FAILURE_WINDOWS = [7, 30, 90] as const;

const counts = (record: Record<string, number>): string =>
  Object.entries(record)
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${n.toLocaleString('en-GB')}`)
    .join(', ') || 'none';

/** The failure reports page of one domain. */
export function failuresPage(options: {
  viewer: ConsoleViewer;
  monitor: Monitor;
  days: number;
  summary: { reports: number; truncated: boolean; sources: FailureSource[] };
  hashLocalParts: boolean;
  /** The newest report of each of the first sources, by report id. */
  newest: ReadonlyMap<string, FailureReport>;
  notice: Notice | null;
}): SafeHtml {
  const { viewer, monitor, summary } = options;
  const base = `${domainPath(monitor.domain)}/failures`;
  return consolePage({
    title: `Failure reports of ${monitor.domain}`,
    viewer,
    current: CONSOLE_PATH,
    notice: options.notice,
    body: html`<p><a href="${domainPath(monitor.domain)}">Back to ${monitor.domain}</a></p>
<h1 id="failures-title">Failure reports of ${monitor.domain}</h1>
<nav aria-label="Window" class="actions">${FAILURE_WINDOWS.map((d) => html`<a href="${base}?days=${d}"${d === options.days ? html` aria-current="page"` : null}>${d} days</a>`)}</nav>
<p id="failure-count">${summary.reports.toLocaleString('en-GB')} report(s) in the last ${options.days} days${summary.truncated ? ' (the newest only)' : ''}. Only the reported messages' headers and authentication results are kept, never a body.</p>
${summary.sources.length === 0
  ? html`<p id="no-failures">No failure report was received for this domain in this window.</p>`
  : html`<div class="table-scroll" tabindex="0" role="region" aria-labelledby="failures-caption"><table id="failures"><caption id="failures-caption">Failure reports by sending source, most first</caption>
<thead><tr><th scope="col">Source</th><th scope="col">Reports</th><th scope="col">Failed</th><th scope="col">Delivery</th><th scope="col">From domains</th><th scope="col">First</th><th scope="col">Last</th></tr></thead>
<tbody>${summary.sources.map(
      (s) => html`<tr><th scope="row"><code>${s.sourceIp ?? 'unknown'}</code></th><td>${s.reports.toLocaleString('en-GB')}</td><td>${counts(s.authFailures)}</td><td>${counts(s.deliveryResults)}</td><td>${s.fromDomains.join(', ') || 'none'}</td><td>${when(s.firstReceived)}</td><td>${when(s.lastReceived)}</td></tr>`,
    )}</tbody></table></div>
<section aria-labelledby="newest-title"><h2 id="newest-title">The newest report from each source</h2>
${summary.sources.slice(0, FAILURE_SOURCES_DETAILED).map((source, i) => {
  const report = source.latest[0] !== undefined ? options.newest.get(source.latest[0]) : undefined;
  return report ? newestReport(report, `source-${i}`) : null;
})}</section>`}
<section aria-labelledby="hashing-title" class="card"><h2 id="hashing-title">Addresses in failure reports</h2>
<p id="hashing-state">${options.hashLocalParts ? 'The local parts of addresses (before the @) are stored hashed.' : 'The local parts of addresses are stored in clear.'} The setting applies to reports received from now on.</p>
${ROLE_CAN.own(viewer.role)
  ? html`<form method="post" action="${CONSOLE_PATH}/failure-reports/hashing" class="inline-action"><input type="hidden" name="${FORM_TOKEN_FIELD}" value="${viewer.token}"><input type="hidden" name="hash" value="${options.hashLocalParts ? 'no' : 'yes'}"><input type="hidden" name="back" value="${monitor.domain}"><button type="submit" class="secondary">${options.hashLocalParts ? 'Keep addresses in clear' : 'Hash addresses again'}</button></form>`
  : html`<p class="muted">Only an owner may change this.</p>`}</section>`,
  });
}

/** One report as stored: the feedback fields and the reported message's header fields (there is no body). */
function newestReport(report: FailureReport, id: string): SafeHtml {
  const fields = [...report.headers.map((f) => `${f.name}: ${f.value}`)].join('\n');
  return html`<details class="card" id="${id}"><summary><code>${report.sourceIp ?? 'unknown'}</code>, received ${when(report.receivedAt)}</summary>
<dl class="facts"><dt>Failed</dt><dd>${report.authFailure.join(', ') || 'not said'}</dd>
<dt>Aligned</dt><dd>${report.identityAlignment ?? 'not said'}</dd>
<dt>Delivery</dt><dd>${report.deliveryResult ?? 'not said'}</dd>
<dt>Reporter</dt><dd>${report.reporter.userAgent ?? 'unknown'}${report.reporter.from ? ` (${report.reporter.from})` : ''}${report.reporter.authenticated ? '' : ', not authenticated'}</dd>
${report.feedback.slice(0, 20).map((f) => html`<dt>${f.name}</dt><dd>${f.value}</dd>`)}</dl>
<p class="record-label" id="${id}-auth">Authentication-Results</p><pre class="record" tabindex="0" aria-labelledby="${id}-auth"><code>${report.authenticationResults.join('\n') || 'none'}</code></pre>
<p class="record-label" id="${id}-headers">Header fields of the reported message${report.localPartsHashed ? ' (local parts hashed)' : ''}</p><pre class="record" tabindex="0" aria-labelledby="${id}-headers"><code>${fields || 'none'}</code></pre></details>`;
}
