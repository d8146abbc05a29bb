/*
 * DMARC policy record: RFC 7489 §6.3/§6.4 and RFC 9989 (DMARCbis) §4.7/§4.8.
 *
 * Formal definition (RFC 9989 §4.8, ABNF per RFC 5234 and RFC 7405):
 *
 *   dmarc-record  = dmarc-version *(dmarc-sep dmarc-tag) [dmarc-sep]
 *   dmarc-version = "v" equals %s"DMARC1"          ; the value is case-sensitive
 *   dmarc-sep     = *WSP ";" *WSP
 *   equals        = *WSP "=" *WSP
 *   dmarc-tag     = 1*ALPHA equals 1*dmarc-value   ; tag names are case-insensitive literals
 *   dmarc-value   = %x20-3A / %x3C-7E              ; any printing character but ";"
 *
 *   dmarc-request = "none" / "quarantine" / "reject"
 *   dmarc-yorn    = "y" / "n"
 *   dmarc-psd     = "y" / "n" / "u"
 *   dmarc-rors    = "r" / "s"
 *   dmarc-urilist = (dmarc-uri / obs-dmarc-uri) *(*WSP "," *WSP (dmarc-uri / obs-dmarc-uri))
 *   dmarc-uri     = URI                            ; RFC 3986; "," and "!" MUST be percent-encoded
 *   obs-dmarc-uri = dmarc-uri "!" 1*DIGIT [ "k" / "m" / "g" / "t" ]   ; RFC 7489 size limit, obsolete
 *   dmarc-fo      = ("0" / "1") *(":" dmarc-afrf)  ; 9989: "0" and "1" exclusive, d and s at most once
 *                 / dmarc-afrf [":" ("0" / "1")] [":" dmarc-afrf]
 *                 / *(dmarc-afrf ":") ("0" / "1")
 *   dmarc-afrf    = "d" / "s"
 *
 * Tag table (default in brackets; "7489" = defined only by RFC 7489, dropped by RFC 9989 §C.5.2):
 *
 *   tag    value rule                   meaning
 *   v      "DMARC1" (first, exact)      version; otherwise the TXT record is not a DMARC record
 *   p      dmarc-request                policy for the domain itself (RECOMMENDED)
 *   sp     dmarc-request [p]            policy for existing subdomains
 *   np     dmarc-request [sp, then p]   policy for non-existent subdomains (9989; RFC 9091 before)
 *   psd    dmarc-psd [u]                y: a public suffix domain; n: an organizational domain (9989)
 *   t      dmarc-yorn [n]               y: test mode, apply one policy level lower (9989)
 *   adkim  dmarc-rors [r]               DKIM identifier alignment, relaxed or strict
 *   aspf   dmarc-rors [r]               SPF identifier alignment, relaxed or strict
 *   fo     dmarc-fo [0]                 failure report options
 *   rua    dmarc-urilist                aggregate report destinations
 *   ruf    dmarc-urilist                failure report destinations
 *   pct    1*3DIGIT, 0-100 [100]        7489: percentage of failing mail the policy applies to
 *   rf     Keyword *(":" Keyword) [afrf] 7489: failure report format
 *   ri     1*10DIGIT, 32-bit [86400]    7489: aggregate report interval, seconds
 *
 * Unknown tags MUST be ignored; syntax errors after `v` MUST be discarded in favour of the defaults
 * (RFC 9989 §4.8; RFC 7489 §6.3 says SHOULD).
 */

/** A Domain Owner Assessment Policy value (RFC 9989 §4.7 `p`). */
export type DmarcPolicy = 'none' | 'quarantine' | 'reject';

/** Identifier alignment mode: relaxed or strict (RFC 9989 §4.4). */
export type AlignmentMode = 'r' | 's';

/** The `psd` flag (RFC 9989 §4.7): y = public suffix domain, n = organizational domain, u = unknown. */
export type PsdFlag = 'y' | 'n' | 'u';

/** One `fo` option (RFC 9989 §4.7). */
export type FailureReportOption = '0' | '1' | 'd' | 's';

/** The unit letter of an obsolete `!size` suffix: kibi-, mebi-, gibi- or tebibytes (RFC 7489 §6.4). */
export type SizeUnit = 'k' | 'm' | 'g' | 't';

/**
 * How a receiver treats a record that starts with `v=DMARC1` (RFC 9989 §4.10.1, RFC 7489 §6.6.3 step 6):
 * - `valid`: the published `p` (and `sp`/`np`, when present) are valid and apply.
 * - `as-none`: `p` is missing or invalid, or `sp`/`np` is invalid, but at least one `rua` URI is valid:
 *   receivers act as if the record said `p=none`.
 * - `no-dmarc`: the same problem without a valid `rua`: receivers apply no DMARC processing.
 */
export type DmarcRecordOutcome = 'valid' | 'as-none' | 'no-dmarc';

/** The obsolete size limit after a report URI, e.g. `!10m` (RFC 7489 §6.4; ignored by RFC 9989 §4.8). */
export interface ReportSizeLimit {
  /** The digits as published. */
  digits: string;
  unit: SizeUnit | null;
  /** The limit in bytes, or null when it does not fit an unsigned 64-bit integer or a JS safe integer. */
  bytes: number | null;
}

/** One syntactically valid report URI from `rua` or `ruf`. */
export interface ReportUri {
  /** The URI as published, without the size suffix. */
  uri: string;
  /** Lower-case scheme, e.g. `mailto`. */
  scheme: string;
  /** For `mailto:`, the percent-decoded address; otherwise null. */
  address: string | null;
  /** The destination host (the mailto domain or the URI's host), lower case; null when there is none. */
  domain: string | null;
  sizeLimit: ReportSizeLimit | null;
}

/** A tag as published, name lower-cased, value trimmed of surrounding whitespace. */
export interface DmarcTag {
  name: string;
  value: string;
}

/**
 * A parsed DMARC record with effective values: defaults filled in, `sp` from `p`, `np` from `sp` then
 * `p` (RFC 9989 §4.7). For `as-none` all three policies are `none`; for `no-dmarc` they are null.
 */
export interface DmarcRecord {
  /** The record text: the TXT character-strings joined without separator (RFC 9989 §4.5). */
  raw: string;
  outcome: DmarcRecordOutcome;
  /** Effective `p`. */
  policy: DmarcPolicy | null;
  /** Effective `sp`: the policy for existing subdomains. */
  subdomainPolicy: DmarcPolicy | null;
  /** Effective `np`: the policy for non-existent subdomains. */
  nonExistentSubdomainPolicy: DmarcPolicy | null;
  /** The valid values actually published for `p`, `sp` and `np` (null when absent or invalid). */
  published: { p: DmarcPolicy | null; sp: DmarcPolicy | null; np: DmarcPolicy | null };
  adkim: AlignmentMode;
  aspf: AlignmentMode;
  failureOptions: FailureReportOption[];
  psd: PsdFlag;
  /** `t=y`: the owner is testing; receivers apply one level lower (RFC 9989 §4.7 `t`). */
  testing: boolean;
  /** Valid aggregate report URIs (invalid ones are dropped with a warning). */
  rua: ReportUri[];
  /** Valid failure report URIs. */
  ruf: ReportUri[];
  /** Legacy RFC 7489 `pct` (0-100), null when absent or invalid. RFC 9989 dropped it. `pct=0` is 0. */
  pct: number | null;
  /** Legacy RFC 7489 `rf`, null when absent or invalid. */
  rf: string[] | null;
  /** Legacy RFC 7489 `ri` in seconds, null when absent or invalid. */
  ri: number | null;
  /** Every well-formed tag in order, including unknown ones. */
  tags: DmarcTag[];
}

/** Why a report URI was not accepted. */
export type ReportUriProblem =
  | 'empty'
  | 'no-scheme'
  | 'bad-character'
  | 'bad-percent-encoding'
  | 'bad-size-suffix'
  | 'bad-mailto-address';

/**
 * Something a parser noticed in a record that starts with `v=DMARC1`. A closed union of values; the
 * findings module turns them into plain-English findings.
 */
export type DmarcWarning =
  /** The tag appears more than once; every occurrence is discarded (RFC 6376 §3.2, via RFC 9989 §4.7). */
  | { code: 'duplicate-tag'; tag: string }
  /** A known tag with a value outside its grammar; the default (if any) is used. */
  | { code: 'invalid-value'; tag: string; value: string; fallback: string | null }
  /** A piece between separators that is not `name=value` with an alphabetic name. */
  | { code: 'malformed-tag'; text: string }
  /** A well-formed tag that DMARC does not define; ignored (RFC 9989 §4.7). */
  | { code: 'unknown-tag'; tag: string }
  /** A `rua`/`ruf` entry that is not a valid DMARC URI; dropped. */
  | { code: 'invalid-uri'; tag: 'rua' | 'ruf'; uri: string; problem: ReportUriProblem }
  /** A valid URI whose scheme receivers need not support (only `mailto:` is mandatory). */
  | { code: 'unsupported-scheme'; tag: 'rua' | 'ruf'; uri: string; scheme: string }
  /** An obsolete `!size` suffix (RFC 9989 §4.8 `obs-dmarc-report-size`). */
  | { code: 'size-suffix'; tag: 'rua' | 'ruf'; uri: string; suffix: string; outOfRange: boolean }
  /** `pct`, `rf` or `ri`: defined by RFC 7489, dropped by RFC 9989 (§C.5.2). */
  | { code: 'legacy-tag'; tag: 'pct' | 'rf' | 'ri'; value: string }
  /** RFC 7489's ABNF wants `p` right after `v`; strict RFC 7489 parsers reject other orders. */
  | { code: 'policy-not-second' }
  /** `p` missing or invalid, or `sp`/`np` invalid: the record is as-none or no-dmarc. */
  | { code: 'unusable-policy'; problems: PolicyProblem[]; outcome: 'as-none' | 'no-dmarc' }
  /** `fo` given without `ruf`: it has no effect (RFC 9989 §4.7 `fo`). */
  | { code: 'fo-without-ruf' };

/** One reason a record's policy cannot be used as published. */
export type PolicyProblem =
  | { tag: 'p'; problem: 'missing' }
  | { tag: 'p' | 'sp' | 'np'; problem: 'invalid'; value: string }
  | { tag: 'p' | 'sp' | 'np'; problem: 'duplicated' };

/** Why a TXT record is not a DMARC record at all (it is then ignored like any other TXT). */
export type NotDmarcReason = 'empty' | 'no-version' | 'version-not-first' | 'bad-version' | 'no-separator';

/** The result of parsing one TXT record: a closed union, never an exception. */
export type DmarcParseResult =
  | { kind: 'not-dmarc'; reason: NotDmarcReason; raw: string }
  | { kind: 'record'; record: DmarcRecord; warnings: DmarcWarning[] };
