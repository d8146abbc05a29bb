import type { Finding } from '../findings.js';
import type { InboxOutcome, Verdict } from '../result.js';

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
}

export interface SpfFacts {
  status: 'found' | 'none' | 'multiple';
  rawRecord: string | null;
  terminalAll: '+all' | '-all' | '~all' | '?all' | null;
  lookupCount: number;
  /** An address from outside every network the owner could mean passed SPF: anyone can. */
  openToAnyone: { ip: string; matchedTerm: string | null } | null;
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
