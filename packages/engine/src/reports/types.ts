/**
 * DMARC aggregate reports (RFC 7489 Appendix C, RFC 9990) and SMTP TLS reports (RFC 8460 §4): the
 * types of a report file unpacked, a report parsed, and what the analysis makes of them.
 *
 * Reports are attacker-controlled input (anyone can mail the `rua` address): every outcome here is a
 * closed union of values with a stable reason, never an exception.
 */

/** The two report formats: DMARC aggregate (XML) and SMTP TLS reporting (JSON). */
export type ReportKind = 'aggregate' | 'tls';

/** One report document found in a file: the XML or JSON bytes, decompressed. */
export interface ReportDocument {
  /** The file or archive entry name it came from (a label only: never used as a path). */
  name: string;
  kind: ReportKind;
  bytes: Uint8Array;
}

/**
 * Why a file gave no report document:
 * - `empty`: no bytes;
 * - `too-large`: the file, or its decompressed content, is over the size cap;
 * - `ratio-exceeded`: the decompressed content grew past the compression-ratio cap (a decompression bomb);
 * - `unknown-format`: neither gzip, zip, XML nor JSON by its first bytes;
 * - `corrupt`: a gzip or zip that does not decompress (bad header, checksum, declared size);
 * - `truncated`: the compressed data ends before its end;
 * - `encrypted`: a zip entry is encrypted;
 * - `unsupported`: a zip feature this reader refuses (zip64, a compression method other than stored and deflate, a split archive);
 * - `too-many-entries`: a zip with more entries than the cap;
 * - `nested-archive`: an archive inside an archive (one level only);
 * - `no-report`: an archive without any XML or JSON entry.
 */
export type UnpackFailureReason =
  | 'empty'
  | 'too-large'
  | 'ratio-exceeded'
  | 'unknown-format'
  | 'corrupt'
  | 'truncated'
  | 'encrypted'
  | 'unsupported'
  | 'too-many-entries'
  | 'nested-archive'
  | 'no-report';

/** The outcome of unpacking a file: its report documents, or why there are none (with a sentence). */
export type UnpackOutcome =
  | {
      ok: true;
      documents: ReportDocument[];
      /** Archive entries that were not reports (a readme, a directory), with why they were left out. */
      skipped: { name: string; reason: string }[];
      /** The container found by its first bytes. */
      container: 'gzip' | 'zip' | 'xml' | 'json';
    }
  | { ok: false; reason: UnpackFailureReason; detail: string };

/** The caps of `unpackReportFile`; the defaults are the named constants in unpack.ts. */
export interface UnpackCaps {
  /** Bytes of the file itself. */
  maxInputBytes: number;
  /** Decompressed bytes of one document. */
  maxUncompressedBytes: number;
  /** Decompressed bytes of all the documents of one archive together. */
  maxTotalUncompressedBytes: number;
  /** Decompressed bytes per compressed byte, enforced once the output passes `ratioFloorBytes`. */
  maxCompressionRatio: number;
  /** Output below this size is never refused for its ratio (small, repetitive reports compress well). */
  ratioFloorBytes: number;
  /** Entries in a zip's central directory. */
  maxZipEntries: number;
}

/**
 * Why a report was refused. Stable words, for storage and for counting:
 * - `doctype`: the XML has a DOCTYPE (never processed: no DTD, no external entity, no entity expansion);
 * - `entity`: the XML uses an entity other than the five predefined ones and character references;
 * - `malformed`: not well-formed XML or JSON (a truncated file lands here);
 * - `too-deep`, `too-many-nodes`: the XML exceeds the depth or node cap;
 * - `not-a-report`: well-formed, but not a report of this kind (another root element, not an object);
 * - `missing-field`: a field the format requires is absent or empty;
 * - `invalid-field`: a field has a value the format does not allow (a date range that ends before it begins);
 * - `too-many-records`: more records (aggregate) or policies and failure details (TLS) than the cap;
 * - `too-large`: the document is over the size cap.
 */
export type ReportRejection = 'doctype' | 'entity' | 'malformed' | 'too-deep' | 'too-many-nodes' | 'not-a-report' | 'missing-field' | 'invalid-field' | 'too-many-records' | 'too-large';

/**
 * A report parsed whole, or refused whole: a refused report gives no rows at all. `warnings` lists
 * every normalisation applied to an accepted one (defaults, lower-casing of words, a record dropped).
 */
export type ParseOutcome<T> = { ok: true; report: T; warnings: string[] } | { ok: false; reason: ReportRejection; detail: string };

/** The aggregate schema a report follows: RFC 7489 Appendix C, or RFC 9990 (namespace or 9990-only fields). */
export type AggregateSchema = '7489' | '9990';

/** `policy_published`: the DMARC record the receiver found (RFC 7489 Appendix C; RFC 9990 §3.1.1). */
export interface PolicyPublished {
  /** The DMARC Policy Domain, lower case. */
  domain: string;
  /** `r` or `s`; `r` when absent (RFC 7489 §6.3 default). */
  adkim: string;
  aspf: string;
  /** `none`, `quarantine` or `reject` as the reporter wrote it (lower case); null when absent. */
  p: string | null;
  sp: string | null;
  /** RFC 9990 only: the policy for non-existent subdomains. */
  np: string | null;
  /** RFC 7489 only (removed by RFC 9989). */
  pct: number | null;
  fo: string | null;
  /** RFC 9990 only: `y` when the record had `t=y`. */
  testing: string | null;
  /** RFC 9990 only: `psl` or `treewalk`. */
  discoveryMethod: string | null;
}

/** One DKIM result of `auth_results` (RFC 7489 Appendix C `DKIMAuthResultType`). */
export interface DkimAuthResult {
  /** The `d=` of the signature, lower case. */
  domain: string;
  /** The `s=`; null when the reporter left it out or empty. */
  selector: string | null;
  /** `none`, `pass`, `fail`, `policy`, `neutral`, `temperror`, `permerror` (RFC 8601 §2.7.1), lower case; kept when unknown. */
  result: string;
  humanResult: string | null;
}

/** One SPF result of `auth_results` (RFC 7489 Appendix C `SPFAuthResultType`). */
export interface SpfAuthResult {
  /** The domain checked (MAIL FROM or HELO), lower case; null when the reporter left it out. */
  domain: string | null;
  /** `mfrom` or `helo`; `mfrom` when absent (RFC 9990 knows only `mfrom`). */
  scope: string;
  /** `none`, `neutral`, `pass`, `fail`, `softfail`, `temperror`, `permerror` (RFC 8601 §2.7.2), lower case. */
  result: string;
  humanResult: string | null;
}

/** A `policy_evaluated/reason`: why the receiver applied another policy than the published one. */
export interface OverrideReason {
  /** `forwarded`, `sampled_out`, `trusted_forwarder`, `mailing_list`, `local_policy`, `other`, `policy_test_mode`, lower case. */
  type: string;
  comment: string | null;
}

/** One `record`: messages from one source with one set of results. */
export interface AggregateRecord {
  /** The sending address, in canonical text (IPv6 compressed and lower case, RFC 5952). */
  sourceIp: string;
  /** Messages this row stands for. */
  count: number;
  /** What the receiver did: `none`, `quarantine`, `reject` (and `pass` in RFC 9990). */
  disposition: string;
  /** `policy_evaluated/dkim`: the aligned DKIM result, `pass` or `fail`. */
  dkimResult: string;
  /** `policy_evaluated/spf`: the aligned SPF result, `pass` or `fail`. */
  spfResult: string;
  /** RFC5322.From domain, lower case. */
  headerFrom: string;
  envelopeFrom: string | null;
  envelopeTo: string | null;
  auth: { dkim: DkimAuthResult[]; spf: SpfAuthResult[] };
  reasons: OverrideReason[];
}

/** A DMARC aggregate report, normalised (both schemas to one shape). */
export interface AggregateReport {
  kind: 'aggregate';
  schema: AggregateSchema;
  /** The root element's namespace, verbatim (null when none). */
  namespace: string | null;
  /** `version` as written, or null. */
  version: string | null;
  reporter: {
    /** `org_name` as written: not authenticated, never an identity on its own (RFC 9990 "False Information"). */
    orgName: string;
    email: string | null;
    extraContactInfo: string | null;
    /** RFC 9990 `generator`. */
    generator: string | null;
  };
  reportId: string;
  /** The reporting period, in epoch seconds (UTC). */
  dateRange: { begin: number; end: number };
  /** `report_metadata/error`: problems the reporter found with the policy record. */
  errors: string[];
  policyPublished: PolicyPublished;
  records: AggregateRecord[];
}

/** A TLS-RPT policy's type (RFC 8460 §4.3). Unknown words are kept as written. */
export type TlsPolicyType = 'sts' | 'tlsa' | 'no-policy-found' | (string & {});

/** One `failure-details` entry (RFC 8460 §4.3). */
export interface TlsFailureDetail {
  /** `starttls-not-supported`, `certificate-expired`, `validation-failure`, `sts-policy-fetch-error`… (RFC 8460 §4.3, IANA registry). */
  resultType: string;
  sendingMtaIp: string | null;
  receivingIp: string | null;
  receivingMxHostname: string | null;
  receivingMxHelo: string | null;
  failedSessionCount: number;
  additionalInformation: string | null;
  failureReasonCode: string | null;
}

/** One `policies[]` entry of a TLS report. */
export interface TlsPolicyResult {
  policy: {
    type: TlsPolicyType;
    /** The policy as the sender saw it: the MTA-STS policy lines or the TLSA records. */
    strings: string[];
    /** Lower case. */
    domain: string;
    /** Lower case; from `mx-host` (a string or a list) or `mx-host-pattern`. */
    mxHosts: string[];
  };
  summary: { successful: number; failed: number };
  failureDetails: TlsFailureDetail[];
}

/** An SMTP TLS report (RFC 8460 §4.4), normalised. */
export interface TlsReport {
  kind: 'tls';
  organizationName: string;
  /** The reporting period, in epoch seconds (UTC); a date-time without a zone is read as UTC. */
  dateRange: { start: number; end: number };
  contactInfo: string | null;
  reportId: string;
  policies: TlsPolicyResult[];
}
