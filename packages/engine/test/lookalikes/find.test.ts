/**
 * findLookalikes over the fixture zones (acmebank.example and its registered lookalikes) and over
 * injected faults: grades, fuzzers, the query count, worst grade first, `none` counted not listed,
 * a failed lookup never graded `none`, the wildcard test, the budget.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { FaultyResolver } from '../../src/dns/faults.js';
import type { DnsAnswer, RecordType, Resolver } from '../../src/dns/types.js';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { findLookalikes } from '../../src/lookalikes/index.js';
import { parseZone } from '../../src/zones/parse.js';
import { loadZoneDirectory } from '../../src/zones/load.js';
import { isSpoofCheckError } from '../../src/errors.js';

const ZONES = new URL('../../../../fixtures/zones/', import.meta.url).pathname;
let zones: ZoneResolver;

/** Counts the lookups that reach the resolver. */
class Counting implements Resolver {
  count = 0;
  constructor(private readonly inner: Resolver) {}
  resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
    this.count++;
    return this.inner.resolve(name, type);
  }
}

beforeAll(async () => {
  zones = new ZoneResolver(await loadZoneDirectory(ZONES));
});

describe('findLookalikes on the fixture zones', () => {
  it('finds each registered lookalike with its grade and a fuzzer that explains it, and nothing unrelated', async () => {
    const counting = new Counting(zones);
    const report = await findLookalikes('acmebank.example', { resolver: counting, randomLabel: () => 'sc-wildcard-test' });
    const got = Object.fromEntries(report.lookalikes.map((l) => [l.unicode, [l.grade, l.fuzzers, l.sharedWithOriginal]]));
    expect(got).toEqual({
      'acmeb\u0430nk.example': ['critical', ['homoglyph'], false],
      'acmebanks.example': ['critical', ['addition'], false],
      'acrnebank.example': ['high', ['homoglyph'], false],
      'acmebnak.example': ['high', ['transposition'], false],
      'acm\u00e9bank.example': ['high', ['homoglyph'], false],
      'acme-bank.example': ['high', ['hyphenation'], true],
      'acmeebank.example': ['medium', ['repetition'], false],
      'acmebamk.example': ['protected', ['homoglyph', 'replacement'], false],
      'acmebnk.example': ['protected', ['omission'], true],
    });
    // Worst grade first; none counted, not listed.
    expect(report.lookalikes.map((l) => l.grade)).toEqual(['critical', 'critical', 'high', 'high', 'high', 'high', 'medium', 'protected', 'protected']);
    expect(report.counts).toMatchObject({ critical: 2, high: 4, medium: 1, protected: 2, unknown: 0 });
    expect(report.counts.none).toBe(report.generated - 9);
    expect(report.probed).toBe(report.generated);
    // One query per candidate, three per existing name (+2 A/AAAA for the three without MX), two for
    // the original, one wildcard test for .example.
    expect(report.queries).toBe(report.generated + 9 * 3 + 3 * 2 + 2 + 1);
    expect(counting.count).toBe(report.queries);
    expect(report.wildcardSuffixes).toEqual([]);
    const critical = report.lookalikes[0]!;
    expect(critical).toMatchObject({
      domain: 'xn--acmebnk-6fg.example',
      distance: 1,
      mx: { status: 'receives', hosts: ['mx.xn--acmebnk-6fg.example'] },
      spf: { status: 'authorises', record: 'v=spf1 ip4:203.0.113.0/24 -all' },
      dmarc: { status: 'absent', record: null },
    });
    expect(report.lookalikes.find((l) => l.domain === 'acmebanks.example')).toMatchObject({ mx: { status: 'implicit', hosts: ['203.0.113.20'] } });
    expect(report.lookalikes.find((l) => l.domain === 'acme-bank.example')!.note).toContain('probably yours (defensive registration)');
    // Issue 42: each step names its names, every one (the heading's count is the list's length), an IDN with its xn-- form.
    expect(report.nextSteps.map((s) => s.title)).toEqual([
      'Report the 2 critical lookalike(s)',
      'Check the 1 lookalike(s) that can handle mail and look like yours',
      'Park acme-bank.example',
      'Register acmcbank.example and park it',
    ]);
    expect(report.nextSteps[0]!.body).toMatch(/^acmebаnk\.example \(xn--acmebnk-6fg\.example\), acmebanks\.example: /);
    expect(report.nextSteps[1]!.body).toContain('acme-bank.example shares name servers or mail servers with acmebank.example');
    expect(report.nextSteps[2]!.records).toEqual(['acme-bank.example. MX 0 .', 'acme-bank.example. TXT "v=spf1 -all"', '_dmarc.acme-bank.example. TXT "v=DMARC1; p=reject;"']);
    // The name to register is one that was not found registered, never a lookalike someone holds.
    expect(report.lookalikes.some((l) => l.domain === 'acmcbank.example')).toBe(false);
    expect(report.nextSteps[3]!.records).toEqual(['acmcbank.example. MX 0 .', 'acmcbank.example. TXT "v=spf1 -all"', '_dmarc.acmcbank.example. TXT "v=DMARC1; p=reject;"']);
    expect(JSON.stringify(report)).not.toContain('globex');
    expect(report.lookalikes.some((l) => l.domain === 'acme.example')).toBe(false);
  });

  it('a SERVFAIL or a timeout is unknown, never none; the rest of the run goes on', async () => {
    const faulty = new FaultyResolver(zones, [
      { name: 'acmebnak.example', type: 'MX', fault: { kind: 'servfail' } },
      { name: 'acmebamk.example', type: 'MX', fault: { kind: 'drop' } },
      { name: 'acrnebank.example', type: 'TXT', fault: { kind: 'servfail' } },
    ], { dropAfterMs: 0 });
    const report = await findLookalikes('acmebank.example', { resolver: faulty });
    const grade = (d: string) => report.lookalikes.find((l) => l.domain === d);
    expect(grade('acmebnak.example')).toMatchObject({ grade: 'unknown', mx: { status: 'unknown' } });
    expect(grade('acmebamk.example')?.grade).toBe('unknown');
    // Receives mail, SPF unknown: could be critical, so unknown rather than high.
    expect(grade('acrnebank.example')).toMatchObject({ grade: 'unknown', spf: { status: 'unknown' } });
    expect(grade('acrnebank.example')!.note).toContain('servfail');
    expect(grade('xn--acmebnk-6fg.example')?.grade).toBe('critical');
  });

  it('when the budget runs out, what is left is unknown and not probed', async () => {
    const report = await findLookalikes('acmebank.example', { resolver: zones, maxQueries: 50, concurrency: 1 });
    expect(report.queries).toBe(50);
    expect(report.probed).toBeLessThan(50);
    expect(report.counts.unknown).toBe(report.generated - report.probed);
    expect(report.counts.none + report.counts.unknown + report.lookalikes.filter((l) => l.grade !== 'unknown').length).toBe(report.generated);
  });

  it('a TLD that answers every name: one random-label query, and its synthesised answers are unknown', async () => {
    const tld = parseZone('$ORIGIN wild.\n$TTL 300\n@ IN SOA ns. h. 1 1 1 1 1\n@ IN NS ns.example.\n* IN MX 10 parking.example.\nreal IN MX 10 mx.real.wild.\n', { origin: 'wild' });
    const resolver = new Counting(new ZoneResolver([tld]));
    const report = await findLookalikes('brand.wild', { resolver, randomLabel: () => 'sc-wildcard-x' });
    expect(report.wildcardSuffixes).toEqual(['wild']);
    // Every name under .wild (the `various` fuzzer's two under .com do not exist).
    const underWild = report.generated - 2;
    expect(report.counts.unknown).toBe(underWild);
    expect(report.counts.none).toBe(2);
    expect(report.lookalikes[0]!.note).toContain('answers every name');
    // One wildcard test for the suffix, however many names resolved.
    expect(report.queries).toBe(report.generated + underWild * 3 + 2 + 1);
  });

  it('refuses input that is not a registrable domain, before any lookup', async () => {
    const counting = new Counting(zones);
    const error = await findLookalikes('co.uk', { resolver: counting }).catch((e: unknown) => e);
    expect(isSpoofCheckError(error) && error.code).toBe('invalid_domain');
    expect(counting.count).toBe(0);
  });

  it('reports progress and stops on abort', async () => {
    const seen: number[] = [];
    const report = await findLookalikes('acmebank.example', { resolver: zones, onProgress: (done) => seen.push(done) });
    expect(seen.at(-1)).toBe(report.generated);
    const controller = new AbortController();
    controller.abort();
    const aborted = await findLookalikes('acmebank.example', { resolver: zones, signal: controller.signal });
    expect(aborted.counts.unknown).toBe(aborted.generated);
    expect(aborted.counts.none).toBe(0);
  });
});
