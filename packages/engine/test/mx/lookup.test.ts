import { describe, expect, it } from 'vitest';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import type { DnsAnswer, DnsErrorReason } from '../../src/dns/types.js';
import { isIpLiteral, lookupMx, MAX_MX_HOSTS_RESOLVED } from '../../src/mx/lookup.js';
import type { ResourceRecord, Zone } from '../../src/zones/types.js';
import { InjectingResolver, SOA } from '../dkim/injecting-resolver.js';

const mx = (name: string, preference: number, exchange: string): ResourceRecord => ({ name, type: 'MX', ttl: 300, data: { preference, exchange } });
const a = (name: string, address: string): ResourceRecord => ({ name, type: 'A', ttl: 300, data: address });
const aaaa = (name: string, address: string): ResourceRecord => ({ name, type: 'AAAA', ttl: 300, data: address });
const zone = (origin: string, ...records: ResourceRecord[]): Zone => ({ origin, records: [{ name: origin, type: 'SOA', ttl: 3600, data: SOA }, ...records] });

const zones = new ZoneResolver([
  zone('google.com', a('smtp.google.com', '192.0.2.10'), aaaa('smtp.google.com', '2001:db8::10'), a('aspmx.l.google.com', '192.0.2.11')),
  zone('zoho.com', a('mx.zoho.com', '192.0.2.12')),
  zone('mimecast.com', a('us-smtp-inbound-1.mimecast.com', '192.0.2.13')),
  zone('outlook.com', a('contoso-example.mail.protection.outlook.com', '192.0.2.14')),
  zone('gws.example', mx('gws.example', 1, 'smtp.google.com')),
  zone('null.example', mx('null.example', 0, '')),
  zone('nullten.example', mx('nullten.example', 10, '')),
  zone('mixed.example', mx('mixed.example', 0, ''), mx('mixed.example', 10, 'mx.mixed.example'), a('mx.mixed.example', '192.0.2.20')),
  zone('literal.example', mx('literal.example', 10, '192.0.2.25'), mx('literal.example', 20, 'mx.literal.example'), a('mx.literal.example', '192.0.2.26')),
  zone(
    'cname.example',
    mx('cname.example', 10, 'mx.cname.example'),
    { name: 'mx.cname.example', type: 'CNAME', ttl: 300, data: 'real.cname.example' },
    a('real.cname.example', '192.0.2.30'),
  ),
  zone('dup.example', mx('dup.example', 10, 'mx1.dup.example'), mx('dup.example', 20, 'mx1.dup.example'), mx('dup.example', 30, 'mx2.dup.example'), a('mx1.dup.example', '192.0.2.40'), a('mx2.dup.example', '192.0.2.41')),
  zone(
    'unres.example',
    mx('unres.example', 10, 'gone.unres.example'),
    mx('unres.example', 20, 'noaddr.unres.example'),
    { name: 'noaddr.unres.example', type: 'TXT', ttl: 300, data: ['not an address'] },
  ),
  zone('sorted.example', mx('sorted.example', 20, 'b.sorted.example'), mx('sorted.example', 10, 'c.sorted.example'), mx('sorted.example', 10, 'a.sorted.example'), a('a.sorted.example', '192.0.2.50'), a('b.sorted.example', '192.0.2.51'), a('c.sorted.example', '192.0.2.52')),
  zone('two.example', mx('two.example', 10, 'aspmx.l.google.com'), mx('two.example', 10, 'mx.zoho.com')),
  zone('backup.example', mx('backup.example', 10, 'mail.backup.example'), mx('backup.example', 20, 'us-smtp-inbound-1.mimecast.com'), a('mail.backup.example', '192.0.2.60')),
  zone('m365.example', mx('m365.example', 0, 'contoso-example.mail.protection.outlook.com'), mx('m365.example', 10, 'mail.m365.example'), a('mail.m365.example', '192.0.2.61')),
  zone('v6.example', mx('v6.example', 10, 'mx.v6.example'), aaaa('mx.v6.example', '2001:db8::60')),
  zone('many.example', ...Array.from({ length: MAX_MX_HOSTS_RESOLVED + 2 }, (_, index) => mx('many.example', index, `mx${String(index).padStart(2, '0')}.many.example`))),
  zone('nomx.example'),
]);

const ids = (findings: { id: string }[]): string[] => findings.map((finding) => finding.id);

describe('lookupMx: records', () => {
  it('finds the hosts, their addresses and the provider', async () => {
    const analysis = await lookupMx('GWS.example.', zones);
    expect(analysis).toMatchObject({ domain: 'gws.example', status: 'found', provider: 'Google Workspace', providers: ['Google Workspace'] });
    expect(analysis.hosts).toEqual([
      {
        preference: 1,
        exchange: 'smtp.google.com',
        provider: 'Google Workspace',
        addresses: { status: 'resolved', ipv4: ['192.0.2.10'], ipv6: ['2001:db8::10'], failures: [], cnameTarget: null },
        problems: [],
      },
    ]);
    expect(ids(analysis.findings)).toEqual(['mx-provider']);
    expect(analysis.findings[0]).toMatchObject({ severity: 'info', title: 'Mail Handled by Google Workspace' });
  });

  it('sorts by preference, then by name (RFC 5321 §5.1)', async () => {
    const analysis = await lookupMx('sorted.example', zones);
    expect(analysis.hosts.map((host) => `${host.preference} ${host.exchange}`)).toEqual(['10 a.sorted.example', '10 c.sorted.example', '20 b.sorted.example']);
  });

  it('an IPv6-only host resolves', async () => {
    const analysis = await lookupMx('v6.example', zones);
    expect(analysis.hosts[0]?.addresses).toMatchObject({ status: 'resolved', ipv4: [], ipv6: ['2001:db8::60'] });
    expect(analysis.findings).toEqual([]);
  });
});

describe('lookupMx: null MX (RFC 7505)', () => {
  it('a single "0 ." → null-mx, no address lookups', async () => {
    const resolver = new InjectingResolver(zones);
    const analysis = await lookupMx('null.example', resolver);
    expect(analysis).toMatchObject({ status: 'null-mx', provider: null, providers: [] });
    expect(analysis.hosts).toEqual([{ preference: 0, exchange: '', provider: null, problems: [] }]);
    expect(ids(analysis.findings)).toEqual(['mx-null']);
    expect(analysis.findings[0]?.detail).toContain('This domain says it accepts no mail (RFC 7505');
    expect(resolver.calls).toEqual([{ name: 'null.example', type: 'MX' }]);
  });

  it('a null MX with a non-zero preference is still a null MX, with the problem noted', async () => {
    const analysis = await lookupMx('nullten.example', zones);
    expect(analysis.status).toBe('null-mx');
    expect(analysis.hosts[0]?.problems).toEqual(['A null MX should have preference 0, not 10 (RFC 7505 §3).']);
  });

  it('a null MX mixed with other MX records → found, with mx-null-mixed', async () => {
    const analysis = await lookupMx('mixed.example', zones);
    expect(analysis.status).toBe('found');
    expect(ids(analysis.findings)).toEqual(['mx-null-mixed']);
    expect(analysis.findings[0]?.severity).toBe('warning');
    expect(analysis.hosts[0]).toMatchObject({ exchange: '', problems: ['A null MX must be the only MX record of the domain (RFC 7505 §3).'] });
    expect(analysis.hosts[1]?.addresses?.status).toBe('resolved');
  });
});

describe('lookupMx: host problems', () => {
  it('an IP literal → mx-ip-literal, and it is not looked up as a name', async () => {
    const resolver = new InjectingResolver(zones);
    const analysis = await lookupMx('literal.example', resolver);
    expect(ids(analysis.findings)).toEqual(['mx-ip-literal']);
    expect(analysis.hosts[0]).toMatchObject({ exchange: '192.0.2.25', problems: ['An MX must name a host, not an IP address (RFC 1035 §3.3.9, RFC 5321 §5.1).'] });
    expect(analysis.hosts[0]?.addresses).toBeUndefined();
    expect(resolver.calls.some((call) => call.name === '192.0.2.25')).toBe(false);
  });

  it('a host that is a CNAME → mx-cname (RFC 2181 §10.3), still resolved', async () => {
    const analysis = await lookupMx('cname.example', zones);
    expect(ids(analysis.findings)).toEqual(['mx-cname']);
    expect(analysis.hosts[0]?.addresses).toMatchObject({ status: 'resolved', ipv4: ['192.0.2.30'], cnameTarget: 'real.cname.example' });
    expect(analysis.hosts[0]?.problems[0]).toContain('alias (CNAME) of real.cname.example');
  });

  it('the same host twice → mx-duplicate, looked up once', async () => {
    const resolver = new InjectingResolver(zones);
    const analysis = await lookupMx('dup.example', resolver);
    expect(ids(analysis.findings)).toEqual(['mx-duplicate']);
    expect(analysis.hosts.map((host) => host.problems)).toEqual([[], ['This host is listed more than once (also at preference 10).'], []]);
    expect(resolver.names('A')).toEqual(['mx1.dup.example', 'mx2.dup.example']);
    expect(analysis.hosts[1]?.addresses?.ipv4).toEqual(['192.0.2.40']);
  });

  it('hosts that do not resolve (NXDOMAIN, NODATA) → mx-host-unresolvable each', async () => {
    const analysis = await lookupMx('unres.example', zones);
    expect(ids(analysis.findings)).toEqual(['mx-host-unresolvable', 'mx-host-unresolvable']);
    expect(analysis.hosts.map((host) => host.addresses?.absence)).toEqual(['nxdomain', 'nodata']);
    expect(analysis.hosts.map((host) => host.problems)).toEqual([['This host does not resolve: the name does not exist.'], ['This host does not resolve: the name has no A or AAAA record.']]);
  });

  it.each<[DnsErrorReason]>([['servfail'], ['timeout']])('address lookups failing with %s → mx-host-temperror, not "unresolvable"', async (reason) => {
    const failure: DnsAnswer = { kind: 'error', reason };
    const resolver = new InjectingResolver(zones, [{ name: 'smtp.google.com', type: 'A', answer: failure }, { name: 'smtp.google.com', type: 'AAAA', answer: failure }]);
    const analysis = await lookupMx('gws.example', resolver);
    expect(analysis.status).toBe('found');
    expect(analysis.hosts[0]?.addresses).toMatchObject({ status: 'temperror', failures: [{ type: 'A', reason }, { type: 'AAAA', reason }] });
    expect(ids(analysis.findings)).toEqual(['mx-host-temperror', 'mx-provider']);
  });

  it('one family failing while the other resolves → resolved, failure kept', async () => {
    const resolver = new InjectingResolver(zones, [{ name: 'smtp.google.com', type: 'AAAA', answer: { kind: 'error', reason: 'timeout' } }]);
    const analysis = await lookupMx('gws.example', resolver);
    expect(analysis.hosts[0]?.addresses).toMatchObject({ status: 'resolved', ipv4: ['192.0.2.10'], ipv6: [], failures: [{ type: 'AAAA', reason: 'timeout' }] });
    expect(ids(analysis.findings)).toEqual(['mx-provider']);
  });

  it('resolveHosts: false → no address lookups at all', async () => {
    const resolver = new InjectingResolver(zones);
    const analysis = await lookupMx('unres.example', resolver, { resolveHosts: false });
    expect(resolver.calls).toEqual([{ name: 'unres.example', type: 'MX' }]);
    expect(analysis.hosts.every((host) => host.addresses === undefined)).toBe(true);
    expect(analysis.findings).toEqual([]);
  });

  it(`resolves at most ${MAX_MX_HOSTS_RESOLVED} distinct hosts`, async () => {
    const resolver = new InjectingResolver(zones);
    const analysis = await lookupMx('many.example', resolver);
    expect(new Set(resolver.names('A')).size).toBe(MAX_MX_HOSTS_RESOLVED);
    expect(analysis.hosts.filter((host) => host.addresses !== undefined)).toHaveLength(MAX_MX_HOSTS_RESOLVED);
    expect(analysis.hosts.at(-1)?.addresses).toBeUndefined();
  });
});

describe('lookupMx: provider of the domain', () => {
  it.each<[string, string | null, string[], string]>([
    ['two.example', 'Google Workspace + Zoho Mail', ['Google Workspace', 'Zoho Mail'], 'equal preference, two providers: both, in host order'],
    ['backup.example', null, ['Mimecast'], 'the most preferred host is self-hosted; the backup is listed in providers'],
    ['m365.example', 'Microsoft 365', ['Microsoft 365'], 'the most preferred host decides'],
  ])('%s → %s (%s)', async (domain, provider, providers) => {
    const analysis = await lookupMx(domain, zones);
    expect(analysis.provider).toBe(provider);
    expect(analysis.providers).toEqual(providers);
  });
});

describe('lookupMx: the MX lookup itself', () => {
  it('NXDOMAIN → none, mx-missing saying the domain does not exist', async () => {
    const analysis = await lookupMx('absent.example', zones);
    expect(analysis).toMatchObject({ status: 'none', absence: 'nxdomain', hosts: [], provider: null });
    expect(ids(analysis.findings)).toEqual(['mx-missing']);
    expect(analysis.findings[0]?.detail).toContain('does not exist (NXDOMAIN)');
  });

  it('NODATA → none, mx-missing', async () => {
    const analysis = await lookupMx('nomx.example', zones);
    expect(analysis).toMatchObject({ status: 'none', absence: 'nodata' });
    expect(analysis.findings[0]).toMatchObject({ id: 'mx-missing', severity: 'info' });
    expect(analysis.findings[0]?.detail).toContain('publishes no MX record');
  });

  it.each<[DnsErrorReason]>([['servfail'], ['timeout'], ['refused'], ['budget']])('%s → temperror with the failed query, never "none"', async (reason) => {
    const resolver = new InjectingResolver(zones, [{ name: 'gws.example', type: 'MX', answer: { kind: 'error', reason, detail: 'injected' } }]);
    const analysis = await lookupMx('gws.example', resolver);
    expect(analysis).toMatchObject({ status: 'temperror', hosts: [], provider: null, failedQuery: { name: 'gws.example', type: 'MX', reason, detail: 'injected' } });
    expect(ids(analysis.findings)).toEqual(['mx-temperror']);
    expect(analysis.findings[0]?.detail).toContain('not the same as having no MX');
  });
});

describe('isIpLiteral', () => {
  it.each<[string, boolean]>([
    ['192.0.2.1', true],
    ['[192.0.2.1]', true],
    ['2001:db8::1', true],
    ['[ipv6:2001:db8::1]', true],
    ['mx.example.com', false],
    ['192.0.2.mail.example', false],
    ['1.2.3', false],
  ])('%s → %s', (exchange, literal) => {
    expect(isIpLiteral(exchange)).toBe(literal);
  });
});
