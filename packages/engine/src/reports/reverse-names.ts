/**
 * Reverse names of report sources (RFC 1035 §3.5 `in-addr.arpa`, RFC 3596 §2.5 `ip6.arpa`), for the
 * senders a report names only by address. Bounded: at most `MAX_REVERSE_LOOKUPS` addresses (the
 * busiest first, as the caller orders them) and `REVERSE_LOOKUP_CONCURRENCY` at a time. A name is
 * `confirmed` when it resolves back to the address (forward-confirmed reverse DNS); an unconfirmed
 * name is anyone's claim. A DNS failure is reported as such, never as "no name".
 */
import { canonicalName } from '../dns/name.js';
import type { Resolver } from '../dns/types.js';
import { mapBounded } from '../map-bounded.js';
import { formatIp4, formatIp6, parseClientAddress, reverseName } from '../spf/address.js';

/** Addresses looked up per call; the rest are `skipped`. */
export const MAX_REVERSE_LOOKUPS = 100;
/** Lookups in flight at once. */
export const REVERSE_LOOKUP_CONCURRENCY = 8;

/** The reverse name of one address. */
export type ReverseName =
  | { status: 'found'; name: string; confirmed: boolean }
  | { status: 'none' }
  | { status: 'error'; detail: string }
  | { status: 'skipped' };

/** The reverse names of `addresses` (in order: the first `max` are looked up). */
export async function lookupReverseNames(addresses: readonly string[], resolver: Resolver, options: { max?: number; concurrency?: number } = {}): Promise<Map<string, ReverseName>> {
  const max = options.max ?? MAX_REVERSE_LOOKUPS;
  const out = new Map<string, ReverseName>();
  const unique = [...new Set(addresses)];
  for (const address of unique.slice(max)) out.set(address, { status: 'skipped' });
  const results = await mapBounded(unique.slice(0, max), options.concurrency ?? REVERSE_LOOKUP_CONCURRENCY, (address) => reverseOf(address, resolver));
  unique.slice(0, max).forEach((address, i) => out.set(address, results[i]!));
  return out;
}

async function reverseOf(text: string, resolver: Resolver): Promise<ReverseName> {
  const address = parseClientAddress(text);
  if (address === null) return { status: 'error', detail: `"${text}" is not an IP address` };
  const answer = await resolver.resolve(reverseName(address), 'PTR');
  if (answer.kind === 'error') return { status: 'error', detail: `the PTR lookup failed (${answer.reason})` };
  if (answer.kind !== 'records' || answer.records.length === 0) return { status: 'none' };
  const name = canonicalName(String(answer.records[0]));
  const forward = await resolver.resolve(name, address.version === 4 ? 'A' : 'AAAA');
  const wanted = address.version === 4 ? formatIp4(address.value) : formatIp6(address.words);
  const confirmed =
    forward.kind === 'records' &&
    forward.records.some((record) => {
      const back = parseClientAddress(String(record));
      return back !== null && (back.version === 4 ? formatIp4(back.value) : formatIp6(back.words)) === wanted;
    });
  return { status: 'found', name, confirmed };
}
