/**
 * The identity of a report, for counting a report received twice once (RFC 9990 §"Duplicate
 * Reports": a resent report keeps its file name and Report-ID). It is taken from the report's own
 * fields, never from its bytes, so a resend with different whitespace or compression is the same
 * report: the reporter (`org_name` and contact address, or the authenticated reporter domain when the
 * caller has one), the report id, the policy domain and the date range. The report id alone is not
 * unique: reporters reuse ids across days and share id patterns (liuch/dmarc-srg#81,
 * techsneeze/dmarcts-report-parser#112).
 */
import { createHash } from 'node:crypto';
import type { AggregateReport, TlsReport } from './types.js';

/** Options of `reportIdentity`. */
export interface ReportIdentityOptions {
  /**
   * The authenticated domain of the report message (DKIM or SPF of the mail it came in), used as the
   * reporter instead of the report's own unauthenticated `org_name` and contact.
   */
  reporter?: string;
}

/** The dedupe key of a report: 64 hex digits (SHA-256 of its identifying fields). */
export function reportIdentity(report: AggregateReport | TlsReport, options: ReportIdentityOptions = {}): string {
  return createHash('sha256').update(identityText(report, options)).digest('hex');
}

/** The identifying fields of a report as one string: the key before hashing (for in-memory de-duplication). */
export function identityText(report: AggregateReport | TlsReport, options: ReportIdentityOptions = {}): string {
  const parts =
    report.kind === 'aggregate'
      ? [
          'aggregate',
          options.reporter?.toLowerCase() ?? `${report.reporter.orgName.trim().toLowerCase()}|${(report.reporter.email ?? '').trim().toLowerCase()}`,
          report.reportId,
          report.policyPublished.domain,
          String(report.dateRange.begin),
          String(report.dateRange.end),
        ]
      : [
          'tls',
          options.reporter?.toLowerCase() ?? `${report.organizationName.trim().toLowerCase()}|${(report.contactInfo ?? '').trim().toLowerCase()}`,
          report.reportId,
          String(report.dateRange.start),
          String(report.dateRange.end),
        ];
  return JSON.stringify(parts);
}
