/**
 * The output lines of `scan` (JSON lines and CSV), shared by the local scan and the queue-backed one
 * (`--redis`, src/cli/distributed-scan.ts).
 */
import type { SpoofCheckResult } from '@spoof-checker/engine';
import type { ErrorLine } from './check.js';

/** The CSV columns, in order: the spec's summary fields of each result. */
export const CSV_COLUMNS = [
  'input',
  'domain',
  'verdict',
  'spoofable',
  'inbox_outcome',
  'dmarc_policy',
  'dmarc_subdomain_policy',
  'dmarc_percentage',
  'spf_qualifier',
  'spf_lookup_count',
  'dkim_selector',
  'dkim_key_length',
  'mx_provider',
  'spf_shared_infrastructure',
  'dkim_published',
  'mx_published',
  'reasons',
  'error_code',
  'error_message',
] as const;

/** One JSON line: the input, then the result (without `details` unless asked) or the error. */
export function jsonLine(input: string, result: SpoofCheckResult | ErrorLine, details: boolean): string {
  if ('error' in result) return `${JSON.stringify(result)}\n`;
  const { details: behind, ...summary } = result;
  return `${JSON.stringify(details ? { input, ...summary, details: behind } : { input, ...summary })}\n`;
}

/** A summary's `published` as a CSV cell: `true`, `false`, or `error` when its lookup failed (never `false` then). */
function publishedCell(summary: { published: boolean | null; status: string }): string {
  return summary.published === null || summary.status === 'error' ? 'error' : String(summary.published);
}

/** One CSV line (RFC 4180 quoting). */
export function csvLine(input: string, result: SpoofCheckResult | ErrorLine): string {
  const cells: (string | number | boolean | null)[] =
    'error' in result
      ? [input, '', '', '', '', '', '', '', '', '', '', '', '', '', '', '', '', result.error.code, result.error.message]
      : [
          input,
          result.domain,
          result.verdict,
          result.spoofable,
          result.inboxOutcome,
          result.dmarc.policy,
          result.dmarc.subdomainPolicy,
          result.dmarc.percentage,
          result.spf.qualifier,
          result.spf.lookupCount,
          result.dkim.selector,
          result.dkim.keyLength,
          result.mx.provider,
          sharedInfrastructureCell(result),
          // true, false, or error: a failed lookup is never written as false.
          publishedCell(result.dkim),
          publishedCell(result.mx),
          result.reasons.map((r) => r.id).join(' '),
          '',
          '',
        ];
  return `${cells.map(csvCell).join(',')}\n`;
}

/**
 * The `spf_shared_infrastructure` cell: the worst severity, then each provider service whose
 * addresses pass, with IPv4+IPv6 counts (`critical aws/EC2=65536+0 github/actions=256+0`); empty
 * when nothing passes there (or the result came without details).
 */
export function sharedInfrastructureCell(result: SpoofCheckResult): string {
  const report = (result.details as Partial<SpoofCheckResult['details']> | undefined)?.spf?.sharedInfrastructure;
  if (!report || report.exposures.length === 0) return '';
  const totals = new Map<string, [number, number]>();
  for (const e of report.exposures) {
    const key = `${e.provider}/${e.service}`;
    const sum = totals.get(key) ?? [0, 0];
    totals.set(key, [sum[0] + e.ipv4Addresses, sum[1] + e.ipv6Addresses]);
  }
  return [report.severity, ...[...totals].map(([key, [v4, v6]]) => `${key}=${v4}+${v6 > Number.MAX_SAFE_INTEGER ? v6.toExponential(3) : v6}`)].join(' ');
}

function csvCell(value: string | number | boolean | null): string {
  const text = value === null ? '' : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
