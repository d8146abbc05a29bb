/**
 * The kept SPF analyses (packages/engine/src/spf/analyze.ts, `KeptAnalysis`): a name analysed again
 * asks the same questions and, when every answer is the same, gets the analysis it had; any answer
 * that differs, anywhere in the tree, gives a fresh one. Either way the lookups passed down are those
 * a fresh walk makes, each once.
 */
import { describe, expect, it } from 'vitest';
import { analyzeSpf, analyzeSpfNow, keptSpfAnalyses } from '../../src/spf/analyze.js';
import type { DnsAnswer, RecordType, Resolver } from '../../src/dns/types.js';
import type { ResourceRecord } from '../../src/zones/types.js';
import { TestResolver, a, txt } from './zones.js';
import type { Faults } from './zones.js';

let sequence = 0;
/** A name no other test analyses, so the memo's state is this test's own. */
const freshName = () => `memo${++sequence}-${process.pid}.example`;

function records(domain: string, includeText: string): ResourceRecord[] {
  return [
    txt(domain, `v=spf1 include:_spf.${domain} a:mail.${domain} -all`),
    txt(`_spf.${domain}`, includeText),
    a(`mail.${domain}`, '192.0.2.25'),
  ];
}

/** The JSON form of an analysis (what a result carries; the address sets behind the pass set are not part of it). */
const json = (analysis: unknown) => JSON.parse(JSON.stringify(analysis, (key, value: unknown) => (key === 'passSources' ? undefined : value))) as unknown;

/**
 * `TestResolver` with answers known at once (`resolveNow`, as the check's resolver over a warm cache
 * gives them): what a replay compares without waiting.
 */
class ImmediateTestResolver extends TestResolver {
  resolveNow<T extends RecordType>(name: string, type: T): DnsAnswer<T> {
    return this.resolveSync(name, type);
  }
}

/** Three analyses of `domain` over `resolver` (the second keeps it, the third replays). */
async function thrice(domain: string, resolver: Resolver) {
  const first = await analyzeSpf(domain, resolver);
  const second = await analyzeSpf(domain, resolver);
  const third = await analyzeSpf(domain, resolver);
  return { first, second, third };
}

describe('kept SPF analyses', () => {
  it('keeps a name from its second analysis and hands the same analysis back while the answers stay the same', async () => {
    const domain = freshName();
    const resolver = new ImmediateTestResolver(records(domain, 'v=spf1 ip4:198.51.100.0/24 ~all'));
    const before = keptSpfAnalyses();
    const first = await analyzeSpf(domain, resolver);
    expect(keptSpfAnalyses()).toBe(before);
    const second = await analyzeSpf(domain, resolver);
    expect(keptSpfAnalyses()).toBe(before + 1);
    const third = await analyzeSpf(domain, resolver);
    expect(third).toBe(second);
    expect(json(third)).toEqual(json(first));
    expect(third.passSet?.pass.ipv4Addresses).toBe(257);
  });

  it('asks exactly what a fresh walk asks, in the same order, each once', async () => {
    const domain = freshName();
    const resolver = new ImmediateTestResolver(records(domain, 'v=spf1 ip4:198.51.100.0/24 ~all'));
    await analyzeSpf(domain, resolver);
    const fresh = [...resolver.calls];
    resolver.calls.length = 0;
    await analyzeSpf(domain, resolver);
    resolver.calls.length = 0;
    const replayed = await analyzeSpf(domain, resolver);
    expect(resolver.calls).toEqual(fresh);
    expect(replayed.queries).toBe(fresh.length);
  });

  it.each([
    ['the record at the name', (d: string) => [txt(d, `v=spf1 include:_spf.${d} a:mail.${d} +all`), txt(`_spf.${d}`, 'v=spf1 ip4:198.51.100.0/24 ~all'), a(`mail.${d}`, '192.0.2.25')]],
    ['an included record', (d: string) => records(d, 'v=spf1 ip4:203.0.113.0/24 ip4:198.51.100.0/24 ~all')],
    ['an address an `a` term names', (d: string) => [txt(d, `v=spf1 include:_spf.${d} a:mail.${d} -all`), txt(`_spf.${d}`, 'v=spf1 ip4:198.51.100.0/24 ~all'), a(`mail.${d}`, '192.0.2.99')]],
    ['an address that went away', (d: string) => [txt(d, `v=spf1 include:_spf.${d} a:mail.${d} -all`), txt(`_spf.${d}`, 'v=spf1 ip4:198.51.100.0/24 ~all')]],
  ])('gives a fresh analysis when %s changes, asking nothing twice', async (_label, changed) => {
    const domain = freshName();
    const resolver = new SwitchingResolver(records(domain, 'v=spf1 ip4:198.51.100.0/24 ~all'));
    const { second } = await thrice(domain, resolver);
    resolver.switchTo(changed(domain));
    const expected = await analyzeSpf(domain, new TestResolver(changed(domain))); // a plain resolver: never replayed
    resolver.calls.length = 0;
    const after = await analyzeSpf(domain, resolver);
    expect(after).not.toBe(second);
    expect(json(after)).toEqual(json(expected));
    expect(new Set(resolver.calls).size).toBe(resolver.calls.length);
    expect(after.queries).toBe(resolver.calls.length);
  });

  it('never keeps an analysis a failed lookup shaped, and recovers once the lookup answers', async () => {
    const domain = freshName();
    const faults: Faults = { [`TXT _spf.${domain}`]: 'servfail' };
    const failing = new ImmediateTestResolver(records(domain, 'v=spf1 ip4:198.51.100.0/24 ~all'), faults);
    const before = keptSpfAnalyses();
    const failed = await thrice(domain, failing);
    expect(keptSpfAnalyses()).toBe(before);
    expect(failed.third).not.toBe(failed.second);
    expect(failed.third.errors.join(' ')).toMatch(/servfail|failed/i);
    const healthy = await analyzeSpf(domain, new ImmediateTestResolver(records(domain, 'v=spf1 ip4:198.51.100.0/24 ~all')));
    expect(healthy.errors).toEqual([]);
  });

  it('hands out a frozen analysis, so no caller can change what the next check reads', async () => {
    const domain = freshName();
    const { third } = await thrice(domain, new ImmediateTestResolver(records(domain, 'v=spf1 ip4:198.51.100.0/24 ~all')));
    expect(Object.isFrozen(third)).toBe(true);
    expect(Object.isFrozen(third.tree[0])).toBe(true);
    expect(() => (third.errors as string[]).push('changed')).toThrow(TypeError);
    // The address sets behind the pass set still answer (they keep facts about themselves lazily).
    expect(third.passSources?.pass.v4.size()).toBe(257n);
  });

  it('waits for an answer that must be waited for, without asking it twice', async () => {
    const domain = freshName();
    const zone = new ImmediateTestResolver(records(domain, 'v=spf1 ip4:198.51.100.0/24 ~all'));
    await thrice(domain, zone);
    // Only `resolve` (a promise per answer): the replay stops at the first one and the walk takes it.
    const calls: string[] = [];
    const slow: Resolver = {
      resolve: async <T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> => {
        calls.push(`${type} ${name}`);
        return zone.resolveSync(name, type);
      },
    };
    const pending = analyzeSpfNow(domain, slow);
    expect(pending).toBeInstanceOf(Promise);
    const analysis = await pending;
    expect(new Set(calls).size).toBe(calls.length);
    expect(analysis.passSet?.pass.ipv4Addresses).toBe(257);
  });
});

/** A `TestResolver` whose records can be replaced between analyses. */
class SwitchingResolver implements Resolver {
  private current: TestResolver;
  readonly calls: string[] = [];
  constructor(initial: ResourceRecord[]) {
    this.current = new TestResolver(initial);
  }
  switchTo(next: ResourceRecord[]): void {
    this.current = new TestResolver(next);
  }
  async resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
    return this.resolveSync(name, type);
  }
  resolveSync<T extends RecordType>(name: string, type: T): DnsAnswer<T> {
    this.calls.push(`${type} ${name}`);
    return this.current.resolveSync(name, type);
  }
  resolveNow<T extends RecordType>(name: string, type: T): DnsAnswer<T> {
    return this.resolveSync(name, type);
  }
}

describe('kept SPF analyses, asked through a resolver that waits', () => {
  it('gives the kept analysis once every awaited answer turns out the same, and a fresh one when one differs', async () => {
    const domain = freshName();
    const zone = new SwitchingResolver(records(domain, 'v=spf1 ip4:198.51.100.0/24 ~all'));
    const { second } = await thrice(domain, zone);
    const waiting: Resolver = { resolve: async <T extends RecordType>(name: string, type: T) => zone.resolveSync(name, type) };
    expect(await analyzeSpf(domain, waiting)).toBe(second);
    zone.switchTo(records(domain, 'v=spf1 ip4:203.0.113.0/24 ~all'));
    const changed = await analyzeSpf(domain, waiting);
    expect(changed).not.toBe(second);
    expect(changed.passSet?.pass.ipv4Addresses).toBe(257);
    expect(changed.tree[0]?.children[0]?.raw).toBe('ip4:203.0.113.0/24');
  });
});
