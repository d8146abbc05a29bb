/**
 * A host lookup (for webhooks) answered by a `Resolver` instead of the system resolver: with zone
 * files (`--zones`, `--demo-zones`, `serve --demo`) a webhook's host is looked up in the zones, so
 * nothing is asked of the system resolver and no packet leaves the machine for the lookup.
 * A (RFC 1035 §3.4.1) and AAAA (RFC 3596 §2.1), in that order; a name with neither fails as
 * `dns.lookup` does (ENOTFOUND), a failed lookup as EAI_AGAIN: never read as "no address".
 */
import type { HostLookup, Resolver } from '@spoof-checker/engine';

/** The lookup of `resolver`: every A and AAAA address of the host. */
export function resolverHostLookup(resolver: Resolver): HostLookup {
  return async (host) => {
    const [v4, v6] = await Promise.all([resolver.resolve(host, 'A'), resolver.resolve(host, 'AAAA')]);
    if (v4.kind === 'error' || v6.kind === 'error') {
      throw Object.assign(new Error(`the lookup of ${host} failed`), { code: 'EAI_AGAIN' });
    }
    const addresses = [
      ...(v4.kind === 'records' ? v4.records.map((address) => ({ address, family: 4 })) : []),
      ...(v6.kind === 'records' ? v6.records.map((address) => ({ address, family: 6 })) : []),
    ];
    if (addresses.length === 0) throw Object.assign(new Error(`${host} has no address in the zones`), { code: 'ENOTFOUND' });
    return addresses;
  };
}
