/**
 * BIMI (draft-brand-indicators-for-message-identification-14): the assertion record, the logo
 * (SVG Tiny Portable/Secure, draft-svg-tiny-ps-abrotman) and the mark certificate (VMC or CMC,
 * draft-fetch-validation-vmc-wchuang, RFC 9399 logotype). A section of its own beside transport:
 * it never changes the spoof verdict.
 *
 * The record (draft §4.3), TXT at `<selector>._bimi.<domain>`:
 *
 *   record   = version *(";" *WSP tag) [";"]
 *   version  = %s"v=BIMI1"                     ; first, exact case
 *   tag      = l / a / avp / lps / other       ; unknown tags ignored
 *   l        = "l=" [ https-URI ]              ; empty: declined
 *   a        = "a=" [ https-URI ]              ; the evidence document (PEM)
 *   avp      = "avp=" ("brand" / "personal")
 *   lps      = "lps=" [ prefix *("," prefix) ] ; prefix = 1*63(ALPHA / DIGIT / "-")
 */
import type { Finding, SectionEnvelope } from '../findings.js';
import type { HttpsFetchError } from '../net/https-fetch.js';

/**
 * The answer, most useful first:
 * - `ready-vmc`, `ready-cmc`: eligible record, valid logo and a trusted mark certificate of that kind.
 * - `ready-self-asserted`: eligible record and valid logo, no certificate (`a=` empty).
 * - `not-ready`: something blocks display (DMARC, the record, the logo or the certificate).
 * - `declined`: `v=BIMI1; l=; a=;` (an explicit opt-out).
 * - `not-published`: no BIMI record where receivers look.
 * - `unknown`: a lookup failed or a fetch got no usable answer; never read as "not published".
 */
export type BimiGrade = 'ready-vmc' | 'ready-cmc' | 'ready-self-asserted' | 'not-ready' | 'declined' | 'not-published' | 'unknown';

/** The parsed tags of a BIMI record (draft §4.3). */
export interface BimiTags {
  /** `l=`: the logo URL; '' when declined. */
  l: string;
  /** `a=`: the evidence document URL; '' or null when absent. */
  a: string | null;
  avp: 'brand' | 'personal' | null;
  /** `lps=`: local-part prefixes; null when absent. */
  lps: string[] | null;
  /** Names of tags the record carries that BIMI does not define (ignored, draft §4.3). */
  unknown: string[];
}

/** A record parsed, or why it is not a usable BIMI record. */
export type BimiRecordParse = { ok: true; tags: BimiTags; warnings: string[] } | { ok: false; problem: string };

/** One TXT query of the discovery. */
export interface BimiQuery {
  name: string;
  outcome: 'record' | 'none' | 'multiple' | 'error';
  /** The DNS failure, for `error`. */
  error?: string;
}

/** A DMARC record as BIMI judges it (draft §7.1: the author and organizational domains). */
export interface BimiDmarcRecord {
  /** Where it was read, e.g. `_dmarc.example.com`. */
  name: string;
  /** The policy that applies for BIMI: `p` for the author domain's own record, the effective `sp` for a subdomain. */
  policy: string | null;
  p: string | null;
  sp: string | null;
  pct: number | null;
  t: boolean;
}

/** Why one DMARC record keeps BIMI from being processed. */
export interface DmarcBlock {
  /** The record's name, e.g. `_dmarc.example.com`. */
  record: string;
  reason: 'no-record' | 'p-none' | 'sp-none' | 'quarantine-pct' | 't-y' | 'multiple';
  detail: string;
}

/** The DMARC prerequisite (draft §7.1 steps 7-9). */
export interface BimiDmarc {
  /** null when the DMARC lookup failed (unknown, never "not eligible"). */
  eligible: boolean | null;
  /** The records read: the one that applies and the organizational domain's own. */
  records: BimiDmarcRecord[];
  blockedBy: DmarcBlock[];
}

/** One SVG Tiny PS rule broken, with the 1-based line of the served file. */
export interface SvgViolation {
  /** A stable rule id (see `SVG_RULES`). */
  rule: string;
  line: number;
  detail: string;
}

/** What the SVG validator says about one file. */
export interface SvgReport {
  /** Rules broken: any one keeps the logo from display. */
  violations: SvgViolation[];
  /** Recommendations not met (square viewBox, `<desc>`, a placeholder title). */
  warnings: SvgViolation[];
  title: string | null;
  viewBox: [number, number, number, number] | null;
}

/** Where a fetch ended when it gave nothing usable. */
export interface BimiFetchFailure {
  error: HttpsFetchError | 'bad-url' | 'too-many-redirects';
  httpStatus: number | null;
  detail: string;
}

/** `logo` of the result. */
export interface BimiLogo {
  url: string;
  /** The fetch failure, or null when the file arrived. */
  fetch: BimiFetchFailure | null;
  /** Bytes as served (before any gunzip of an SVGZ); null when not fetched. */
  bytes: number | null;
  compressed: boolean;
  sha256: string | null;
  title: string | null;
  viewBox: [number, number, number, number] | null;
  violations: SvgViolation[];
  warnings: SvgViolation[];
  /**
   * The logo as a `data:image/svg+xml;base64,` URI, only when it passed every rule (null otherwise):
   * for showing it as an image (`<img src>`), never inline in a page.
   */
  dataUri: string | null;
}

/** The chain verdict of a mark certificate. */
export interface BimiChain {
  /** Every link verified by signature up to a shipped or injected root, and each certificate valid now. */
  trusted: boolean;
  /** The root it reached (its subject), or null. */
  anchor: string | null;
  problems: string[];
}

/** `certificate` of the result. */
export interface BimiCertificate {
  url: string;
  fetch: BimiFetchFailure | null;
  /** From the leaf's mark type: Registered or Government Mark → VMC; Prior Use or Modified Registered Mark → CMC. */
  kind: 'VMC' | 'CMC' | null;
  markType: string | null;
  subject: string | null;
  issuer: string | null;
  serial: string | null;
  notBefore: string | null;
  notAfter: string | null;
  /** Whole days from now to notAfter (negative once expired). */
  daysLeft: number | null;
  chain: BimiChain;
  /** The leaf carries the BIMI extended key usage 1.3.6.1.5.5.7.3.31. */
  bimiEku: boolean;
  san: string[];
  /** A SAN dNSName is the domain, the organizational domain, or `<selector>._bimi.<domain>`. */
  sanMatch: boolean;
  /** The RFC 9399 logotype: `hashOk` only when the served logo's hash, by the named algorithm, equals. */
  logotype: { mediaType: string; hashAlg: string; hashOk: boolean } | null;
  /** Certificate Transparency SCTs: present or not, never verified in this version. */
  sct: { present: boolean; count: number };
  /** CRL distribution points: present or not, never fetched in this version. */
  crl: { present: boolean; urls: string[] };
}

/** A provider's answer: eligible (never "will show": reputation gates display). */
export interface ProviderEligibility {
  eligible: boolean;
  why: string;
}

/** `bimi` of a result: the JSON shape of issue 34. */
export interface BimiResult {
  grade: BimiGrade;
  selector: string;
  /** The record used; null when none applies. */
  record: { name: string; text: string; at: 'author-domain' | 'organizational-domain' } | null;
  tags: BimiTags | null;
  queries: BimiQuery[];
  dmarc: BimiDmarc;
  logo: BimiLogo | null;
  certificate: BimiCertificate | null;
  providers: { gmail: ProviderEligibility; apple: ProviderEligibility; yahoo: ProviderEligibility };
  findings: Finding[];
  /** What to do, in order: the first is the one to do now. */
  nextSteps: string[];
}

/** `bimi` of a spoof check result: the BIMI check's result with the section envelope (`status` is the grade; sections.ts adds it). */
export interface BimiSection extends BimiResult, SectionEnvelope<BimiGrade> {}
