/**
 * The one place the SPF code calls the resolver port. A resolver must not reject for a DNS
 * condition; if one does anyway (a bug, or a third-party adapter), the rejection becomes a
 * `servfail` answer, so SPF reports temperror instead of throwing out of the engine.
 */
import type { DnsAnswer, RecordType, Resolver } from '../dns/types.js';

/**
 * `resolver.resolve(name, type)`, with a rejection or a throw turned into an error answer, and a
 * refusal to query an invalid name read as NXDOMAIN: a name no query can carry does not exist
 * (RFC 7208 §4.8 and the suite's invalid-domain tests). The callers check names before asking, so
 * this only matters when a resolver is stricter than they are.
 */
export async function safeResolve<T extends RecordType>(resolver: Resolver, name: string, type: T): Promise<DnsAnswer<T>> {
  try {
    const answer = await resolver.resolve(name, type);
    return answer.kind === 'error' && answer.reason === 'invalid-name' ? { kind: 'nxdomain' } : answer;
  } catch (error) {
    return { kind: 'error', reason: 'servfail', detail: `the resolver failed: ${error instanceof Error ? error.message : String(error)}` };
  }
}
