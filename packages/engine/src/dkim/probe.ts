/**
 * DKIM key discovery: query `<selector>._domainkey.<domain>` TXT for the caller's selectors and a
 * sourced list, in parallel, and report every key found (never stopping at the first).
 */
import { canonicalName, dnsNameProblem, MAX_NAME_OCTETS } from '../dns/name.js';
import { resolveOnceNow, type DnsAnswer, type Now, type Resolver } from '../dns/types.js';
import { dkimFindings } from './findings.js';
import { parseDkimKeyRecordCached } from './parse.js';
import {
  KNOWN_SELECTORS,
  MICROSOFT_DYNAMIC_PROVIDER,
  microsoftDynamicSelectors,
  providerForCnameTarget,
  providerForSelector,
} from './selectors.js';
import { mapBounded } from '../map-bounded.js';
import { memoByText } from '../text-cache.js';
import type {
  DkimDanglingAlias,
  DkimKey,
  DkimKeyOutcome,
  DkimParseOptions,
  DkimProbe,
  DkimProbeFailure,
  DkimProbeOptions,
  DkimSelectorRejection,
  ProviderEvidence,
  SelectorOrigin,
} from './types.js';

/** RFC 6376 §3.6.2.1: keys live below this label of the signing domain. */
export const DOMAINKEY_LABEL = '_domainkey';
/** At most this many caller-supplied selectors are probed; the rest are reported as rejected. */
export const MAX_CALLER_SELECTORS = 50;
/**
 * How many selector queries one probe keeps in flight: more than a probe ever makes (50 caller
 * selectors, the built-in list, Microsoft's two), so every probe goes out in one wave and a cold
 * check waits one round trip for DKIM, not one per batch. The resolver below carries the limits
 * that protect the network (`ConcurrencyLimitedResolver`) and the per-check budget; this is only a
 * backstop.
 */
export const MAX_PARALLEL_SELECTOR_QUERIES = 128;
/** RFC 1035 §2.3.4: a label is at most 63 octets. */
export const MAX_SELECTOR_LABEL_OCTETS = 63;

// RFC 6376 §3.1: a selector is one or more labels. Underscores are allowed as well as LDH, because
// deployed selectors use them (AWeber's `aweber_key_a`) and DNS itself permits any octet in a label.
const SELECTOR_LABEL = /^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?$/;

/** The name a key for `selector` is published at (RFC 6376 §3.6.2.1). */
export function keyRecordName(selector: string, domain: string): string {
  return `${selector}.${DOMAINKEY_LABEL}.${canonicalName(domain)}`;
}

/**
 * Why `selector` cannot be queried, or null when it can. Expects the lower-case form.
 */
export function selectorProblem(selector: string): string | null {
  if (selector === '') return 'the selector is empty';
  for (const label of selector.split('.')) {
    if (label === '') return 'the selector has an empty label (two dots in a row, or a leading or trailing dot)';
    if (label.length > MAX_SELECTOR_LABEL_OCTETS) return `the label "${label.slice(0, 20)}…" is longer than ${MAX_SELECTOR_LABEL_OCTETS} octets`;
    if (!SELECTOR_LABEL.test(label)) {
      return `"${label}" is not a DNS label: use letters, digits, hyphens and underscores, not starting or ending with a hyphen (internationalised names in their xn-- form)`;
    }
  }
  return null;
}

/**
 * Probes `domain` for DKIM keys: the caller's `selectors` first, then the sourced list
 * (`KNOWN_SELECTORS`), then Microsoft's per-domain selectors; deduplicated, validated, queried in
 * parallel. Every key found is reported. A failed lookup is reported in `failed`, never as "not found".
 * Never throws for a DNS condition or bad record text.
 */
export async function probeDkim(domain: string, resolver: Resolver, options: DkimProbeOptions = {}): Promise<DkimProbe> {
  return probeDkimNow(domain, resolver, options);
}

/** `probeDkim`, as a value when every answer is held and a promise only when one must wait. */
export function probeDkimNow(domain: string, resolver: Resolver, options: DkimProbeOptions = {}): Now<DkimProbe> {
  const apex = canonicalName(domain);
  const domainProblem = apex === '' ? 'the domain is empty' : dnsNameProblem(apex);
  if (domainProblem) {
    return finish({ domain: apex, found: [], probed: [], failed: [], rejected: [], dangling: [], multiple: [], domainProblem });
  }

  const { probes, rejected } = planSelectors(apex, options);
  const answers = probes.length <= MAX_PARALLEL_SELECTOR_QUERIES
    ? lookupSelectors(resolver, probes)
    : mapBounded(probes, MAX_PARALLEL_SELECTOR_QUERIES, (probe) => lookupSelector(resolver, probe.name));
  return answers instanceof Promise ? answers.then((known) => readProbe(apex, probes, known, rejected, options)) : readProbe(apex, probes, answers, rejected, options);
}

/**
 * The probe of a domain known not to exist (its own lookup answered NXDOMAIN): RFC 8020 §2, nothing
 * exists below a name that does not exist, so no selector is asked for (each would be one more
 * uncacheable query at the domain's servers for an answer already known) and none is published.
 */
export function dkimUnderMissingName(domain: string): DkimProbe {
  const probe: Omit<DkimProbe, 'findings'> = {
    domain: canonicalName(domain),
    status: 'not-found',
    found: [],
    bestKey: null,
    probed: 0,
    selectorsProbed: [],
    failed: [],
    rejected: [],
    dangling: [],
  };
  return Object.assign(probe, { findings: dkimFindings(probe, { multipleRecordSelectors: [], nameMissing: true }) });
}

/** What the selectors' answers say, in probe order. */
function readProbe(apex: string, probes: readonly PlannedProbe[], answers: readonly DnsAnswer[], rejected: DkimSelectorRejection[], options: DkimProbeOptions): DkimProbe {
  const found: DkimKey[] = [];
  const failed: DkimProbeFailure[] = [];
  const dangling: DkimDanglingAlias[] = [];
  const multiple: string[] = [];
  for (let index = 0; index < probes.length; index++) {
    const probe = probes[index]!;
    const answer = answers[index] as DnsAnswer<'TXT'>;
    const result = readSelectorAnswer(probe, answer, options.parse);
    if (result.kind === 'failed') failed.push(result.failure);
    else if (result.kind === 'dangling') dangling.push(result.alias);
    else if (result.kind === 'keys') {
      found.push(...result.keys);
      if (result.keys.length > 1) multiple.push(probe.selector);
    }
  }
  return finish({ domain: apex, found, probed: probes.map((probe) => probe.selector), failed, rejected, dangling, multiple });
}

/**
 * The key the summary fields (`dkim.selector`, `dkim.keyLength`) describe, or null when none was found:
 * 1. a usable key (`valid`) before a too-short one, and a too-short one before any other outcome
 *    (revoked, invalid…), since it at least has a size to report;
 * 2. then RSA before Ed25519: Ed25519 is usually published beside an RSA key (dual signing), fewer
 *    receivers verify it (RFC 8463 is optional to implement), and its 256 bits would read as "weak"
 *    next to RSA sizes;
 * 3. then the longest key;
 * 4. then the first in probe order (caller selectors come first).
 */
export function chooseBestKey(found: readonly DkimKey[]): DkimKey | null {
  let best: DkimKey | null = null;
  for (const key of found) {
    if (!best || compareKeys(key, best) < 0) best = key;
  }
  return best;
}

interface PlannedProbe {
  readonly selector: string;
  readonly name: string;
  readonly origin: SelectorOrigin;
}

/**
 * How many domains' built-in probe plans are kept (`planSelectors`). Re-checking a domain then
 * reuses its 38 probe names instead of building them again: the same string objects the answer
 * cache was filled with, whose hashes V8 has already computed, so each lookup compares pointers
 * rather than hashing and comparing a fresh name (about a fifth of a warm check). About as many
 * domains as the service's default answer cache holds (50,000 answers, about 48 a domain): past
 * that, the answers are not warm either. At most 4 MB.
 */
export const PROBE_PLAN_CACHE_DOMAINS = 1024;
// A plan is kept from its domain's second check (`memoByText`): a scan checks each name once, and
// plans kept for names never asked again would live long enough to reach V8's old space and die
// there, which lets the heap (and RSS) grow by hundreds of MB over 100,000 names.
const builtInPlans = memoByText((apex: string): readonly PlannedProbe[] => buildPlan(apex, {}).probes, {
  entries: PROBE_PLAN_CACHE_DOMAINS,
  maxText: MAX_NAME_OCTETS,
});

/** How many domains' plans are kept now (for tests of the admission rule). */
export function keptProbePlans(): number {
  return builtInPlans.kept();
}

type SelectorPlan = { probes: readonly PlannedProbe[]; rejected: DkimSelectorRejection[] };

/** The selectors to query, in order, and the caller's selectors that will not be queried. */
function planSelectors(apex: string, options: DkimProbeOptions): SelectorPlan {
  // The common case (no caller selectors, the built-in list): the plan depends on the domain alone.
  const plainBuiltIn = (options.selectors === undefined || options.selectors.length === 0) && options.useBuiltInList !== false;
  if (!plainBuiltIn) return buildPlan(apex, options);
  return { probes: builtInPlans(apex), rejected: [] };
}

function buildPlan(apex: string, options: DkimProbeOptions): { probes: PlannedProbe[]; rejected: DkimSelectorRejection[] } {
  const probes: PlannedProbe[] = [];
  const rejected: DkimSelectorRejection[] = [];
  const seen = new Set<string>();

  let builtInsTaken = false;
  const add = (selector: string, origin: SelectorOrigin, checked = false): string | null => {
    if (seen.has(selector) || (builtInsTaken && BUILT_IN_SET.has(selector))) return null;
    const problem = checked ? null : selectorProblem(selector);
    if (problem) return problem;
    // `apex` and every selector label are valid here, so only the whole name's length can be wrong:
    // the full check runs just for names that are too long, to say why.
    const name = `${selector}.${DOMAINKEY_LABEL}.${apex}`;
    const nameProblem = name.length > MAX_NAME_OCTETS ? dnsNameProblem(name) : null;
    if (nameProblem) return `the name ${name} cannot be queried: ${nameProblem}`;
    seen.add(selector);
    probes.push({ selector, name, origin });
    return null;
  };

  for (const [index, raw] of (options.selectors ?? []).entries()) {
    if (index >= MAX_CALLER_SELECTORS) {
      rejected.push({ selector: raw, reason: `only the first ${MAX_CALLER_SELECTORS} selectors you supply are probed` });
      continue;
    }
    const problem = add(normaliseCallerSelector(raw, apex), 'caller');
    if (problem) rejected.push({ selector: raw, reason: problem });
  }
  if (options.useBuiltInList !== false) {
    // The list is checked and free of repeats already: with no caller selectors (the common case),
    // each name is built and taken as it is.
    if (seen.size === 0 && LONGEST_BUILT_IN + DOMAINKEY_LABEL.length + apex.length + 2 <= MAX_NAME_OCTETS) {
      for (const selector of BUILT_IN_SELECTORS) probes.push({ selector, name: `${selector}.${DOMAINKEY_LABEL}.${apex}`, origin: 'list' });
      builtInsTaken = true;
    } else {
      for (const selector of BUILT_IN_SELECTORS) add(selector, 'list', true);
    }
    // The domain may be too long for these names; they are a bonus, so a skip is not reported.
    for (const selector of microsoftDynamicSelectors(apex)) add(selector, 'microsoft-dynamic');
  }
  return { probes, rejected };
}

/**
 * Lower case, no surrounding whitespace or trailing dot, and without a `._domainkey[.<domain>]` the
 * caller may have pasted from a DNS console: `s1._domainkey.example.com` means selector `s1`.
 */
function normaliseCallerSelector(raw: string, apex: string): string {
  let selector = canonicalName(raw.trim());
  for (const suffix of [`.${DOMAINKEY_LABEL}.${apex}`, `.${DOMAINKEY_LABEL}`]) {
    if (selector.endsWith(suffix)) {
      selector = selector.slice(0, -suffix.length);
      break;
    }
  }
  return selector;
}

/**
 * The built-in list's selectors in probe order, each once, checked once at load: `planSelectors`
 * runs for every check, and these never change. (A bad entry would be a bug in the list; it is
 * left out here rather than probed.)
 */
const BUILT_IN_SELECTORS: readonly string[] = [...new Set(KNOWN_SELECTORS.map((entry) => entry.selector))].filter(
  (selector) => selectorProblem(selector) === null,
);
const BUILT_IN_SET: ReadonlySet<string> = new Set(BUILT_IN_SELECTORS);
/** The longest built-in selector's length: when it fits below a domain, every built-in name does. */
const LONGEST_BUILT_IN = Math.max(...BUILT_IN_SELECTORS.map((selector) => selector.length));

type SelectorResult =
  | { kind: 'keys'; keys: DkimKey[] }
  | { kind: 'failed'; failure: DkimProbeFailure }
  | { kind: 'dangling'; alias: DkimDanglingAlias }
  | { kind: 'none' };

/** The answer of most probes (nothing at the selector), shared: a warm probe reads about 45 of them. */
const NO_KEY: SelectorResult = Object.freeze({ kind: 'none' });

/**
 * The TXT answer at a selector name, with the alias it is delegated through. The CNAME query comes
 * first: NXDOMAIN there ends the probe in one query (nothing exists at the name, RFC 8020), as a TXT
 * query would; otherwise the TXT query follows. Asking for the CNAME ourselves makes delegation (the
 * provider hint) and dangling aliases visible through any resolver, including c-ares, which follows
 * chains without reporting them.
 */
async function lookupSelector(resolver: Resolver, name: string): Promise<DnsAnswer<'TXT'>> {
  return txtAfterAlias(resolver, name, await resolver.resolve(name, 'CNAME'));
}

/**
 * `lookupSelector` for every probe at once, in the same order of queries (every CNAME query, then
 * each TXT query as its CNAME answer comes). Answers the resolver already holds are used as they
 * are (`resolveNow`), so a warm probe of 45 selectors waits on nothing and allocates no promise
 * per selector; only lookups that must go to the network are awaited.
 */
function lookupSelectors(resolver: Resolver, probes: readonly PlannedProbe[]): Now<DnsAnswer<'TXT'>[]> {
  const aliases = probes.map((probe) => resolveOnceNow(resolver, probe.name, 'CNAME'));
  let waiting = false;
  const answers = probes.map((probe, index) => {
    const alias = aliases[index] as DnsAnswer<'CNAME'> | Promise<DnsAnswer<'CNAME'>>;
    const answer = alias instanceof Promise ? alias.then((known) => txtAfterAlias(resolver, probe.name, known)) : txtAfterAlias(resolver, probe.name, alias);
    if (answer instanceof Promise) waiting = true;
    return answer;
  });
  return waiting ? Promise.all(answers) : (answers as DnsAnswer<'TXT'>[]);
}

/** The rest of `lookupSelector` once the CNAME answer is known: the TXT query when one is needed. */
function txtAfterAlias(resolver: Resolver, name: string, alias: DnsAnswer<'CNAME'>): DnsAnswer<'TXT'> | Promise<DnsAnswer<'TXT'>> {
  if (alias.kind === 'error' || alias.kind === 'nxdomain') return alias;
  const txt = resolveOnceNow(resolver, name, 'TXT');
  return txt instanceof Promise ? txt.then((known) => withAlias(alias, known)) : withAlias(alias, txt);
}

/** The TXT answer, carrying the alias when the CNAME query found one and the TXT answer did not say. */
function withAlias(alias: DnsAnswer<'CNAME'>, txt: DnsAnswer<'TXT'>): DnsAnswer<'TXT'> {
  if (alias.kind !== 'records' || txt.kind === 'error' || (txt.cnames && txt.cnames.length > 0)) return txt;
  const cnames = [alias.records[0]!];
  return txt.kind === 'records' ? { kind: 'records', records: txt.records, ttl: txt.ttl, cnames } : { kind: txt.kind, ttl: txt.ttl, cnames };
}

/** What one selector's TXT answer says. NXDOMAIN and NODATA: no key there (RFC 6376 §6.1.2). */
function readSelectorAnswer(probe: PlannedProbe, answer: DnsAnswer<'TXT'>, parse: DkimParseOptions | undefined): SelectorResult {
  const cnameTarget = answer.kind !== 'error' && answer.cnames && answer.cnames.length > 0 ? (answer.cnames.at(-1) ?? null) : null;
  switch (answer.kind) {
    case 'error': {
      // RFC 6376 §6.1.2: a DNS failure is TEMPFAIL (key unavailable), never "no key".
      const failure: DkimProbeFailure = { selector: probe.selector, name: probe.name, reason: answer.reason };
      if (answer.detail !== undefined) failure.detail = answer.detail;
      return { kind: 'failed', failure };
    }
    case 'nxdomain':
    case 'nodata':
      if (cnameTarget === null) return NO_KEY;
      return { kind: 'dangling', alias: { selector: probe.selector, name: probe.name, cnameTarget, provider: cnameProvider(answer.cnames ?? []) } };
    case 'records': {
      const keys: DkimKey[] = [];
      for (const strings of answer.records) {
        // RFC 6376 §3.6.2.2: the strings of one TXT record are joined with no separator.
        const text = strings.join('');
        const outcome = parseDkimKeyRecordCached(text, parse);
        if (!isKeyRecordCandidate(outcome, text)) continue;
        keys.push(toDkimKey(probe, text, outcome, answer.cnames ?? [], answer.ttl));
      }
      // Only unrelated TXT (a wildcard's SPF record, a site verification token): no key here.
      if (keys.length === 0) {
        if (cnameTarget === null) return NO_KEY;
        return { kind: 'dangling', alias: { selector: probe.selector, name: probe.name, cnameTarget, provider: cnameProvider(answer.cnames ?? []) } };
      }
      return { kind: 'keys', keys };
    }
  }
}

// A record that was meant to be a key: it has p=, v=DKIM…, or k=rsa|ed25519 among its tags.
const LOOKS_LIKE_KEY_RECORD = /(?:^|;)[ \t\r\n]*(?:v[ \t\r\n]*=[ \t\r\n]*dkim|p[ \t\r\n]*=|k[ \t\r\n]*=[ \t\r\n]*(?:rsa|ed25519))/i;

/**
 * RFC 6376 §3.6.2.2 leaves several TXT records at one name undefined; we keep the ones that are
 * DKIM key records (even broken ones, which the user needs to hear about) and drop unrelated TXT,
 * such as an SPF record a wildcard returns for every name.
 */
function isKeyRecordCandidate(outcome: DkimKeyOutcome, text: string): boolean {
  switch (outcome.status) {
    case 'discard':
      return /^dkim/i.test(outcome.version);
    case 'invalid-syntax':
      return LOOKS_LIKE_KEY_RECORD.test(text);
    default:
      return true;
  }
}

function toDkimKey(probe: PlannedProbe, text: string, outcome: DkimKeyOutcome, cnames: string[], ttl: number | undefined): DkimKey {
  const record = outcome.status === 'valid' || outcome.status === 'too-short' ? outcome.record : null;
  const { provider, evidence } = providerHint(probe, cnames);
  const key: DkimKey = {
    selector: probe.selector,
    name: probe.name,
    origin: probe.origin,
    record: text,
    outcome,
    keyType: record?.key.type ?? null,
    keyLength: record?.key.bits ?? null,
    testing: record?.testing ?? false,
    strict: record?.strict ?? false,
    revoked: outcome.status === 'revoked',
    usable: outcome.status === 'valid',
    provider,
    providerEvidence: evidence,
    cnameTarget: cnames.at(-1) ?? null,
  };
  if (ttl !== undefined) key.ttl = ttl;
  return key;
}

/** The CNAME target names the hosting service best; the selector name is only a hint. */
function providerHint(probe: PlannedProbe, cnames: string[]): { provider: string | null; evidence: ProviderEvidence | null } {
  const fromCname = cnameProvider(cnames);
  if (fromCname) return { provider: fromCname, evidence: 'cname' };
  const fromSelector = probe.origin === 'microsoft-dynamic' ? MICROSOFT_DYNAMIC_PROVIDER : providerForSelector(probe.selector);
  return fromSelector ? { provider: fromSelector, evidence: 'selector' } : { provider: null, evidence: null };
}

/** The provider of the last alias in the chain that belongs to a known service. */
function cnameProvider(cnames: readonly string[]): string | null {
  for (let index = cnames.length - 1; index >= 0; index--) {
    const provider = providerForCnameTarget(cnames[index] ?? '');
    if (provider) return provider;
  }
  return null;
}

function compareKeys(a: DkimKey, b: DkimKey): number {
  return outcomeRank(a) - outcomeRank(b) || keyTypeRank(a) - keyTypeRank(b) || (b.keyLength ?? 0) - (a.keyLength ?? 0);
}

function outcomeRank(key: DkimKey): number {
  if (key.outcome.status === 'valid') return 0;
  if (key.outcome.status === 'too-short') return 1;
  return 2;
}

function keyTypeRank(key: DkimKey): number {
  if (key.keyType === 'rsa') return 0;
  if (key.keyType === 'ed25519') return 1;
  return 2;
}

interface ProbeFacts {
  domain: string;
  found: DkimKey[];
  probed: string[];
  failed: DkimProbeFailure[];
  rejected: DkimSelectorRejection[];
  dangling: DkimDanglingAlias[];
  multiple: string[];
  domainProblem?: string;
}

function finish(facts: ProbeFacts): DkimProbe {
  const status = facts.found.length > 0 ? 'found' : facts.failed.length > 0 || facts.probed.length === 0 ? 'incomplete' : 'not-found';
  const probe: Omit<DkimProbe, 'findings'> = {
    domain: facts.domain,
    status,
    found: facts.found,
    bestKey: chooseBestKey(facts.found),
    probed: facts.probed.length,
    selectorsProbed: facts.probed,
    failed: facts.failed,
    rejected: facts.rejected,
    dangling: facts.dangling,
  };
  // Object.assign rather than `{ ...probe, findings }`, which is slow on Node 20 (see dkim/parse.ts).
  return Object.assign(probe, { findings: dkimFindings(probe, { multipleRecordSelectors: facts.multiple, domainProblem: facts.domainProblem }) });
}
