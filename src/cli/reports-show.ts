/**
 * `reports show` as text, and as one self-contained HTML page (`--html FILE`) for the person who
 * has to approve the policy change: the answer in one line, a daily chart of pass and fail (inline
 * SVG, no script, nothing loaded from elsewhere), the blockers with their fixes, and every sender.
 */
import type { DailyPoint, ShownReports } from '../summaries/summary.js';

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const percent = (share: number): string => `${(share * 100).toFixed(share > 0 && share < 0.01 ? 2 : 1)}%`;

/** The readable report. */
export function renderReportText(shown: ShownReports): string {
  const s = shown.summary;
  const lines: string[] = [];
  lines.push(`${s.domain}: ${s.reports} aggregate report(s) over ${s.days} day(s) (${s.window.from} to ${s.window.to}), ${s.messages} message(s)`);
  if (s.duplicates > 0) lines.push(`  ${s.duplicates} duplicate report(s) received again and counted once`);
  if (s.unauthenticatedReports > 0) lines.push(`  ${s.unauthenticatedReports} report(s) came in messages that were not authenticated (DKIM/DMARC): they may be forged`);
  if (s.untrusted.reports > 0) {
    lines.push(`  untrusted, kept apart (never in the figures below, never alerted on): ${s.untrusted.reports} report(s), ${s.untrusted.messages} message(s) from ${s.untrusted.sources.length + s.untrusted.sourcesLeftOut} source(s)`);
  }
  lines.push('');
  lines.push(`Enforcement: ${s.readiness.summary}`);
  lines.push(`  p=quarantine would have acted on ${s.readiness.quarantine.messages} message(s) (${percent(s.readiness.quarantine.share)}) from ${s.readiness.quarantine.senders.length} source(s)`);
  lines.push(`  p=reject would have acted on ${s.readiness.reject.messages} message(s) (${percent(s.readiness.reject.share)}) from ${s.readiness.reject.senders.length} source(s)`);
  for (const b of s.readiness.blockers) lines.push(`  fix first: ${b.source}: ${b.fix}`);
  if (s.readiness.blockersLeftOut > 0) lines.push(`  … and ${s.readiness.blockersLeftOut} more sender(s) to fix (the --json answer lists the first ${s.readiness.blockers.length})`);
  lines.push('');
  lines.push('Senders (messages, SPF aligned, DKIM aligned, DMARC pass):');
  for (const x of s.senders) {
    const reverse = x.reverseName?.status === 'found' ? ` ${x.reverseName.name}${x.reverseName.confirmed ? '' : ' (unconfirmed)'}` : '';
    lines.push(`  ${x.source.padEnd(39)} ${String(x.messages).padStart(8)} ${String(x.spfAligned).padStart(8)} ${String(x.dkimAligned).padStart(8)} ${String(x.dmarcPass).padStart(8)}  ${x.class}${x.provider ? ` (${x.provider})` : ''}${reverse}${x.selectors.length > 0 ? ` selectors ${x.selectors.join(',')}` : ''}`);
  }
  if (s.sendersLeftOut > 0) lines.push(`  … and ${s.sendersLeftOut} more sender(s) with fewer messages`);
  if (s.spfTighten) {
    lines.push('');
    lines.push(`SPF tightening: keep ${s.spfTighten.keep.join(', ')}`);
    lines.push(`  ${s.spfTighten.record}`);
  } else if (s.spf.status === 'not-looked-up') {
    lines.push('');
    lines.push('SPF tightening: not computed (give --zones DIR or --resolver ADDR to read the SPF record)');
  }
  if (s.spfUnused.length > 0) {
    lines.push('');
    lines.push(`SPF terms no reported mail passed through: ${s.spfUnused.map((u) => u.term).join(', ')}`);
  }
  if (s.selectors.length > 0) lines.push(`DKIM selectors seen: ${s.selectors.join(', ')}${s.selectorsLeftOut > 0 ? ` and ${s.selectorsLeftOut} more` : ''}`);
  if (s.tls.policies.length > 0) {
    lines.push('');
    lines.push(`TLS reports: ${s.tls.reports}`);
    for (const p of s.tls.policies) {
      const failures = p.failures.map((f) => `${f.resultType} ${f.sessions}`).join(', ');
      lines.push(`  ${p.policy}: ${p.successful} successful, ${p.failed} failed${failures ? ` (${failures})` : ''}`);
      if (p.enforce) lines.push(`    MTA-STS enforce: ${p.enforce.answer}`);
    }
  }
  if (s.externalDestination) {
    lines.push('');
    lines.push(`Receivers send reports to this service only if ${s.domain} publishes (RFC 7489 §7.1):`);
    lines.push(`  ${s.externalDestination.name} TXT "${s.externalDestination.value}"`);
  }
  return `${lines.join('\n')}\n`;
}

/** Chart geometry. */
const CHART_WIDTH = 720;
const CHART_HEIGHT = 220;
const CHART_MARGIN = 32;

/** The daily chart: stacked bars, pass (green) under fail (red), one per UTC day, as inline SVG. */
export function dailyChartSvg(daily: readonly DailyPoint[]): string {
  const max = Math.max(1, ...daily.map((d) => d.pass + d.fail));
  const plotWidth = CHART_WIDTH - 2 * CHART_MARGIN;
  const plotHeight = CHART_HEIGHT - 2 * CHART_MARGIN;
  const slot = daily.length > 0 ? plotWidth / daily.length : plotWidth;
  const bar = Math.max(1, slot * 0.8);
  const parts: string[] = [];
  daily.forEach((d, i) => {
    const x = CHART_MARGIN + i * slot + (slot - bar) / 2;
    const passHeight = (d.pass / max) * plotHeight;
    const failHeight = (d.fail / max) * plotHeight;
    const baseY = CHART_MARGIN + plotHeight;
    parts.push(`<rect class="pass" x="${x.toFixed(1)}" y="${(baseY - passHeight).toFixed(1)}" width="${bar.toFixed(1)}" height="${passHeight.toFixed(1)}"><title>${escapeHtml(d.day)}: ${d.pass} pass</title></rect>`);
    parts.push(`<rect class="fail" x="${x.toFixed(1)}" y="${(baseY - passHeight - failHeight).toFixed(1)}" width="${bar.toFixed(1)}" height="${failHeight.toFixed(1)}"><title>${escapeHtml(d.day)}: ${d.fail} fail</title></rect>`);
  });
  const first = daily[0]?.day ?? '';
  const last = daily.at(-1)?.day ?? '';
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${CHART_WIDTH} ${CHART_HEIGHT}" width="${CHART_WIDTH}" height="${CHART_HEIGHT}" role="img" aria-label="Messages per day: DMARC pass and fail">`,
    `<line x1="${CHART_MARGIN}" y1="${CHART_HEIGHT - CHART_MARGIN}" x2="${CHART_WIDTH - CHART_MARGIN}" y2="${CHART_HEIGHT - CHART_MARGIN}" stroke="#555"/>`,
    `<text x="${CHART_MARGIN}" y="${CHART_MARGIN - 10}" font-size="12">${max} messages</text>`,
    ...parts,
    `<text x="${CHART_MARGIN}" y="${CHART_HEIGHT - 10}" font-size="12">${escapeHtml(first)}</text>`,
    `<text x="${CHART_WIDTH - CHART_MARGIN}" y="${CHART_HEIGHT - 10}" font-size="12" text-anchor="end">${escapeHtml(last)}</text>`,
    '</svg>',
  ].join('');
}

/** One self-contained page: no script, no external resource, every value escaped. */
export function renderReportHtml(shown: ShownReports): string {
  const s = shown.summary;
  const rows = s.senders
    .map(
      (x) =>
        `<tr><td>${escapeHtml(x.source)}</td><td>${escapeHtml(x.provider ?? '')}</td><td>${x.messages}</td><td>${x.spfAligned}</td><td>${x.dkimAligned}</td><td>${x.dmarcPass}</td><td>${escapeHtml(x.class)}</td><td>${escapeHtml(x.fix ?? '')}</td></tr>`,
    )
    .join('\n');
  const blockers = s.readiness.blockers.map((b) => `<li><code>${escapeHtml(b.source)}</code>: ${escapeHtml(b.fix)}</li>`).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>DMARC reports for ${escapeHtml(s.domain)}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2rem; color: #111; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: left; }
.pass { fill: #2e7d32; } .fail { fill: #c62828; }
.verdict { font-size: 1.25rem; font-weight: bold; }
</style>
</head>
<body>
<h1>DMARC reports for ${escapeHtml(s.domain)}</h1>
<p>${s.reports} aggregate report(s), ${s.messages} message(s), ${escapeHtml(s.window.from)} to ${escapeHtml(s.window.to)} (${s.days} days, by the reports' own date ranges).${s.unauthenticatedReports > 0 ? ` ${s.unauthenticatedReports} report(s) came in unauthenticated messages.` : ''}</p>
<p class="verdict">${escapeHtml(s.readiness.summary)}</p>
<p>p=quarantine would have acted on ${s.readiness.quarantine.messages} message(s) (${percent(s.readiness.quarantine.share)}); p=reject on ${s.readiness.reject.messages} (${percent(s.readiness.reject.share)}).</p>
${blockers ? `<h2>Fix these first</h2>\n<ul>\n${blockers}\n</ul>` : ''}
<h2>Messages per day</h2>
<p>Green: passed DMARC. Red: failed.</p>
${dailyChartSvg(shown.daily)}
<h2>Senders</h2>
<table>
<thead><tr><th>Source</th><th>Provider</th><th>Messages</th><th>SPF aligned</th><th>DKIM aligned</th><th>DMARC pass</th><th>Class</th><th>Fix</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
${s.spfTighten ? `<h2>SPF tightening</h2>\n<p><code>${escapeHtml(s.spfTighten.record)}</code></p>` : ''}
${s.externalDestination ? `<h2>Authorise this service</h2>\n<p>Publish <code>${escapeHtml(s.externalDestination.name)} TXT "${s.externalDestination.value}"</code> (RFC 7489 §7.1).</p>` : ''}
</body>
</html>
`;
}
