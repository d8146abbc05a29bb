import type { Finding } from '../findings.js';

/** `verdict` of the Spoof check result (re-exported by result.ts). */
export type Verdict = 'spoofable' | 'partially_protected' | 'protected';
/** Where a forged message most likely lands (re-exported by result.ts). */
export type InboxOutcome = 'delivered' | 'spam' | 'rejected';

/** A DMARC policy value (RFC 7489 §6.3 / RFC 9989 §4.7 `p`, `sp`, `np`). */
export type PolicyName = 'none' | 'quarantine' | 'reject';

/**
 * The facts the verdict is decided from: the part of each analyzer's output that matters, and
 * nothing that needs I/O. `src/check.ts` builds it; `decide()` is a pure function of it.
 */
export interface VerdictFacts {
  /** The name checked, in A-labels, and its Unicode form for sentences. */
  domain: string;
  displayDomain: string;
  dmarc: DmarcFacts;
  spf: SpfFacts;
  dkim: DkimFacts;
  mx: MxFacts;
  /** Findings the analyzers produced (DMARC, SPF, DKIM, MX), in that order. */
  findings: Finding[];
}

export interface DmarcFacts {
  /**
   * `found`: a usable record; `none`: nothing published; `multiple`: several records at one name
   * (RFC 7489 §6.6.3: no policy); `unusable`: a record whose `p` is missing or invalid and that has no
   * valid `rua` (no DMARC processing at all).
   */
  status: 'found' | 'none' | 'multiple' | 'unusable';
  rawRecord: string | null;
  /** Where the record was found (`_dmarc.example.com`). */
  foundAt: string | null;
  organizationalDomain: string;
  /** The record's `p` (`none` when an invalid or missing `p` is read as none because `rua` is valid). */
  requestedPolicy: PolicyName | null;
  /**
   * `sp` of the record that governs names below the one checked (defaulted from `p`). That is the
   * record found, except when the name has its own record but is not the organizational domain: names
   * below it then follow the organizational domain's record (RFC 9989 §4.10.1).
   */
  subdomainPolicy: PolicyName | null;
  /** `np` (RFC 9989) of that same record, defaulted from `sp`, then `p`. */
  nonExistentPolicy: PolicyName | null;
  /** `t=y` in that same record. */
  subdomainTesting: boolean;
  /** That record, when it is not the one found for the name itself. */
  subdomainRecord: { foundAt: string; rawRecord: string } | null;
  /** A TXT record at `_dmarc` that looks like DMARC but is ignored as written (e.g. `v=DMARC1 p=reject`). */
  lookalike: { foundAt: string; rawRecord: string } | null;
  /** Which tag governs the exact name checked, and its value as written. */
  appliedTag: 'p' | 'sp' | 'np' | null;
  appliedPolicy: PolicyName | null;
  /** RFC 9989 `t=y`: receivers apply the policy one level lower. */
  testing: boolean;
  /** The legacy RFC 7489 `pct` when published (0 is 0), else null. */
  pct: number | null;
  /** `p` was missing or invalid and is read as `none` because a valid `rua` exists. */
  asNone: boolean;
  hasRua: boolean;
  /** False when the checked name does not exist (so `np` applies); null when unknown. */
  nameExists: boolean | null;
  /**
   * The policy receivers apply to the exact name checked, after `t=y` (computed once, in
   * src/dmarc/policy.ts); null without a usable record.
   */
  effectivePolicy: PolicyName | null;
  /** The same for existing and for non-existent subdomains of the name checked. */
  subdomainEffectivePolicy: PolicyName | null;
  nonExistentEffectivePolicy: PolicyName | null;
  /**
   * The tag each policy was read from, as published: `sp` absent falls back to `p`, `np` to `sp`
   * then `p` (RFC 9989 §4.7). `applied` is for the name checked, the other two for the record that
   * governs its subdomains.
   */
  policySources: { applied: 'p' | 'sp' | 'np' | null; subdomain: 'p' | 'sp' | null; nonExistent: 'p' | 'sp' | 'np' | null };
  /** `aspf` of the record that applies (RFC 7489 §3.1.2; `r`, relaxed, by default and without a record). */
  spfAlignment: 'r' | 's';
}

export interface SpfFacts {
  status: 'found' | 'none' | 'multiple';
  rawRecord: string | null;
  terminalAll: '+all' | '-all' | '~all' | '?all' | null;
  lookupCount: number;
  /** Anyone can pass the SPF of the name checked (its pass set is huge, or a probe passed). */
  openToAnyone: OpenSpf | null;
  /**
   * The SPF of the organizational domain, when the name checked is below it. Under relaxed SPF
   * alignment (RFC 7489 §3.1.2) a forger's envelope there aligns with the name checked.
   */
  organizational: { domain: string; openToAnyone: OpenSpf | null } | null;
  /**
   * Passing addresses in shared infrastructure (cloud compute, CI runners, CDN edges), at the name or,
   * under relaxed alignment, at its organizational domain; null when none were classified.
   */
  sharedInfrastructure: SharedInfrastructureFacts | null;
}

/** What the verdict needs of the shared-infrastructure classification (src/ranges/). */
export interface SharedInfrastructureFacts {
  /** The critical finding (`spf-shared-infrastructure`): a block an attacker can land in passes. */
  critical: Finding | null;
  /** The record to change and how, when `critical` is set. */
  fix: {
    /** The domain that publishes the record to change. */
    domain: string;
    rawRecord: string;
    /** Its own terms that authorise the space, as written. */
    terms: string[];
    /** Included records that authorise it, and whether each is the owner's own (at or below `domain`). */
    included: { via: string; recordDomain: string; terms: string[]; own: boolean }[];
    /** What to use instead, in words. */
    instead: string[];
  } | null;
}

/** An SPF record that lets anyone pass. */
export interface OpenSpf {
  /** The name that publishes it. */
  domain: string;
  rawRecord: string;
  /** The term that lets them through, as a path from the top record (`include:x.example → +all`). */
  term: string | null;
  /** What passes, in words ("100% of all IPv4 addresses pass through '+all'"). */
  evidence: string;
}

export interface DkimFacts {
  keys: { selector: string; keyType: string | null; keyLength: number | null; usable: boolean }[];
  probed: number;
}

export interface MxFacts {
  status: 'found' | 'null-mx' | 'none' | 'temperror';
  provider: string | null;
}

/** What `decide()` returns: everything of the result that is a judgement. */
export interface Decision {
  verdict: Verdict;
  spoofable: boolean;
  inboxOutcome: InboxOutcome;
  /** The id of the verdict rule that matched (see `VERDICT_RULES`). */
  rule: string;
  headline: string;
  summary: string;
  reasons: Finding[];
  nextStep: { title: string; body: string; href: string };
  subdomainNote: string | null;
  /** The policy receivers apply to the name checked, after `t=y`; null without a usable record. */
  effectivePolicy: PolicyName | null;
}
