import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import type { DnsAnswer, DnsErrorReason, RecordType, Resolver } from '../../src/dns/types.js';
import type { ResourceRecord } from '../../src/zones/types.js';

/** A TXT record; several strings are published as separate character-strings. */
export function txt(name: string, ...strings: string[]): ResourceRecord {
  return { name, type: 'TXT', ttl: 300, data: strings };
}

/** An A record. */
export function a(name: string, address = '192.0.2.10'): ResourceRecord {
  return { name, type: 'A', ttl: 300, data: address };
}

/** An MX record. */
export function mx(name: string, exchange: string, preference = 10): ResourceRecord {
  return { name, type: 'MX', ttl: 300, data: { preference, exchange } };
}

/** A CNAME record. */
export function cname(name: string, target: string): ResourceRecord {
  return { name, type: 'CNAME', ttl: 300, data: target };
}

/** The whole DNS as one root zone: names not listed are NXDOMAIN, listed names without the type NODATA. */
export function dns(...records: ResourceRecord[]): ZoneResolver {
  return new ZoneResolver([{ origin: '', records }]);
}

/** One call a wrapped resolver received. */
export interface ResolverCall {
  name: string;
  type: RecordType;
}

/**
 * Wraps a resolver: records every call, and answers `{kind:'error'}` for chosen names (any type, or
 * only the type given as `TYPE name`).
 */
export class TestResolver implements Resolver {
  readonly calls: ResolverCall[] = [];
  private readonly failures = new Map<string, { reason: DnsErrorReason; detail?: string }>();

  constructor(private readonly inner: Resolver) {}

  /** Makes lookups of `name` (or `TYPE name`) fail with `reason`. */
  fail(key: string, reason: DnsErrorReason, detail?: string): this {
    this.failures.set(key, detail === undefined ? { reason } : { reason, detail });
    return this;
  }

  async resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
    this.calls.push({ name, type });
    const failure = this.failures.get(`${type} ${name}`) ?? this.failures.get(name);
    if (failure) return { kind: 'error', ...failure };
    return this.inner.resolve(name, type);
  }

  /** The names asked for with the given type, in order. */
  names(type: RecordType = 'TXT'): string[] {
    return this.calls.filter((call) => call.type === type).map((call) => call.name);
  }
}

/** A resolver over `records` that records its calls. */
export function recording(...records: ResourceRecord[]): TestResolver {
  return new TestResolver(dns(...records));
}
