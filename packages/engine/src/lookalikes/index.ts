/**
 * `findLookalikes`: the names that look like a domain (the dnstwist fuzzers, homoglyphs a registry
 * accepts, UTS #39 skeletons), probed cheap first through the injected resolver, and graded by what
 * each can do with mail. See docs/lookalikes.md.
 */
import { randomBytes } from 'node:crypto';
import type { DnsAnswer } from '../dns/types.js';
import { createCheckResolver } from '../dns/limits.js';
import { SpoofCheckError } from '../errors.js';
import { generateFor, originalName } from './generate.js';
import { gradeOf, gradeRank, nextSteps, DEFENSIVE_HINT } from './grade.js';
import {
  DEEP_LOOKALIKE_DEADLINE_MS,
  DEEP_LOOKALIKE_MAX_QUERIES,
  DEFAULT_LOOKALIKE_DEADLINE_MS,
  DEFAULT_LOOKALIKE_MAX_QUERIES,
  DEFAULT_PROBE_CONCURRENCY,
  probeCandidate,
  probeOriginal,
  sameMxAnswer,
  sharesWithOriginal,
  suffixOf,
} from './probe.js';
import { LOOKALIKE_GRADES, type Lookalike, type LookalikeGrade, type LookalikeOptions, type LookalikeReport } from './types.js';

export * from './types.js';
export { DEEP_MAX_CANDIDATES, DEFAULT_DICTIONARY, DEFAULT_MAX_CANDIDATES, DEFAULT_SWAP_TLDS, MAX_LOOKALIKE_CANDIDATES, MIN_CANDIDATES_PER_FUZZER, generateFor, originalName } from './generate.js';
export type { GenerateOptions, GeneratedCandidates, OriginalName, OriginalOutcome } from './generate.js';
export { DEFENSIVE_HINT, gradeOf, nextSteps, parkingRecords } from './grade.js';
export {
  DEEP_LOOKALIKE_DEADLINE_MS,
  DEEP_LOOKALIKE_MAX_QUERIES,
  DEFAULT_LOOKALIKE_DEADLINE_MS,
  DEFAULT_LOOKALIKE_MAX_QUERIES,
  DEFAULT_PROBE_CONCURRENCY,
} from './probe.js';
export { damerauLevenshtein, looseSkeleton, skeleton } from './skeleton.js';
export { createSmtpProbe, LOOKALIKE_SMTP_DEADLINE_MS, LOOKALIKE_SMTP_PORT } from './smtp.js';
export type { SmtpProbeOptions } from './smtp.js';
export { IDN_POLICY, idnPolicyFor, UNKNOWN_TLD_POLICY } from './homoglyphs.js';
export type { IdnPolicy } from './homoglyphs.js';

/** The most probes any caller may run at once. */
export const MAX_PROBE_CONCURRENCY = 64;

/**
 * Finds the registered names that look like `input`'s registrable domain and grades what each can
 * do with mail. `input` is a domain, URL or address. Throws `SpoofCheckError` (`invalid_domain`)
 * for input that is not a registrable name, before any lookup; every DNS condition is a value in the
 * report (a failed lookup grades its name `unknown`).
 *
 * Cost: one MX lookup per candidate, three or five more per name that exists, two for the original,
 * one per public suffix under which a name exists (the wildcard test); capped by `maxQueries`.
 */
export async function findLookalikes(input: string, options: LookalikeOptions): Promise<LookalikeReport> {
  const outcome = originalName(input);
  if (!outcome.ok) {
    throw new SpoofCheckError('invalid_domain', outcome.message, { why: 'Lookalikes are made from a registrable domain.', fix: outcome.fix });
  }
  const deep = options.deep === true;
  const generated = generateFor(outcome.original, options);
  const { original } = generated;
  const resolver = createCheckResolver(options.resolver, {
    maxQueries: options.maxQueries ?? (deep ? DEEP_LOOKALIKE_MAX_QUERIES : DEFAULT_LOOKALIKE_MAX_QUERIES),
    deadlineMs: options.deadlineMs ?? (deep ? DEEP_LOOKALIKE_DEADLINE_MS : DEFAULT_LOOKALIKE_DEADLINE_MS),
    signal: options.signal,
  });
  const originalFacts = await probeOriginal(resolver, original.domain);
  const randomLabel = options.randomLabel ?? (() => `sc-wildcard-${randomBytes(6).toString('hex')}`);
  // One random-label query per public suffix, and only once a name under it resolved.
  const wildcards = new Map<string, Promise<DnsAnswer<'MX'> | null>>();
  const wildcardOf = (suffix: string): Promise<DnsAnswer<'MX'> | null> => {
    let pending = wildcards.get(suffix);
    if (!pending) {
      pending = resolver.resolve(`${randomLabel()}.${suffix}`, 'MX').then((answer) => (answer.kind === 'records' || answer.kind === 'nodata' ? answer : null));
      wildcards.set(suffix, pending);
    }
    return pending;
  };

  const candidates = generated.candidates;
  const graded: (Lookalike & { rank: number })[] = [];
  const counts = Object.fromEntries(LOOKALIKE_GRADES.map((g) => [g, 0])) as Record<LookalikeGrade, number>;
  const wildcardSuffixes = new Set<string>();
  let probed = 0;
  let done = 0;
  let next = 0;
  const concurrency = Math.max(1, Math.min(MAX_PROBE_CONCURRENCY, Math.floor(options.concurrency ?? DEFAULT_PROBE_CONCURRENCY)));

  const work = async (): Promise<void> => {
    while (next < candidates.length) {
      const rank = next++;
      const candidate = candidates[rank]!;
      const facts = await probeCandidate(resolver, candidate.domain);
      if (!(facts.mxAnswer.kind === 'error' && facts.mxAnswer.reason === 'budget')) probed++;
      let wildcardSuffix: string | null = null;
      if (facts.exists === 'yes') {
        const suffix = suffixOf(candidate.domain);
        const wildcard = await wildcardOf(suffix);
        if (wildcard !== null) {
          wildcardSuffixes.add(suffix);
          if (sameMxAnswer(wildcard, facts.mxAnswer)) wildcardSuffix = suffix;
        }
      }
      const { grade, note } = gradeOf(facts, wildcardSuffix);
      counts[grade]++;
      if (grade !== 'none') {
        const shared = facts.exists === 'yes' && sharesWithOriginal(originalFacts, facts);
        let text = shared ? `${note} Shares name servers or MX hosts with ${original.unicode}: ${DEFENSIVE_HINT}.` : note;
        if (options.smtpProbe && facts.mx.status === 'receives' && !shared && facts.mx.hosts[0] !== undefined) {
          const accepts = await options.smtpProbe.probe(facts.mx.hosts[0], candidate.domain, original.domain).catch(() => 'unknown' as const);
          if (accepts === 'accepts-any') text += ' Its MX accepted mail for a random address: it catches everything sent to the name.';
        }
        graded.push({
          domain: candidate.domain,
          unicode: candidate.unicode,
          fuzzers: candidate.fuzzers,
          distance: candidate.distance,
          grade,
          mx: facts.mx,
          spf: facts.spf,
          dmarc: facts.dmarc,
          sharedWithOriginal: shared,
          note: text,
          rank,
        });
      }
      done++;
      options.onProgress?.(done, candidates.length);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(1, candidates.length)) }, work));

  graded.sort((a, b) => gradeRank(a.grade) - gradeRank(b.grade) || a.rank - b.rank);
  const lookalikes: Lookalike[] = graded.map(({ rank: _rank, ...rest }) => rest);
  return {
    domain: original.domain,
    unicode: original.unicode,
    deep,
    generated: candidates.length,
    probed,
    queries: resolver.stats().queries,
    candidatesBeforeCap: generated.beforeCap,
    capped: generated.beforeCap > candidates.length,
    counts,
    lookalikes,
    looksLike: generated.looksLike,
    wildcardSuffixes: [...wildcardSuffixes].sort(),
    // The name to register: the likeliest ASCII candidate not found registered (never one someone holds).
    nextSteps: nextSteps(original.unicode, lookalikes, candidates.find((c) => c.domain === c.unicode && !lookalikes.some((l) => l.domain === c.domain))?.domain),
  };
}
