/**
 * The feed parsers, table-driven: each provider's official format, what is kept, the date, and the
 * refusals (not the format, a prefix that is not a CIDR), which keep a broken download out.
 */
import { describe, expect, it } from 'vitest';
import { parseCidr, parseFeed } from '../../src/ranges/parse.js';
import type { FeedFormat } from '../../src/ranges/types.js';

const v4 = (a: string, b: string) => ({ family: 4, start: BigInt(ip4(a)), end: BigInt(ip4(b)) });
function ip4(text: string): number {
  return text.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

describe('parseCidr', () => {
  it.each([
    ['3.224.0.0/16', v4('3.224.0.0', '3.224.255.255')],
    ['3.224.10.20', v4('3.224.10.20', '3.224.10.20')],
    ['3.224.10.20/32', v4('3.224.10.20', '3.224.10.20')],
    // Host bits below the prefix are ignored (RFC 4632 §3.1), as some feeds set them.
    ['3.224.10.20/16', v4('3.224.0.0', '3.224.255.255')],
    ['0.0.0.0/0', v4('0.0.0.0', '255.255.255.255')],
    ['2600:1f18::/33', { family: 6, start: 0x26001f18n << 96n, end: (0x26001f18n << 96n) + (1n << 95n) - 1n }],
    ['::/0', { family: 6, start: 0n, end: (1n << 128n) - 1n }],
  ])('%s', (text, expected) => {
    expect(parseCidr(text)).toEqual(expected);
  });

  it.each(['3.224.0.0/33', '3.224.0/16', '2600::/129', 'x/8', '3.224.0.0/', '3.224.0.0/-1', '3.224.0.0/1a', ''])('refuses %j', (text) => {
    expect(parseCidr(text)).toBeNull();
  });
});

/** One row: a format, a feed text, what it keeps (service and CIDR text) and the date it reads. */
const ACCEPTED: [what: string, format: FeedFormat, text: string, prefixes: [service: string, first: string][], date: string | null][] = [
  [
    'AWS ip-ranges.json: IPv4 and IPv6, each with its service',
    'aws-json',
    JSON.stringify({
      createDate: '2025-07-24-20-23-14',
      prefixes: [{ ip_prefix: '3.224.0.0/12', region: 'us-east-1', service: 'EC2' }, { ip_prefix: '54.240.0.0/18', region: 'us-east-1', service: 'AMAZON' }],
      ipv6_prefixes: [{ ipv6_prefix: '2600:1f18::/32', region: 'us-east-1', service: 'EC2' }],
    }),
    [['EC2', '3.224.0.0'], ['AMAZON', '54.240.0.0'], ['EC2', '2600:1f18::']],
    '2025-07-24',
  ],
  [
    'Google cloud.json: ipv4Prefix or ipv6Prefix',
    'google-cloud-json',
    JSON.stringify({ creationTime: '2025-07-24T19:16:28.780563', prefixes: [{ ipv4Prefix: '34.64.0.0/16', service: 'Google Cloud', scope: 'asia-northeast3' }, { ipv6Prefix: '2600:1900::/35', service: 'Google Cloud', scope: 'us-central1' }] }),
    [['Google Cloud', '34.64.0.0'], ['Google Cloud', '2600:1900::']],
    '2025-07-24',
  ],
  [
    'Azure service tags: every tag with its prefixes, no date (a change number)',
    'azure-service-tags-json',
    JSON.stringify({ changeNumber: 363, cloud: 'Public', values: [{ name: 'AzureCloud', properties: { addressPrefixes: ['4.148.0.0/16'] } }, { name: 'EOPExternalPublishedIPs', properties: { addressPrefixes: ['40.107.0.0/16', '2a01:111:f400::/48'] } }] }),
    [['AzureCloud', '4.148.0.0'], ['EOPExternalPublishedIPs', '40.107.0.0'], ['EOPExternalPublishedIPs', '2a01:111:f400::']],
    null,
  ],
  [
    'Oracle public_ip_ranges.json: regions, CIDRs, one entry per tag',
    'oracle-json',
    JSON.stringify({ last_updated_timestamp: '2025-07-21T07:13:25.457838', regions: [{ region: 'us-ashburn-1', cidrs: [{ cidr: '129.80.0.0/16', tags: ['OCI', 'OSN'] }] }] }),
    [['OCI', '129.80.0.0'], ['OSN', '129.80.0.0']],
    '2025-07-21',
  ],
  [
    'RFC 8805 geofeed (DigitalOcean): prefix first, no comments',
    'geofeed-csv',
    '5.101.96.0/21,NL,NL-NH,Amsterdam,1098 XH\r\n2a03:b0c0::/32,NL,NL-NH,Amsterdam,\n',
    [['*', '5.101.96.0'], ['*', '2a03:b0c0::']],
    null,
  ],
  [
    'RFC 8805 geofeed with # comments and a last-modified line (Linode)',
    'geofeed-csv',
    '# self-published geofeed\n# Last modified: 2025-07-24 10:00:06.525037\n# ip_prefix, alpha2code\n\n2600:3c00::/32,US,US-TX,Richardson,\n45.33.0.0/17,US,US-CA,Fremont,\n',
    [['*', '2600:3c00::'], ['*', '45.33.0.0']],
    '2025-07-24',
  ],
  [
    'one CIDR a line (Cloudflare, Akamai), tabs and no final newline',
    'cidr-lines',
    '173.245.48.0/20\n103.21.244.0/22\t\n\n2400:cb00::/32',
    [['*', '173.245.48.0'], ['*', '103.21.244.0'], ['*', '2400:cb00::']],
    null,
  ],
  [
    'Fastly public-ip-list: addresses and ipv6_addresses',
    'fastly-json',
    JSON.stringify({ addresses: ['151.101.0.0/16'], ipv6_addresses: ['2a04:4e40::/32'] }),
    [['*', '151.101.0.0'], ['*', '2a04:4e40::']],
    null,
  ],
  [
    'GitHub meta: one list per service, other keys skipped',
    'github-meta-json',
    JSON.stringify({ verifiable_password_authentication: false, ssh_keys: ['ssh-ed25519 AAAA'], hooks: ['192.30.252.0/22'], actions: ['4.148.0.0/16'], domains: { website: ['*.github.com'] } }),
    [['hooks', '192.30.252.0'], ['actions', '4.148.0.0']],
    null,
  ],
];

describe('parseFeed accepts each official format', () => {
  it.each(ACCEPTED)('%s', (_what, format, text, prefixes, date) => {
    const parsed = parseFeed(format, text);
    if (!parsed.ok) throw new Error(parsed.error);
    expect(parsed.date).toBe(date);
    expect(parsed.prefixes.map((p) => [p.service, formatStart(p.cidr.family, p.cidr.start)])).toEqual(prefixes);
  });
});

function formatStart(family: 4 | 6, start: bigint): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((s) => String((start >> s) & 255n)).join('.');
  const groups = Array.from({ length: 8 }, (_, i) => ((start >> BigInt(112 - 16 * i)) & 0xffffn).toString(16));
  return groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::').replace(/^0::/, '::');
}

const REFUSED: [what: string, format: FeedFormat, text: string, reason: RegExp][] = [
  ['AWS: not JSON (an HTML error page)', 'aws-json', '<html>503</html>', /not valid JSON/],
  ['AWS: no prefixes list', 'aws-json', '{"createDate":"2025-07-24"}', /prefixes is not an array/],
  ['AWS: a prefix that is not a CIDR', 'aws-json', JSON.stringify({ prefixes: [{ ip_prefix: '3.224.0.0/99', service: 'EC2' }], ipv6_prefixes: [] }), /prefixes\[0\]\.ip_prefix is not an address block/],
  ['Google: an entry with no prefix', 'google-cloud-json', JSON.stringify({ prefixes: [{ service: 'Google Cloud' }] }), /prefixes\[0\] prefix is not a string/],
  ['Azure: properties missing', 'azure-service-tags-json', JSON.stringify({ values: [{ name: 'AzureCloud' }] }), /properties is not an object/],
  ['Oracle: tags not a list', 'oracle-json', JSON.stringify({ regions: [{ cidrs: [{ cidr: '129.80.0.0/16', tags: 'OCI' }] }] }), /tags is not an array/],
  ['geofeed: a line that is not a prefix', 'geofeed-csv', '5.101.96.0/21,NL\nAmsterdam,NL\n', /line 2 is not an address block/],
  ['geofeed: nothing but comments', 'geofeed-csv', '# empty\n', /no prefixes/],
  ['CIDR lines: an HTML page', 'cidr-lines', '<!doctype html>\n<p>moved</p>', /line 1 is not an address block/],
  ['Fastly: no ipv6_addresses', 'fastly-json', '{"addresses":["151.101.0.0/16"]}', /ipv6_addresses is not an array/],
  ['GitHub: no actions list', 'github-meta-json', '{"hooks":["192.30.252.0/22"]}', /no "actions" list/],
  // Implausible feeds: a block wider than any provider holds, a date present that is not a day.
  ['AWS: 0.0.0.0/0 filed as EC2', 'aws-json', JSON.stringify({ createDate: '2025-07-24-20-23-14', prefixes: [{ ip_prefix: '0.0.0.0/0', service: 'EC2' }], ipv6_prefixes: [] }), /prefixes\[0\]\.ip_prefix is "0\.0\.0\.0\/0", wider than any provider holds \(the widest plausible IPv4 block is a \/8\)/],
  ['AWS: ::/0 filed as EC2', 'aws-json', JSON.stringify({ createDate: '2025-07-24-20-23-14', prefixes: [], ipv6_prefixes: [{ ipv6_prefix: '::/0', service: 'EC2' }] }), /wider than any provider holds \(the widest plausible IPv6 block is a \/16\)/],
  ['AWS: a /7 (just wider than a /8)', 'aws-json', JSON.stringify({ prefixes: [{ ip_prefix: '2.0.0.0/7', service: 'EC2' }], ipv6_prefixes: [] }), /wider than any provider holds/],
  ['Cloudflare: 2000::/3', 'cidr-lines', '2000::/3\n', /line 1 is "2000::\/3", wider than any provider holds/],
  ['AWS: createDate 0000-00-00', 'aws-json', JSON.stringify({ createDate: '0000-00-00', prefixes: [], ipv6_prefixes: [] }), /createDate is "0000-00-00", not a date/],
  ['AWS: createDate 2025-02-30', 'aws-json', JSON.stringify({ createDate: '2025-02-30-00-00-00', prefixes: [], ipv6_prefixes: [] }), /createDate is "2025-02-30-00-00-00", not a date/],
  ['AWS: createDate a number', 'aws-json', JSON.stringify({ createDate: 20250724, prefixes: [], ipv6_prefixes: [] }), /createDate is 20250724, not a date/],
  ['Google: creationTime empty', 'google-cloud-json', JSON.stringify({ creationTime: '', prefixes: [] }), /creationTime is "", not a date/],
  ['Oracle: last_updated_timestamp garbage', 'oracle-json', JSON.stringify({ last_updated_timestamp: 'yesterday', regions: [] }), /last_updated_timestamp is "yesterday", not a date/],
  ['geofeed: a last-modified line that is not a date', 'geofeed-csv', '# Last modified: 0000-00-00\n45.33.0.0/17,US\n', /line 1 \("last modified"\) is "0000-00-00", not a date/],
];

describe('the widest plausible blocks are accepted', () => {
  it.each([
    ['aws-json', JSON.stringify({ prefixes: [{ ip_prefix: '3.0.0.0/8', service: 'EC2' }], ipv6_prefixes: [{ ipv6_prefix: '2600::/16', service: 'EC2' }] })],
    ['cidr-lines', '104.64.0.0/10\n2600:1400::/24\n'],
  ] as [FeedFormat, string][])('%s', (format, text) => {
    const parsed = parseFeed(format, text);
    expect(parsed).toMatchObject({ ok: true, date: null });
  });
});

describe('parseFeed refuses what is not its format', () => {
  it.each(REFUSED)('%s', (_what, format, text, reason) => {
    const parsed = parseFeed(format, text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toMatch(reason);
  });
});
