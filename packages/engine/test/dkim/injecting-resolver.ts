/**
 * Test helper: wraps a resolver to inject answers (errors above all) for chosen queries, record
 * every query, and measure how many are in flight at once.
 */
import { canonicalName } from '../../src/dns/name.js';
import type { DnsAnswer, RecordType, Resolver } from '../../src/dns/types.js';

/** A rule: this answer for `name` (any case), for one `type` or for every type. */
export interface InjectedAnswer {
  name: string;
  type?: RecordType;
  answer: DnsAnswer;
}

export class InjectingResolver implements Resolver {
  readonly calls: { name: string; type: RecordType }[] = [];
  maxInFlight = 0;
  private inFlight = 0;

  constructor(
    private readonly inner: Resolver,
    private readonly rules: readonly InjectedAnswer[] = [],
    private readonly delayMs = 0,
  ) {}

  async resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
    this.calls.push({ name: canonicalName(name), type });
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
      const rule = this.rules.find((candidate) => canonicalName(candidate.name) === canonicalName(name) && (candidate.type === undefined || candidate.type === type));
      if (rule) return rule.answer as DnsAnswer<T>;
      return await this.inner.resolve(name, type);
    } finally {
      this.inFlight--;
    }
  }

  /** The names queried for `type`, in call order. */
  names(type: RecordType): string[] {
    return this.calls.filter((call) => call.type === type).map((call) => call.name);
  }
}

/** Splits `text` into TXT character-strings of at most 255 octets (RFC 1035 §3.3.14), as publishers must. */
export function txtStrings(text: string): string[] {
  const strings: string[] = [];
  for (let offset = 0; offset < text.length; offset += 255) strings.push(text.slice(offset, offset + 255));
  return strings;
}

export const SOA = { mname: 'ns.test', rname: 'hostmaster.test', serial: 1, refresh: 3600, retry: 600, expire: 86400, minimum: 60 };
