/**
 * Building the data file from the feeds: only the rentable services, Microsoft 365's own mail ranges
 * taken out, refused feeds keeping the previous data, and the shipped snapshot matching the copies
 * of the official feeds in fixtures/provider-ranges/.
 */
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildRangesFile, readFeedDirectory, type FeedText } from '../../src/ranges/build.js';
import { decodeIntervals, decodeRangesFile, encodeIntervals, RANGES_FILE_FORMAT, type RangesFile } from '../../src/ranges/codec.js';
import { overlap4, overlap6 } from '../../src/ranges/classify.js';
import { parseCidr, parseFeed } from '../../src/ranges/parse.js';
import { SHIPPED_RANGES_FILE, loadRangesFile } from '../../src/ranges/snapshot.js';
import { RangeSet } from '../../src/spf/ranges.js';
import type { RangeData } from '../../src/ranges/types.js';

const FEEDS_DIR = fileURLToPath(new URL('../../../../fixtures/provider-ranges/', import.meta.url));
const NOW = new Date('2025-08-01T00:00:00Z');
const feeds = readFeedDirectory(FEEDS_DIR, '2025-07-25');
const built = buildRangesFile(feeds, { now: NOW });

function data(file: RangesFile): RangeData {
  const decoded = decodeRangesFile(file, 'test');
  if (!decoded.ok) throw new Error(decoded.error);
  return decoded.data;
}

function set(cidr: string): RangeSet {
  const parsed = parseCidr(cidr)!;
  return RangeSet.cidr(parsed.family, parsed.start, parsed.family === 4 ? 32 - Math.log2(Number(parsed.end - parsed.start + 1n)) : 128 - (parsed.end - parsed.start + 1n).toString(2).length + 1);
}

function category(d: RangeData, provider: string, service: string) {
  const found = d.categories.find((c) => c.provider === provider && c.service === service);
  if (!found) throw new Error(`no ${provider} ${service}`);
  return found;
}

describe('buildRangesFile from the official feeds', () => {
  it('updates every provider and keeps the services the issue names, with each source date', () => {
    expect(built.providers.map((p) => p.outcome)).toEqual(Array(10).fill('updated'));
    const file = built.file!;
    expect(file.format).toBe(RANGES_FILE_FORMAT);
    expect(file.categories.map((c) => `${c.provider}/${c.service}/${c.kind}`)).toEqual([
      'aws/EC2/rent', 'google-cloud/Google Cloud/rent', 'azure/AzureCloud/rent', 'oracle/OCI/rent', 'digitalocean/Droplets/rent',
      'linode/Linode/rent', 'github/actions/runner', 'github/actions_macos/runner', 'cloudflare/edge/edge', 'fastly/edge/edge', 'akamai/edge/edge',
    ]);
    expect(file.sources.find((s) => s.provider === 'aws')).toMatchObject({ date: '2025-07-24', prefixes: expect.any(Number) });
    expect(file.sources.find((s) => s.provider === 'azure')).toMatchObject({ date: null, readAt: '2025-07-25' });
    // The oldest source date dates the whole file.
    expect(file.date).toBe('2025-07-21');
  });

  it('classifies AWS by EC2, never by AMAZON: Amazon SES space is not in it', () => {
    const ec2 = category(data(built.file!), 'aws', 'EC2');
    // amazonses.com authorises 54.240.0.0/18 and 199.255.192.0/22: AMAZON in the feed, never EC2.
    expect(overlap4(set('54.240.0.0/18'), ec2)).toBe(0);
    expect(overlap4(set('199.255.192.0/22'), ec2)).toBe(0);
    expect(overlap4(set('3.224.0.0/16'), ec2)).toBe(65536);
  });

  it("takes Microsoft 365's own mail ranges (EOPExternalPublishedIPs) out of AzureCloud, which overlaps them", () => {
    const azure = parseFeed('azure-service-tags-json', (feeds.get('microsoft-azure-ip-ranges.json') as { text: string }).text);
    if (!azure.ok) throw new Error(azure.error);
    const eop = azure.prefixes.filter((p) => p.service === 'EOPExternalPublishedIPs');
    const cloud = azure.prefixes.filter((p) => p.service === 'AzureCloud');
    const inside = eop.filter((e) => cloud.some((c) => c.cidr.family === e.cidr.family && c.cidr.start <= e.cidr.end && e.cidr.start <= c.cidr.end));
    // The feed itself lists AzureCloud blocks that overlap Exchange Online's: without the subtraction they would be reported.
    expect(inside.length).toBeGreaterThan(0);
    const d = data(built.file!);
    for (const c of d.categories) {
      for (const e of eop) {
        const hit = e.cidr.family === 4 ? overlap4(RangeSet.cidr(4, e.cidr.start, 32 - bits(e.cidr)), c) : Number(overlap6(RangeSet.cidr(6, e.cidr.start, 128 - bits(e.cidr)), c));
        expect(hit, `${c.provider} ${c.service} holds part of EOP ${e.cidr.start}`).toBe(0);
      }
    }
  });

  it('writes a compact file, a few hundred KB at most', () => {
    expect(JSON.stringify(built.file).length).toBeLessThan(400_000);
    expect(statSync(SHIPPED_RANGES_FILE).size).toBeLessThan(400_000);
  });

  it('the shipped snapshot is the build of fixtures/provider-ranges (run scripts/build-ranges.ts after changing them)', () => {
    const shipped = JSON.parse(readFileSync(SHIPPED_RANGES_FILE, 'utf8')) as RangesFile;
    const { generatedAt: _a, ...rebuilt } = built.file!;
    const { generatedAt: _b, ...kept } = shipped;
    expect(kept).toEqual(rebuilt);
    expect(loadRangesFile(SHIPPED_RANGES_FILE).ok).toBe(true);
  });
});

function bits(cidr: { start: bigint; end: bigint }): number {
  return (cidr.end - cidr.start + 1n).toString(2).length - 1;
}

describe('buildRangesFile refuses a bad feed and keeps the previous data', () => {
  const previous = built.file!;
  const withFeed = (file: string, feed: FeedText) => new Map([...feeds, [file, feed]]);

  it('a feed that fails to parse: that provider keeps its previous data, the others update', () => {
    const result = buildRangesFile(withFeed('aws-ip-ranges.json', { text: '<html>error</html>', url: 'https://x' }), { previous, now: NOW });
    expect(result.providers.find((p) => p.provider === 'aws')).toMatchObject({ outcome: 'kept', detail: expect.stringMatching(/does not parse: not valid JSON/) });
    expect(result.providers.filter((p) => p.outcome === 'updated')).toHaveLength(9);
    expect(result.file!.categories.find((c) => c.provider === 'aws')).toEqual(previous.categories.find((c) => c.provider === 'aws'));
  });

  it('a feed that shrank by more than half is refused', () => {
    const aws = JSON.parse((feeds.get('aws-ip-ranges.json') as { text: string }).text) as { prefixes: { service: string }[]; ipv6_prefixes: { service: string }[] };
    const shrunk = { ...aws, prefixes: aws.prefixes.filter((_, i) => i % 3 === 0), ipv6_prefixes: aws.ipv6_prefixes.filter((_, i) => i % 3 === 0) };
    const result = buildRangesFile(withFeed('aws-ip-ranges.json', { text: JSON.stringify(shrunk), url: 'https://x' }), { previous, now: NOW });
    expect(result.providers.find((p) => p.provider === 'aws')).toMatchObject({ outcome: 'kept', detail: expect.stringMatching(/shrank from \d+ to \d+ prefixes/) });
  });

  it('a feed that lost one range is taken (a normal change), and the range is gone', () => {
    const aws = JSON.parse((feeds.get('aws-ip-ranges.json') as { text: string }).text) as { prefixes: { ip_prefix: string; service: string }[] };
    const edited = { ...aws, prefixes: aws.prefixes.filter((p) => p.ip_prefix !== '3.224.0.0/12') };
    const result = buildRangesFile(withFeed('aws-ip-ranges.json', { text: JSON.stringify(edited), url: 'https://x' }), { previous, now: NOW });
    expect(result.providers.find((p) => p.provider === 'aws')!.outcome).toBe('updated');
    expect(overlap4(set('3.224.0.0/16'), category(data(result.file!), 'aws', 'EC2'))).toBe(0);
  });

  it('without previous data, a missing feed fails the build: nothing to write', () => {
    const missing = new Map(feeds);
    missing.delete('fastly-ip-ranges.json');
    const result = buildRangesFile(missing, { now: NOW });
    expect(result.file).toBeNull();
    expect(result.providers.find((p) => p.provider === 'fastly')).toMatchObject({ outcome: 'failed', detail: expect.stringMatching(/fastly-ip-ranges\.json is missing/) });
  });

  it('an Azure feed without the Exchange Online tag is refused (its mail ranges could not be taken out)', () => {
    const azure = JSON.parse((feeds.get('microsoft-azure-ip-ranges.json') as { text: string }).text) as { values: { name: string }[] };
    const stripped = { ...azure, values: azure.values.filter((v) => v.name !== 'EOPExternalPublishedIPs' && v.name !== 'Dynamics365ForMarketingEmail') };
    const result = buildRangesFile(withFeed('microsoft-azure-ip-ranges.json', { text: JSON.stringify(stripped), url: 'https://x' }), { previous, now: NOW });
    expect(result.providers.find((p) => p.provider === 'azure')).toMatchObject({ outcome: 'kept', detail: expect.stringMatching(/EOPExternalPublishedIPs/) });
  });
});

describe('the data file codec', () => {
  it.each([
    [4 as const, [[0n, 0n], [10n, 20n], [0xffffff00n, 0xffffffffn]] as [bigint, bigint][]],
    [16 as const, [[1n << 100n, (1n << 100n) + 5n], [(1n << 128n) - 1n, (1n << 128n) - 1n]] as [bigint, bigint][]],
  ])('round-trips %i-byte bounds', (bytes, intervals) => {
    expect(decodeIntervals(encodeIntervals(intervals, bytes), bytes)).toEqual(intervals);
  });

  it.each([
    ['a truncated interval', Buffer.from([0, 0, 0, 1, 0, 0]).toString('base64')],
    ['an interval that ends before it starts', Buffer.from([0, 0, 0, 9, 0, 0, 0, 1]).toString('base64')],
    ['unsorted intervals', Buffer.from([0, 0, 0, 9, 0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0, 2]).toString('base64')],
  ])('refuses %s', (_what, text) => {
    expect(decodeIntervals(text, 4)).toBeNull();
  });

  it.each([
    ['another format', { format: 'other' }, /"format"/],
    ['no date', { format: RANGES_FILE_FORMAT, generatedAt: 'x', sources: [], categories: [] }, /"date"/],
    ['an unknown provider', { format: RANGES_FILE_FORMAT, generatedAt: 'x', date: '2025-07-21', sources: [], categories: [{ provider: 'vultr', service: 'x', kind: 'rent', v4: '', v6: '' }] }, /names no known provider/],
    ['malformed ranges', { format: RANGES_FILE_FORMAT, generatedAt: 'x', date: '2025-07-21', sources: [], categories: [{ provider: 'aws', service: 'EC2', kind: 'rent', v4: 'AAA', v6: '' }] }, /malformed ranges/],
  ])('refuses a data file with %s', (_what, value, reason) => {
    const decoded = decodeRangesFile(value, 'test');
    expect(decoded.ok).toBe(false);
    if (!decoded.ok) expect(decoded.error).toMatch(reason);
  });
});
