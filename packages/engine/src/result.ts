import type { DkimKey, DkimProbe } from './dkim/index.js';
import type { DmarcDiscovery, EffectivePolicy, ExistenceQuery, ReportDestinationCheck } from './dmarc/index.js';
import type { CheckStats } from './dns/limits.js';
import type { CheckSource } from './dns/types.js';
import type { FailedQuery } from './errors.js';
import type { Finding, SectionEnvelope } from './findings.js';
import type { MxAnalysis } from './mx/index.js';
import type { SharedInfrastructureReport } from './ranges/index.js';
import type { SpfAnalysis } from './spf/index.js';
import type { TransportResult, TransportVerdict } from './transport/types.js';
import type { DnssecResult } from './dnssec/check.js';
import type { BimiGrade, BimiResult } from './bimi/types.js';
import type { Decision, InboxOutcome, Verdict } from './verdict/index.js';

/**
 * The shape every protocol analysis shares (SPF, DMARC discovery, DKIM, MX): a closed union of
 * statuses, its findings, and the DNS query that failed when the status says one did, always as the
 * one `FailedQuery` type. The facts of each protocol sit beside these fields.
 */
export interface ProtocolAnalysis<Status extends string = string> {
  status: Status;
  findings: Finding[];
  failedQuery?: FailedQuery | undefined;
}

/**
 * Whether a summary's `published` is settled: 'ok' (every lookup it rests on answered) or 'error'
 * (one failed, so `published` is null: unknown, never false).
 */
export type LookupStatus = 'ok' | 'error';

/** `verdict` of the Spoof check result, and where a forged message most likely lands (defined with the verdict). */
export type { InboxOutcome, Verdict } from './verdict/index.js';

/**
 * The spec's "Spoof check result" (`docs/spec/email-service-api.md`), every documented field
 * with its type, plus `details`: the facts behind the answer. Fields the spec types as string are
 * null where there is nothing to report (the reference service does the same).
 */
/*
 * The optional sections (`dnssec`, `transport`, `bimi`: sections.ts) each carry the one envelope
 * (`SectionEnvelope`: `status`, `findings`, `nextSteps`) beside their own fields. Every check writes
 * it whole; it is typed optional here because results stored before the envelope existed lack it.
 */
export interface SpoofCheckResult {
  domain: string;
  resolvedAt: string;
  /**
   * Added beyond the spec: where the answers came from. `dns` for the DNS itself; `fixture-zones`
   * when the check read zone files (`--zones`, the demo, a `ZoneResolver`): stand-in records, so the
   * verdict says nothing about the live domain, even for a real name such as google.com.
   */
  source: CheckSource;
  responseTimeMs: number;
  spoofable: boolean;
  verdict: Verdict;
  headline: string;
  summary: string;
  inboxOutcome: InboxOutcome;
  dmarc: {
    published: boolean;
    policy: string | null;
    subdomainPolicy: string | null;
    percentage: number | null;
    rawRecord: string | null;
  };
  spf: {
    published: boolean;
    qualifier: string | null;
    lookupCount: number;
    rawRecord: string | null;
  };
  /**
   * `published` is null, with `status` 'error', when a lookup failed and no usable key was found
   * elsewhere: a failed lookup is "could not be checked", never "not published".
   */
  dkim: {
    published: boolean | null;
    status: LookupStatus;
    selector: string | null;
    keyLength: number | null;
  };
  /** `published` is null, with `status` 'error', when the MX lookup failed. */
  mx: {
    published: boolean | null;
    status: LookupStatus;
    provider: string | null;
  };
  reasons: Finding[];
  nextStep: { title: string; body: string; href: string };
  subdomainNote: string | null;
  /**
   * DNSSEC of the records the verdict rests on (SPF TXT, `_dmarc` TXT, MX), the weakest of them;
   * `not-checked` with the reason when it was not validated. The verdict never depends on it.
   * Every check sets it; results stored before it existed lack it.
   */
  dnssec?: DnssecResult;
  /** Added beyond the spec: what lies behind the fields above. */
  details: SpoofCheckDetails;
  /**
   * Mail sent TO the domain (MTA-STS, TLS-RPT, STARTTLS of every MX), only when the check was asked
   * for it (`CheckOptions.transport`). Its verdict is separate: the spoof verdict never depends on it.
   */
  transport?: TransportResult & Partial<SectionEnvelope<TransportVerdict>>;
  /**
   * BIMI (the brand logo receivers show), only when the check was asked for it (`CheckOptions.bimi`).
   * Graded on its own: the spoof verdict never depends on it.
   */
  bimi?: BimiResult & Partial<SectionEnvelope<BimiGrade>>;
}

/**
 * `details` of a result: the facts behind the answer, beyond the spec. Each field's type is the
 * analyzer's own, so this stays in step with the engine; `schema/spoof-check-result.schema.json`
 * describes the same shape for other languages (packages/engine/test/schema.test.ts keeps the two together).
 */
export type SpoofCheckDetails = {
  /** The input as given (a domain, URL or address). */
  input: string;
  /** The name checked as people read it (Unicode for an IDN); `domain` is its A-label form. */
  displayDomain: string;
  /** The id of the verdict rule that decided (see `VERDICT_RULES`). */
  rule: Decision['rule'];
  dmarc: {
    status: DmarcDiscovery['status'];
    /** The name the record was read from, e.g. `_dmarc.example.com`. */
    foundAt: DmarcDiscovery['foundAt'];
    /** The domain whose record applies. */
    policyDomain: DmarcDiscovery['policyDomain'];
    /** RFC 9989 §4.10.2: from the DNS tree walk. */
    organizationalDomain: DmarcDiscovery['organizationalDomain'];
    /** RFC 7489 §3.2: from the public suffix list. */
    pslOrganizationalDomain: DmarcDiscovery['pslOrganizationalDomain'];
    /** The policy receivers apply to forged mail from this exact name, after `t=y`. */
    effectivePolicy: Decision['effectivePolicy'];
    /** The tag that policy was read from (`p`, `sp` or `np`). */
    appliedTag: EffectivePolicy['source'];
    /** Whether the name exists (it decides between `sp` and `np`); null when no record applies. */
    nameExists: EffectivePolicy['nameExists'] | null;
    nonExistentSubdomainPolicy: NonNullable<DmarcDiscovery['record']>['nonExistentSubdomainPolicy'] | null;
    testing: boolean;
    pct: number | null;
    /** Aggregate report URIs. */
    rua: string[];
    /** Each external report destination and whether it authorised the reports (RFC 7489 §7.1). */
    reportDestinations: ReportDestinationCheck['destinations'];
    /** Every `_dmarc` TXT name queried, in order. */
    queries: DmarcDiscovery['queries'];
  };
  spf: {
    status: SpfAnalysis['status'];
    records: SpfAnalysis['records'];
    terminalAll: SpfAnalysis['terminalAll'];
    lookupCount: SpfAnalysis['lookupCount'];
    lookupCountIsMinimum: SpfAnalysis['lookupCountIsMinimum'];
    voidLookups: SpfAnalysis['voidLookups'];
    sizeOctets: SpfAnalysis['sizeOctets'];
    errors: SpfAnalysis['errors'];
    /** The lookup tree: every term, with includes and redirects expanded. */
    tree: SpfAnalysis['tree'];
    /** Who passes SPF: shares of the address space, whether anyone can, what is unknown. */
    passSet: SpfAnalysis['passSet'];
    /** The organizational domain's SPF, when the name checked is below it (relaxed alignment). */
    organizational: {
      domain: SpfAnalysis['domain'];
      status: SpfAnalysis['status'];
      record: SpfAnalysis['record'];
      lookupCount: SpfAnalysis['lookupCount'];
      passSet: SpfAnalysis['passSet'];
    } | null;
    /**
     * What of the pass set lies in shared infrastructure (cloud compute, CI runners, CDN edges), per
     * provider service and term, with the provider data's date; null when nothing passes (or anyone
     * does, or the classification is off).
     */
    sharedInfrastructure: SharedInfrastructureReport | null;
  };
  /** The registrable domain (public suffix list), which must exist for a verdict (RFC 8020). */
  registrableDomain: { name: string; exists: true; queries: ExistenceQuery[] };
  dkim: {
    status: DkimProbe['status'];
    /** How many selectors were queried. */
    probed: DkimProbe['probed'];
    selectorsProbed: DkimProbe['selectorsProbed'];
    /** Every key record found, in probe order. */
    found: {
      selector: DkimKey['selector'];
      name: DkimKey['name'];
      outcome: DkimKey['outcome']['status'];
      keyType: DkimKey['keyType'];
      keyLength: DkimKey['keyLength'];
      usable: DkimKey['usable'];
      testing: DkimKey['testing'];
      revoked: DkimKey['revoked'];
      provider: DkimKey['provider'];
    }[];
    /** Selectors whose lookup failed (a DNS error, not "no record"). */
    failed: DkimProbe['failed'];
    /** Caller-supplied selectors that were not queried, and why. */
    rejected: DkimProbe['rejected'];
  };
  mx: {
    status: MxAnalysis['status'];
    hosts: MxAnalysis['hosts'];
    providers: MxAnalysis['providers'];
  };
  /** DNS work of this check: queries sent, cache and memo hits, refusals, time. */
  dns: CheckStats;
};
