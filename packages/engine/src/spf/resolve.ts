/**
 * The one place the SPF code calls the resolver port. A resolver must not reject for a DNS
 * condition; if one does anyway (a bug, or a third-party adapter), the rejection becomes a
 * `servfail` answer, so SPF reports temperror instead of throwing out of the engine.
 */
import { resolveNow, type DnsAnswer, type Now, type RecordType, type Resolver } from '../dns/types.js';

/**
 * `resolver.resolve(name, type)`, with a rejection or a throw turned into an error answer, and a
 * refusal to query an invalid name read as NXDOMAIN: a name no query can carry does not exist
 * (RFC 7208 §4.8 and the suite's invalid-domain tests). The callers check names before asking, so
 * this only matters when a resolver is stricter than they are. An answer the resolver holds comes
 * back as a value (`resolveNow`), a promise only when it must wait.
 */
export function safeResolve<T extends RecordType>(resolver: Resolver, name: string, type: T): Now<DnsAnswer<T>> {
  let answer: Now<DnsAnswer<T>>;
  try {
    answer = resolveNow(resolver, name, type);
  } catch (error) {
    return resolverFailure(error);
  }
  return answer instanceof Promise ? answer.then(readInvalidName, resolverFailure<T>) : readInvalidName(answer);
}

function readInvalidName<T extends RecordType>(answer: DnsAnswer<T>): DnsAnswer<T> {
  return answer.kind === 'error' && answer.reason === 'invalid-name' ? { kind: 'nxdomain' } : answer;
}

function resolverFailure<T extends RecordType>(error: unknown): DnsAnswer<T> {
  return { kind: 'error', reason: 'servfail', detail: `the resolver failed: ${error instanceof Error ? error.message : String(error)}` };
}
