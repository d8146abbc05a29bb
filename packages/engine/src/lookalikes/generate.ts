/**
 * From a domain to the ranked, capped list of candidates: the registrable label (tldts, the ICANN
 * section of the public suffix list), every fuzzer, IDNA (UTS #46 through `url.domainToASCII`),
 * dedupe with the fuzzers merged, UTS #39 skeletons and the edit distance for the rank, then the cap.
 */
import { domainToASCII, domainToUnicode } from 'node:url';
import { parse } from 'tldts';
import { dnsNameProblem } from '../dns/name.js';
import { normaliseDomainInput } from '../input.js';
import { fuzz } from './fuzzers.js';
import { LATIN_TO_CYRILLIC, LATIN_TO_GREEK } from './homoglyphs.js';
import { damerauLevenshtein, looseSkeleton, skeleton } from './skeleton.js';
import { LOOKALIKE_FUZZERS, type LookalikeCandidate, type LookalikeFuzzer, type SkeletonMatch } from './types.js';

/** Candidates a default run probes at most (a few hundred are made for most names). */
export const DEFAULT_MAX_CANDIDATES = 500;
/** Candidates a deep run probes at most. */
export const DEEP_MAX_CANDIDATES = 2500;
/** The most any caller may ask for. */
export const MAX_LOOKALIKE_CANDIDATES = 5000;
/** Under the cap, each fuzzer that made names keeps at least this many (its likeliest): none is dropped whole. */
export const MIN_CANDIDATES_PER_FUZZER = 10;

/**
 * Words the deep run's `dictionary` fuzzer joins to the label: the words phishing names are made
 * of (log-in, accounts, payments, support, single sign-on). This project's own list.
 */
export const DEFAULT_DICTIONARY: readonly string[] = [
  'account', 'accounts', 'admin', 'app', 'auth', 'billing', 'cloud', 'docs', 'help', 'hr', 'id', 'info',
  'invoice', 'login', 'mail', 'my', 'online', 'pay', 'payment', 'payroll', 'portal', 'secure', 'security',
  'service', 'signin', 'sso', 'support', 'team', 'update', 'verify', 'vpn', 'web',
];

/**
 * Public suffixes the deep run's `tld-swap` tries: the generic TLDs with the most registrations,
 * the largest country-code TLDs and the new TLDs most seen in phishing reports. This project's own list.
 */
export const DEFAULT_SWAP_TLDS: readonly string[] = [
  'com', 'net', 'org', 'info', 'biz', 'co', 'io', 'ai', 'app', 'dev', 'me', 'tv', 'cc', 'ws', 'us', 'eu', 'uk', 'co.uk', 'de',
  'fr', 'nl', 'be', 'ch', 'at', 'es', 'it', 'pt', 'pl', 'se', 'dk', 'no', 'fi', 'ie', 'cz', 'ru', 'ua', 'in', 'cn', 'jp', 'kr',
  'au', 'com.au', 'nz', 'ca', 'br', 'com.br', 'mx', 'ar', 'cl', 'za', 'online', 'site', 'xyz', 'top', 'shop', 'store', 'club',
  'live', 'email', 'support', 'cloud', 'tech', 'link', 'click', 'help', 'page', 'icu', 'buzz',
];

/**
 * The dictionary words by how often phishing names use them (log-in and security words first, then
 * accounts and payments, then the rest); a caller's word not listed ranks after these, in its order.
 * This project's own order.
 */
export const DICTIONARY_ABUSE_ORDER: readonly string[] = [
  'login', 'secure', 'account', 'verify', 'signin', 'support', 'security', 'pay', 'payment', 'billing', 'update', 'online',
  'my', 'auth', 'sso', 'portal', 'accounts', 'service', 'help', 'mail', 'id', 'app', 'web', 'invoice', 'info', 'admin',
  'cloud', 'payroll', 'hr', 'docs', 'team', 'vpn',
];

/**
 * The abuse tiers of the rank, likeliest first (docs/lookalikes.md, "Rank and cap"): the name an
 * IDN input imitates, TLD swaps onto common TLDs, the dictionary words, confusables (they render as
 * the original), then every other name by edit distance.
 */
const TIER = { imitated: 0, commonTld: 1, dictionary: 2, confusable: 3, distance: 4 } as const;

/** Where a candidate stands: its tier, and its place within the tier (a TLD's or a word's rank). */
interface AbuseRank {
  tier: number;
  place: number;
}

/** How likely a fuzzer's names are to be used against a brand (lower first); ties keep the list order. */
const FUZZER_PRIORITY: Readonly<Record<LookalikeFuzzer, number>> = {
  homoglyph: 0, cyrillic: 0, omission: 1, replacement: 1, transposition: 1, repetition: 1, 'tld-swap': 1,
  insertion: 2, addition: 2, 'vowel-swap': 2, hyphenation: 2, plural: 2, dictionary: 2,
  bitsquatting: 3, subdomain: 3, various: 3,
};

/** The original, split: what the fuzzers work on. */
export interface OriginalName {
  /** The registrable domain in A-labels. */
  domain: string;
  unicode: string;
  /** The registrable label in Unicode (`example`, `bücher`). */
  label: string;
  /** The public suffix in A-labels (`com`, `co.uk`). */
  suffix: string;
}

/** The registrable domain of an input, or why there is none. */
export type OriginalOutcome = { ok: true; original: OriginalName } | { ok: false; message: string; fix: string };

/** Reads the input (domain, URL or address, `normaliseDomainInput`) and finds its registrable domain. */
export function originalName(input: string): OriginalOutcome {
  const normalised = normaliseDomainInput(input);
  if (!normalised.ok) return normalised;
  const parsed = parse(normalised.domain, { allowPrivateDomains: false });
  if (!parsed.domain || !parsed.publicSuffix || !parsed.domainWithoutSuffix) {
    return {
      ok: false,
      message: `'${normalised.displayDomain}' is a public suffix, not a name someone registered.`,
      fix: 'Give a registrable domain such as example.com.',
    };
  }
  // The label's Unicode form is cut from the whole name's: a bare label such as `0` would be read
  // as an IPv4 address by the URL host parser (`0.0.0.0`).
  const unicode = domainToUnicode(parsed.domain);
  const label = unicode.slice(0, unicode.length - domainToUnicode(parsed.publicSuffix).length - 1);
  return { ok: true, original: { domain: parsed.domain, unicode, label, suffix: parsed.publicSuffix } };
}

/** What `generateLookalikes` gives. */
export interface GeneratedCandidates {
  original: OriginalName;
  /** Ranked (likeliest first) and capped. */
  candidates: LookalikeCandidate[];
  /** How many distinct valid names the fuzzers made before the cap. */
  beforeCap: number;
  /** The name the input imitates, when the input is itself a homograph of an ASCII name. */
  looksLike: string | null;
}

/** The options of `generateLookalikes` (the generation half of `LookalikeOptions`). */
export interface GenerateOptions {
  deep?: boolean;
  dictionary?: readonly string[];
  tlds?: readonly string[];
  maxCandidates?: number;
}

const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

/** The A-label form of a Unicode name, or null when IDNA refuses it or it is not a host name. */
export function toAsciiName(unicode: string): string | null {
  const ascii = domainToASCII(unicode);
  if (ascii === '' || dnsNameProblem(ascii) !== null) return null;
  return ascii.split('.').every((label) => LDH_LABEL.test(label)) ? ascii : null;
}

/** Generates, dedupes, ranks and caps the lookalikes of an original. */
export function generateFor(original: OriginalName, options: GenerateOptions = {}): GeneratedCandidates {
  const deep = options.deep === true;
  const fuzzed = fuzz(original.label, original.suffix, {
    deep,
    words: options.dictionary ?? (deep ? DEFAULT_DICTIONARY : null),
    tlds: options.tlds ?? (deep ? DEFAULT_SWAP_TLDS : null),
  });
  const looksLike = asciiPrototype(original);
  if (looksLike !== null) {
    // The input imitates an ASCII name: that name (its homoglyph back) is the first one to look at.
    const homoglyphs = fuzzed.get('homoglyph') ?? [];
    homoglyphs.unshift({ label: looksLike.label, suffix: original.suffix });
    fuzzed.set('homoglyph', homoglyphs);
  }
  const suffixUnicode = domainToUnicode(original.suffix);
  const strict = skeleton(original.unicode);
  const loose = looseSkeleton(original.unicode);
  const byDomain = new Map<string, LookalikeCandidate>();
  for (const fuzzer of LOOKALIKE_FUZZERS) {
    for (const { label, suffix } of fuzzed.get(fuzzer) ?? []) {
      const unicodeSuffix = suffix === original.suffix ? suffixUnicode : domainToUnicode(suffix);
      const ascii = toAsciiName(`${label}.${unicodeSuffix}`);
      if (ascii === null || ascii === original.domain) continue;
      const known = byDomain.get(ascii);
      if (known) {
        if (!known.fuzzers.includes(fuzzer)) known.fuzzers.push(fuzzer);
        continue;
      }
      const unicode = domainToUnicode(ascii);
      const match: SkeletonMatch = skeleton(unicode) === strict ? 'confusable' : looseSkeleton(unicode) === loose ? 'diacritic' : 'none';
      byDomain.set(ascii, { domain: ascii, unicode, fuzzers: [fuzzer], distance: labelDistance(unicode, original), skeleton: match });
    }
  }
  const tlds = options.tlds ?? (deep ? DEFAULT_SWAP_TLDS : []);
  const words = options.dictionary ?? (deep ? DEFAULT_DICTIONARY : []);
  const rankOf = abuseRanker(original, looksLike?.domain ?? null, tlds, words);
  const ranks = new Map<LookalikeCandidate, AbuseRank>([...byDomain.values()].map((c) => [c, rankOf(c)]));
  const ranked = [...byDomain.values()].sort((a, b) => compareRanks(ranks.get(a)!, ranks.get(b)!) || compareCandidates(a, b));
  const max = Math.min(options.maxCandidates ?? (deep ? DEEP_MAX_CANDIDATES : DEFAULT_MAX_CANDIDATES), MAX_LOOKALIKE_CANDIDATES);
  return { original, candidates: capCandidates(ranked, max), beforeCap: ranked.length, looksLike: looksLike?.domain ?? null };
}

/**
 * The abuse rank of each candidate: the imitated name, then TLD swaps onto the swap list's TLDs (the
 * common ones by construction: `DEFAULT_SWAP_TLDS` is ordered by registrations; a caller's `tlds` in
 * their order), then the dictionary names (by
 * `DICTIONARY_ABUSE_ORDER`, a hyphenated form before the joined one), then confusables, then the rest.
 */
function abuseRanker(original: OriginalName, imitated: string | null, tlds: readonly string[], words: readonly string[]): (candidate: LookalikeCandidate) => AbuseRank {
  const commonTlds = new Map(tlds.map((tld, i) => [toAsciiName(tld) ?? tld, i]));
  const wordRank = (word: string): number => {
    const listed = DICTIONARY_ABUSE_ORDER.indexOf(word);
    return listed !== -1 ? listed : DICTIONARY_ABUSE_ORDER.length + words.indexOf(word);
  };
  const tail = `.${domainToUnicode(original.suffix)}`;
  return (candidate) => {
    if (candidate.domain === imitated) return { tier: TIER.imitated, place: 0 };
    let best: AbuseRank = { tier: candidate.skeleton === 'confusable' ? TIER.confusable : TIER.distance, place: 0 };
    const better = (rank: AbuseRank) => {
      if (rank.tier < best.tier || (rank.tier === best.tier && rank.place < best.place)) best = rank;
    };
    if (candidate.fuzzers.includes('tld-swap')) {
      const suffix = candidate.domain.slice(candidate.domain.indexOf('.') + 1);
      const place = commonTlds.get(suffix);
      if (place !== undefined) better({ tier: TIER.commonTld, place });
    }
    if (candidate.fuzzers.includes('dictionary') && candidate.unicode.endsWith(tail)) {
      const label = candidate.unicode.slice(0, -tail.length);
      for (const word of words) {
        if (!label.startsWith(word) && !label.endsWith(word)) continue;
        // Two places per word: the hyphenated form ("brand-login") before the joined one ("brandlogin").
        better({ tier: TIER.dictionary, place: wordRank(word) * 2 + (label.includes('-') ? 0 : 1) });
      }
    }
    return best;
  };
}

function compareRanks(a: AbuseRank, b: AbuseRank): number {
  return a.tier - b.tier || a.place - b.place;
}

/** The Damerau-Levenshtein distance between the Unicode labels (the whole names when the suffix changed). */
function labelDistance(unicode: string, original: OriginalName): number {
  const tail = `.${domainToUnicode(original.suffix)}`;
  if (unicode.endsWith(tail)) return damerauLevenshtein(unicode.slice(0, -tail.length), original.label);
  return damerauLevenshtein(unicode, original.unicode);
}

const SKELETON_TIER: Readonly<Record<SkeletonMatch, number>> = { confusable: 0, diacritic: 1, none: 2 };

/**
 * Within an abuse tier (see `abuseRanker`): confusables (they render the same) at any distance, then
 * by distance, then diacritic variants before typos, then by the likeliest fuzzer, then by name (a
 * stable order).
 */
export function compareCandidates(a: LookalikeCandidate, b: LookalikeCandidate): number {
  const confusable = Number(a.skeleton !== 'confusable') - Number(b.skeleton !== 'confusable');
  if (confusable !== 0) return confusable;
  return (
    a.distance - b.distance ||
    SKELETON_TIER[a.skeleton] - SKELETON_TIER[b.skeleton] ||
    bestPriority(a) - bestPriority(b) ||
    (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0)
  );
}

function bestPriority(candidate: LookalikeCandidate): number {
  return Math.min(...candidate.fuzzers.map((f) => FUZZER_PRIORITY[f]));
}

/**
 * The first `max` of a ranked list, except that each fuzzer keeps its `MIN_CANDIDATES_PER_FUZZER`
 * likeliest names (fewer when `max` cannot hold that many for every fuzzer), so no fuzzer is dropped
 * whole. The result stays in rank order.
 */
export function capCandidates(ranked: readonly LookalikeCandidate[], max: number): LookalikeCandidate[] {
  if (ranked.length <= max) return [...ranked];
  const fuzzers = new Set(ranked.flatMap((c) => c.fuzzers));
  const perFuzzer = Math.max(1, Math.min(MIN_CANDIDATES_PER_FUZZER, Math.floor(max / Math.max(1, fuzzers.size))));
  const kept = new Set<LookalikeCandidate>();
  const taken = new Map<LookalikeFuzzer, number>();
  for (const candidate of ranked) {
    if (kept.size >= max) break;
    if (candidate.fuzzers.some((f) => (taken.get(f) ?? 0) < perFuzzer)) {
      kept.add(candidate);
      for (const f of candidate.fuzzers) taken.set(f, (taken.get(f) ?? 0) + 1);
    }
  }
  for (const candidate of ranked) {
    if (kept.size >= max) break;
    kept.add(candidate);
  }
  return ranked.filter((c) => kept.has(c));
}

const CYRILLIC_TO_LATIN = new Map([...Object.entries(LATIN_TO_CYRILLIC), ...Object.entries(LATIN_TO_GREEK)].map(([latin, other]) => [other, latin]));

/**
 * The ASCII name an IDN original imitates (`pаypal.com` with a Cyrillic а → `paypal.com`), when
 * every non-ASCII character has an ASCII look-alike and the two share a UTS #39 skeleton (strict or
 * loose); null for an ASCII original, or when some character has no ASCII look-alike. A genuine
 * IDN gets one too (`bücher.de` passes for `bucher.de`): the sentence says "looks like", not "is a fake".
 */
function asciiPrototype(original: OriginalName): { label: string; domain: string } | null {
  if (/^[\x00-\x7f]*$/.test(original.label)) return null;
  let label = '';
  for (const ch of original.label) {
    if (ch.charCodeAt(0) < 0x80) {
      label += ch;
      continue;
    }
    const latin = CYRILLIC_TO_LATIN.get(ch) ?? ch.normalize('NFD').replace(/\p{M}/gu, '');
    if (!/^[a-z0-9]+$/.test(latin)) return null;
    label += latin;
  }
  if (looseSkeleton(label) !== looseSkeleton(original.label)) return null;
  const domain = toAsciiName(`${label}.${original.suffix}`);
  return domain === null ? null : { label, domain };
}
