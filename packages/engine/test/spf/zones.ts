/**
 * Test helpers: records written in one line each, a root zone built from them, and a resolver
 * wrapper that injects DNS failures and records every query it is asked.
 */
import { canonicalName } from '../../src/dns/name.js';
import type { DnsAnswer, DnsErrorReason, RecordType, Resolver } from '../../src/dns/types.js';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import type { ResourceRecord } from '../../src/zones/types.js';

/** A TXT record; several strings make one record of several character-strings. */
export function txt(name: string, ...strings: string[]): ResourceRecord {
  return { name, type: 'TXT', ttl: 300, data: strings };
}
/** An A record. */
export function a(name: string, address: string): ResourceRecord {
  return { name, type: 'A', ttl: 300, data: address };
}
/** An AAAA record. */
export function aaaa(name: string, address: string): ResourceRecord {
  return { name, type: 'AAAA', ttl: 300, data: address };
}
/** An MX record; "" as exchange is a null MX. */
export function mx(name: string, preference: number, exchange: string): ResourceRecord {
  return { name, type: 'MX', ttl: 300, data: { preference, exchange: canonicalName(exchange) } };
}
/** A PTR record. */
export function ptr(name: string, target: string): ResourceRecord {
  return { name, type: 'PTR', ttl: 300, data: canonicalName(target) };
}
/** A CNAME record. */
export function cname(name: string, target: string): ResourceRecord {
  return { name, type: 'CNAME', ttl: 300, data: canonicalName(target) };
}

/** Failures to inject, keyed "TYPE name" (e.g. "TXT _spf.example.com"). */
export type Faults = Record<string, DnsErrorReason>;

/** A zone resolver over `records` in one root zone, with failures injected and every query logged. */
export class TestResolver implements Resolver {
  readonly calls: string[] = [];
  private readonly zone: ZoneResolver;

  constructor(
    records: ResourceRecord[],
    private readonly faults: Faults = {},
  ) {
    this.zone = new ZoneResolver([{ origin: '', records }]);
  }

  async resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
    return this.resolveSync(name, type);
  }

  /** The answer at once, logged, with any failure injected. */
  resolveSync<T extends RecordType>(name: string, type: T): DnsAnswer<T> {
    const key = `${type} ${canonicalName(name)}`;
    this.calls.push(key);
    const fault = this.faults[key];
    if (fault !== undefined) return { kind: 'error', reason: fault, detail: 'injected by the test' };
    return this.zone.resolveSync(name, type);
  }
}
