/**
 * Lookalike (cousin) domains: the names that look like a domain, and what each can do with mail.
 * The fuzzers are named as dnstwist names them (elceef/dnstwist, Apache-2.0), so a result can be
 * compared with that tool's output; the code and tables here are this project's own.
 */
import type { Resolver } from '../dns/types.js';

/** Every fuzzer, named exactly as dnstwist names it. */
export const LOOKALIKE_FUZZERS = [
  'addition',
  'bitsquatting',
  'cyrillic',
  'dictionary',
  'homoglyph',
  'hyphenation',
  'insertion',
  'omission',
  'plural',
  'repetition',
  'replacement',
  'subdomain',
  'tld-swap',
  'transposition',
  'various',
  'vowel-swap',
] as const;

/** One of the dnstwist fuzzers. */
export type LookalikeFuzzer = (typeof LOOKALIKE_FUZZERS)[number];

/**
 * How a candidate's UTS #39 skeleton compares with the original's: `confusable` (the same strict
 * skeleton: it renders the same in most fonts), `diacritic` (the same once combining marks are
 * stripped: `exämple`), `none` (a typo, not a homograph).
 */
export type SkeletonMatch = 'confusable' | 'diacritic' | 'none';

/** A generated name, before any DNS query. */
export interface LookalikeCandidate {
  /** The whole name in A-labels (what DNS is asked). */
  domain: string;
  /** The same name in U-labels (the same string for an ASCII name). */
  unicode: string;
  /** Every fuzzer that made it, in `LOOKALIKE_FUZZERS` order. */
  fuzzers: LookalikeFuzzer[];
  /** Damerau-Levenshtein distance between the Unicode labels (the shared public suffix left out). */
  distance: number;
  skeleton: SkeletonMatch;
}

/**
 * What a lookalike can do with mail, worst first:
 * - `critical`: it resolves, receives mail (MX, or A/AAAA as the implicit MX) and its SPF
 *   authorises senders: it can phish and get the replies;
 * - `high`: it receives mail, or its SPF authorises senders;
 * - `medium`: it resolves, with no mail set-up (armed in minutes);
 * - `unknown`: a lookup it depends on failed (SERVFAIL, timeout, budget), or the TLD answers every
 *   name (wildcard): never read as `none`;
 * - `protected`: the parked-domain recipe (null MX, `v=spf1 -all`, DMARC `p=reject`);
 * - `none`: not resolving (NXDOMAIN). Not "available": it may be registered and on hold.
 */
export type LookalikeGrade = 'critical' | 'high' | 'medium' | 'unknown' | 'protected' | 'none';

/** The grades, worst first (the order results are listed in). */
export const LOOKALIKE_GRADES: readonly LookalikeGrade[] = ['critical', 'high', 'medium', 'unknown', 'protected', 'none'];

/**
 * Mail to the name: `receives` (MX hosts), `implicit` (no MX, but A/AAAA: RFC 5321 §5.1),
 * `null` (RFC 7505 null MX: refuses mail), `none` (no MX and no address), `unknown` (a lookup failed).
 */
export interface LookalikeMx {
  status: 'receives' | 'implicit' | 'null' | 'none' | 'unknown';
  /** MX exchanges for `receives`, addresses for `implicit`; empty otherwise. */
  hosts: string[];
}

/**
 * The name's own SPF (RFC 7208): `authorises` (some term can give `pass`), `fail-all` (nothing
 * passes: `v=spf1 -all` and the like), `none` (no SPF record), `invalid` (several records or a
 * syntax error: permerror), `unknown` (the lookup failed).
 */
export interface LookalikeSpf {
  status: 'authorises' | 'fail-all' | 'none' | 'invalid' | 'unknown';
  record: string | null;
}

/** The name's DMARC policy (`_dmarc` TXT, RFC 9989): `p=` as published, `absent`, or `unknown`. */
export interface LookalikeDmarc {
  status: 'reject' | 'quarantine' | 'none' | 'absent' | 'unknown';
  record: string | null;
}

/** One lookalike that resolves (or whose lookup failed), with its grade and the facts behind it. */
export interface Lookalike {
  domain: string;
  unicode: string;
  fuzzers: LookalikeFuzzer[];
  distance: number;
  grade: LookalikeGrade;
  mx: LookalikeMx;
  spf: LookalikeSpf;
  dmarc: LookalikeDmarc;
  /** Shares name servers or MX hosts with the original: probably a defensive registration. */
  sharedWithOriginal: boolean;
  /** One sentence on why the grade, and the hint "probably yours (defensive registration)" when shared. */
  note: string;
}

/** What to do next, for the owner of the original. */
export interface LookalikeNextStep {
  title: string;
  body: string;
  /** Records to publish, as `name TYPE data` lines, when the step is to park a name. */
  records?: string[];
}

/** `findLookalikes`' result (the JSON the CLI and the API print). */
export interface LookalikeReport {
  /** The original's registrable domain, in A-labels. */
  domain: string;
  /** The same in U-labels. */
  unicode: string;
  /** Whether `deep` was asked. */
  deep: boolean;
  /** Candidates made (after the cap). */
  generated: number;
  /** Candidates queried. */
  probed: number;
  /** Every DNS lookup the run made (charged to its budget; answers from a shared cache count too). */
  queries: number;
  /** Candidates made before the cap, and whether the cap cut some. */
  candidatesBeforeCap: number;
  capped: boolean;
  /** Counts per grade, `none` included. */
  counts: Record<LookalikeGrade, number>;
  /** Every graded name except `none`, worst grade first. */
  lookalikes: Lookalike[];
  /**
   * When the input itself looks like another, ASCII, name (its UTS #39 skeleton is that name's):
   * the name it imitates, in A-labels. The input may be a lookalike someone sent you.
   */
  looksLike: string | null;
  /** Public suffixes that answered a random label (a wildcard): their lookalikes are graded `unknown`. */
  wildcardSuffixes: string[];
  nextSteps: LookalikeNextStep[];
}

/** How a run may send SMTP (off unless asked). */
export interface LookalikeSmtpProbe {
  /** Opens SMTP to a lookalike's first MX and asks RCPT TO for a random address (catch-all test). */
  probe(mxHost: string, lookalike: string, original: string): Promise<'accepts-any' | 'rejects' | 'unknown'>;
}

/** The options of `findLookalikes`. */
export interface LookalikeOptions {
  /** Where answers come from (a `CachingResolver` keeps answers for their TTLs between runs). */
  resolver: Resolver;
  /** Two-substitution homoglyphs, the dictionary and the TLD swap; a larger cap and budget. */
  deep?: boolean;
  /** Words for `dictionary` (deep): the built-in list unless given. */
  dictionary?: readonly string[];
  /** Public suffixes for `tld-swap` (deep): the built-in list of common TLDs unless given. */
  tlds?: readonly string[];
  /** The most candidates to probe; the default and deep caps unless given (never above `MAX_LOOKALIKE_CANDIDATES`). */
  maxCandidates?: number;
  /** The most DNS lookups the run may make; the default and deep budgets unless given. */
  maxQueries?: number;
  /** Wall time for the run's DNS, in milliseconds. */
  deadlineMs?: number;
  /** Probes in flight at once. */
  concurrency?: number;
  /** Aborting stops the run's DNS work (what is left is graded `unknown`). */
  signal?: AbortSignal;
  /** Called after each probed candidate: how many are done of how many. */
  onProgress?: (done: number, total: number) => void;
  /**
   * Opens SMTP to third parties: off unless given (`--smtp-probe`). Results only add a sentence to
   * the note; the grade stays a DNS fact.
   */
  smtpProbe?: LookalikeSmtpProbe;
  /** The random label for the wildcard test (tests inject a fixed one). */
  randomLabel?: () => string;
}
