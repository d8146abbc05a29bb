/**
 * Failure reports (RFC 6591 authentication-failure reports in ARF, RFC 5965; requested by a DMARC
 * record's `ruf`, RFC 9990/9991): what is kept of each, per organisation. Never the reported
 * message's body: its header fields only (bounded), the feedback report's fields, and the
 * authentication results. Addresses' local parts are kept hashed unless the organisation turned
 * that off (src/ingest/failure-reports.ts). One interface, memory and SQL implementations (table
 * `failure_reports` of migration `0011_alerts`), and the organisation's setting (`alert_settings`).
 */
import type { Page, PageRequest, Timestamp } from './page-types.js';

/** One header field (name as written, value unfolded and cut to a bound). */
export interface HeaderField {
  name: string;
  value: string;
}

/** A failure report as stored. */
export interface FailureReport {
  id: string;
  organizationId: string;
  /** The domain whose authentication failed (`Reported-Domain`, else the reported From's domain), lower case. */
  domain: string;
  /** SHA-256 (hex) of the report's fields and headers as received: one copy per organisation. */
  identity: string;
  /** When the service received it. */
  receivedAt: Timestamp;
  /** `Arrival-Date` of the reported message (as the reporter wrote it), or null. */
  arrivalDate: string | null;
  /** `Source-IP`: the address that sent the reported message, or null. */
  sourceIp: string | null;
  /** `Auth-Failure` values (dmarc, spf, dkim, bodyhash, revoked, signature, adsp), lower case. */
  authFailure: string[];
  /** `Authentication-Results` of the reporter (RFC 8601), as written. */
  authenticationResults: string[];
  /** `Identity-Alignment` (RFC 7489 §7.3): which identifiers aligned, e.g. `dkim` or `none`. */
  identityAlignment: string | null;
  /** `Delivery-Result`: delivered, spam, policy, reject, other. */
  deliveryResult: string | null;
  /** The reporter (`User-Agent` of the feedback report), and the report message's From. */
  reporter: { userAgent: string | null; from: string | null; authenticated: boolean };
  /** Every other field of the feedback report (DKIM-Domain, DKIM-Selector, SPF-DNS, Original-Mail-From…). */
  feedback: HeaderField[];
  /** The reported message's header fields (never its body). */
  headers: HeaderField[];
  /** Whether the local parts of addresses were hashed when it was stored. */
  localPartsHashed: boolean;
}

/** An organisation's settings of failure reports. */
export interface FailureReportSettings {
  /** Keep local parts of addresses hashed (the default). */
  hashLocalParts: boolean;
}

/** The default settings. */
export const DEFAULT_FAILURE_REPORT_SETTINGS: FailureReportSettings = Object.freeze({ hashLocalParts: true }) as FailureReportSettings;

/** Storage of failure reports. */
export interface FailureReportStore {
  /** Stores a report; `duplicate` when the organisation already has one of the same identity. */
  add(report: FailureReport): Promise<'stored' | 'duplicate'>;
  /** The organisation's reports of a domain received at or after `since`, newest first (at most `limit`). */
  forDomain(organizationId: string, domain: string, since: Timestamp, limit: number): Promise<FailureReport[]>;
  /** The organisation's reports, newest first. */
  list(organizationId: string, page: PageRequest): Promise<Page<FailureReport>>;
  get(organizationId: string, id: string): Promise<FailureReport | undefined>;
  settings(organizationId: string): Promise<FailureReportSettings>;
  setSettings(organizationId: string, settings: FailureReportSettings): Promise<void>;
  /** The organisation's salt for hashed local parts: made once (`create`), then always the same, whoever asks first. */
  salt(organizationId: string, create: () => string): Promise<string>;
}
