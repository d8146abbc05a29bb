import type { OpenSpf, VerdictFacts } from './types.js';

/**
 * The SPF record that lets anyone send as the name checked, if one does: the name's own, or, under
 * relaxed SPF alignment (RFC 7489 §3.1.2: the envelope's organizational domain equals the From's),
 * the organizational domain's. `aspf=s` needs the envelope to be the name itself.
 */
export function openSpfFor(facts: VerdictFacts): OpenSpf | null {
  if (facts.spf.openToAnyone !== null) return facts.spf.openToAnyone;
  if (facts.dmarc.spfAlignment === 'r') return facts.spf.organizational?.openToAnyone ?? null;
  return null;
}
