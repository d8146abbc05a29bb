import { describe, expect, it } from 'vitest';
import { discoverDmarc, findOrganizationalDomain } from '../../src/dmarc/discover.js';
import type { DnsErrorReason } from '../../src/dns/types.js';
import { a, cname, recording, TestResolver, dns, txt } from './helpers.js';

const ids = (findings: { id: string }[]) => findings.map((finding) => finding.id);

describe('discoverDmarc: record selection (cases.md §1)', () => {
  it('V13: a DMARC record next to an unrelated TXT record is used; the other is ignored', async () => {
    const resolver = recording(txt('_dmarc.example.com', 'v=DMARC1; p=none;'), txt('_dmarc.example.com', 'other'));
    const discovery = await discoverDmarc('example.com', resolver);
    expect(discovery).toMatchObject({ status: 'found', foundAt: '_dmarc.example.com', rawRecord: 'v=DMARC1; p=none;', record: { policy: 'none' } });
    expect(discovery.walk[0]).toMatchObject({ outcome: 'record', dmarcRecords: 1, ignored: [{ raw: 'other', reason: 'no-version' }] });
    expect(ids(discovery.findings)).not.toContain('dmarc-syntax');
  });

  it.each([
    ['V14a', ['v=DMARC1; p=none;', 'v=DMARC1; p=none;']],
    ['V14b', ['v=DMARC1; p=reject', 'v=DMARC1; p=none']],
  ])('%s: several DMARC records at one name give no policy and a critical finding', async (_id, records) => {
    const resolver = recording(...records.map((record) => txt('_dmarc.example.com', record)));
    const discovery = await discoverDmarc('example.com', resolver);
    expect(discovery).toMatchObject({ status: 'multiple', record: null, rawRecord: null, foundAt: null });
    const multiple = discovery.findings.find((finding) => finding.id === 'dmarc-multiple');
    expect(multiple).toMatchObject({ severity: 'critical' });
    expect(multiple?.detail).toContain('RFC 7489 §6.6.3');
    expect(multiple?.detail).toContain('RFC 9989');
  });

  it('V15: only non-DMARC TXT at the name: they are discarded and the organizational domain record applies', async () => {
    const resolver = recording(
      txt('_dmarc.sub.example.com', 'some other txt record'),
      txt('_dmarc.sub.example.com', 'and another one'),
      txt('_dmarc.example.com', 'v=DMARC1; p=quarantine'),
      a('sub.example.com'),
    );
    const discovery = await discoverDmarc('sub.example.com', resolver);
    expect(discovery).toMatchObject({ status: 'found', foundAt: '_dmarc.example.com', policyDomain: 'example.com', policySource: 'organizational-domain', record: { policy: 'quarantine' } });
  });

  it('V16: character-strings are joined without separator', async () => {
    const discovery = await discoverDmarc('example.com', recording(txt('_dmarc.example.com', 'v=DMARC1; p=re', 'ject')));
    expect(discovery).toMatchObject({ status: 'found', rawRecord: 'v=DMARC1; p=reject', record: { policy: 'reject' } });
  });

  it.each([
    ['v=dmarc1; p=reject', 'upper case'],
    [' v=DMARC1; p=reject', 'starts with whitespace'],
    ['v=DMARC1 p=reject', 'not followed by ";"'],
    ['p=reject; v=DMARC1', 'not the first tag'],
  ])('a look-alike record "%s" is ignored, with a finding saying why (%s)', async (record, why) => {
    const discovery = await discoverDmarc('example.com', recording(txt('_dmarc.example.com', record)));
    expect(discovery.status).toBe('none');
    const syntax = discovery.findings.find((finding) => finding.id === 'dmarc-syntax');
    expect(syntax?.detail).toContain(why);
  });

  it('does not report an unrelated TXT record at _dmarc as a look-alike', async () => {
    const discovery = await discoverDmarc('example.com', recording(txt('_dmarc.example.com', 'v=spf1 -all')));
    expect(discovery).toMatchObject({ status: 'none', findings: [] });
  });
});

describe('discoverDmarc: RFC 7489-style discovery (cases.md §9)', () => {
  it('D1: record at the name itself', async () => {
    const resolver = recording(txt('_dmarc.simple.example', 'v=DMARC1; p=none;'));
    const discovery = await discoverDmarc('simple.example', resolver);
    expect(discovery).toMatchObject({ status: 'found', foundAt: '_dmarc.simple.example', policyDomain: 'simple.example', policySource: 'author-domain', record: { policy: 'none' } });
  });

  it('D2: no record anywhere: none, after walking to the TLD', async () => {
    const resolver = recording();
    const discovery = await discoverDmarc('absent.example', resolver);
    expect(discovery).toMatchObject({ status: 'none', record: null, organizationalDomain: 'absent.example', pslOrganizationalDomain: 'absent.example', findings: [] });
    expect(discovery.queries).toEqual(['_dmarc.absent.example', '_dmarc.example']);
    expect(resolver.names()).toEqual(discovery.queries);
    expect(discovery.walk.map((step) => step.answer)).toEqual(['nxdomain', 'nxdomain']);
  });

  it('D3: two DMARC records: multiple', async () => {
    const resolver = recording(txt('_dmarc.multiple.example', 'v=DMARC1; p=none'), txt('_dmarc.multiple.example', 'v=DMARC1; p=reject'));
    expect((await discoverDmarc('multiple.example', resolver)).status).toBe('multiple');
  });

  it('D4: a timeout is a temperror, never "no DMARC"', async () => {
    const resolver = recording().fail('_dmarc.temperror.example', 'timeout');
    const discovery = await discoverDmarc('temperror.example', resolver);
    expect(discovery).toMatchObject({ status: 'temperror', record: null, failedQuery: { name: '_dmarc.temperror.example', type: 'TXT', reason: 'timeout' } });
    expect(discovery.queries).toEqual(['_dmarc.temperror.example']);
    const temperror = discovery.findings.find((finding) => finding.id === 'dmarc-temperror');
    expect(temperror?.detail).toContain('timed out');
    expect(temperror?.detail).toContain('not the same as a missing record');
  });

  it('D4b: REFUSED at the public suffix (an authoritative server without the TLD zone) reads as no record there', async () => {
    const resolver = recording(txt('_dmarc.owner.test', 'v=DMARC1; p=reject')).fail('_dmarc.test', 'refused');
    const discovery = await discoverDmarc('www.owner.test', resolver);
    expect(discovery).toMatchObject({ status: 'found', foundAt: '_dmarc.owner.test', organizationalDomain: 'owner.test' });
    expect(discovery.walk.at(-1)).toMatchObject({ name: '_dmarc.test', outcome: 'none', answer: 'error' });
  });

  it.each([
    ['refused at the registrable domain', '_dmarc.owner.test', 'refused'],
    ['servfail at the public suffix', '_dmarc.test', 'servfail'],
    ['a timeout at the public suffix', '_dmarc.test', 'timeout'],
  ] as [string, string, DnsErrorReason][])('D4c: any other failure is still a temperror: %s', async (_what, name, reason) => {
    const resolver = recording(txt('_dmarc.owner.test', 'v=DMARC1; p=reject')).fail(name, reason);
    expect(await discoverDmarc('www.owner.test', resolver)).toMatchObject({ status: 'temperror', failedQuery: { name, reason } });
  });

  it('D5: a subdomain without a record gets the organizational domain record', async () => {
    const resolver = recording(txt('_dmarc.example.com', 'v=DMARC1; p=none;'));
    const discovery = await discoverDmarc('sub.example.com', resolver);
    expect(discovery).toMatchObject({ status: 'found', foundAt: '_dmarc.example.com', policySource: 'organizational-domain', organizationalDomain: 'example.com' });
  });

  it('D6: several records at the name: no policy and no fallback (our deliberate choice), the finding names the fallback RFC 9989 receivers may use', async () => {
    const resolver = recording(
      txt('_dmarc.mail.example.com', 'v=DMARC1; p=reject'),
      txt('_dmarc.mail.example.com', 'v=DMARC1; p=none'),
      txt('_dmarc.example.com', 'v=DMARC1; p=none'),
    );
    const discovery = await discoverDmarc('mail.example.com', resolver);
    expect(discovery).toMatchObject({ status: 'multiple', record: null, organizationalDomain: 'example.com' });
    expect(discovery.findings.find((finding) => finding.id === 'dmarc-multiple')?.detail).toContain('_dmarc.example.com');
  });

  it('D7: the name\'s own record wins over the organizational domain record', async () => {
    const resolver = recording(txt('_dmarc.mail.example.com', 'v=DMARC1; p=reject'), txt('_dmarc.example.com', 'v=DMARC1; p=none'));
    const discovery = await discoverDmarc('mail.example.com', resolver);
    expect(discovery).toMatchObject({ status: 'found', foundAt: '_dmarc.mail.example.com', policySource: 'author-domain', record: { policy: 'reject' }, organizationalDomain: 'example.com' });
  });

  it('multiple records at the organizational domain leave a subdomain with no policy', async () => {
    const resolver = recording(txt('_dmarc.example.com', 'v=DMARC1; p=reject'), txt('_dmarc.example.com', 'v=DMARC1; p=none'));
    const discovery = await discoverDmarc('www.example.com', resolver);
    expect(discovery).toMatchObject({ status: 'multiple', record: null });
    expect(ids(discovery.findings)).toContain('dmarc-multiple');
  });
});

describe('discoverDmarc: RFC 9989 DNS tree walk (cases.md §10)', () => {
  it('TW1: a 13-label name makes exactly these eight queries, in order', async () => {
    const resolver = recording(txt('_dmarc.example.com', 'v=DMARC1; p=none'));
    const discovery = await discoverDmarc('a.b.c.d.e.f.g.h.i.j.k.example.com', resolver);
    const expected = [
      '_dmarc.a.b.c.d.e.f.g.h.i.j.k.example.com',
      '_dmarc.g.h.i.j.k.example.com',
      '_dmarc.h.i.j.k.example.com',
      '_dmarc.i.j.k.example.com',
      '_dmarc.j.k.example.com',
      '_dmarc.k.example.com',
      '_dmarc.example.com',
      '_dmarc.com',
    ];
    expect(resolver.names()).toEqual(expected);
    expect(discovery.queries).toEqual(expected);
    expect(discovery).toMatchObject({ status: 'found', foundAt: '_dmarc.example.com', organizationalDomain: 'example.com' });
  });

  it('TW2: a 12-label name with nothing published still stops at eight queries', async () => {
    const resolver = recording();
    const discovery = await discoverDmarc('a.b.c.d.e.f.g.h.i.j.mail.example.com', resolver);
    expect(resolver.calls).toHaveLength(8);
    expect(resolver.names()).toEqual([
      '_dmarc.a.b.c.d.e.f.g.h.i.j.mail.example.com',
      '_dmarc.g.h.i.j.mail.example.com',
      '_dmarc.h.i.j.mail.example.com',
      '_dmarc.i.j.mail.example.com',
      '_dmarc.j.mail.example.com',
      '_dmarc.mail.example.com',
      '_dmarc.example.com',
      '_dmarc.com',
    ]);
    expect(discovery.status).toBe('none');
  });

  it('caps a 40-label name at eight queries', async () => {
    const resolver = recording(txt('_dmarc.example.com', 'v=DMARC1; p=reject'));
    const deep = `${Array.from({ length: 38 }, (_, index) => `x${index}`).join('.')}.example.com`;
    const discovery = await discoverDmarc(deep, resolver);
    expect(resolver.calls.length).toBe(8);
    expect(discovery.status).toBe('found');
  });

  it('a record at the long name itself is always found (RFC 9989 §5.1.8), and the walk still runs for the organizational domain', async () => {
    const resolver = recording(txt('_dmarc.a.b.c.d.e.f.g.h.i.example.com', 'v=DMARC1; p=reject'), txt('_dmarc.example.com', 'v=DMARC1; p=none'));
    const discovery = await discoverDmarc('a.b.c.d.e.f.g.h.i.example.com', resolver);
    expect(discovery).toMatchObject({ status: 'found', policySource: 'author-domain', record: { policy: 'reject' }, organizationalDomain: 'example.com' });
    expect(resolver.calls).toHaveLength(8);
  });

  it('the shortcut skips a psd=n record between the long name and its rightmost seven labels (RFC 9989 §5.1.8)', async () => {
    const resolver = recording(txt('_dmarc.b.c.d.e.f.g.example.com', 'v=DMARC1; p=reject; psd=n'), txt('_dmarc.example.com', 'v=DMARC1; p=none'));
    const discovery = await discoverDmarc('mail.a.b.c.d.e.f.g.example.com', resolver);
    expect(resolver.names()).not.toContain('_dmarc.b.c.d.e.f.g.example.com');
    expect(discovery).toMatchObject({ status: 'found', foundAt: '_dmarc.example.com', record: { policy: 'none' } });
  });

  it('TW6: a PSD record (psd=y) stops the walk; the name\'s own record applies', async () => {
    const resolver = recording(
      txt('_dmarc.bank.example', 'v=DMARC1; p=reject; psd=y; rua=mailto:psd@bank.example'),
      txt('_dmarc.giant.bank.example', 'v=DMARC1; p=quarantine'),
    );
    const discovery = await discoverDmarc('giant.bank.example', resolver);
    expect(resolver.names()).toEqual(['_dmarc.giant.bank.example', '_dmarc.bank.example']);
    expect(discovery).toMatchObject({ status: 'found', policyDomain: 'giant.bank.example', record: { policy: 'quarantine' }, organizationalDomain: 'giant.bank.example' });
  });

  it('TW7: records at mail.example.com and example.com: the organizational domain is example.com and its record applies', async () => {
    const resolver = recording(txt('_dmarc.mail.example.com', 'v=DMARC1; p=none'), txt('_dmarc.example.com', 'v=DMARC1; p=reject'));
    const discovery = await discoverDmarc('a.mail.example.com', resolver);
    expect(resolver.names()).toEqual(['_dmarc.a.mail.example.com', '_dmarc.mail.example.com', '_dmarc.example.com', '_dmarc.com']);
    expect(discovery).toMatchObject({ organizationalDomain: 'example.com', foundAt: '_dmarc.example.com', record: { policy: 'reject' } });
  });

  it('TW8: psd=n at mail.example.com stops the walk and makes it the organizational domain', async () => {
    const resolver = recording(txt('_dmarc.mail.example.com', 'v=DMARC1; p=quarantine; psd=n'), txt('_dmarc.example.com', 'v=DMARC1; p=none'));
    const discovery = await discoverDmarc('a.mail.example.com', resolver);
    expect(resolver.names()).toEqual(['_dmarc.a.mail.example.com', '_dmarc.mail.example.com']);
    expect(discovery).toMatchObject({ organizationalDomain: 'mail.example.com', pslOrganizationalDomain: 'example.com', foundAt: '_dmarc.mail.example.com', policySource: 'organizational-domain' });
    expect(ids(discovery.findings)).toContain('dmarc-org-domain-mismatch');
  });

  it('TW9: only the TLD has a psd=y record: the organizational domain is one below it and the PSD policy applies', async () => {
    const resolver = recording(txt('_dmarc.com', 'v=DMARC1; p=reject; psd=y'));
    const discovery = await discoverDmarc('a.mail.example.com', resolver);
    expect(discovery).toMatchObject({ status: 'found', organizationalDomain: 'example.com', foundAt: '_dmarc.com', policySource: 'public-suffix-domain' });
  });

  it('TW10: psd=n at b.example.com: its record applies to a.b.example.com, not example.com\'s', async () => {
    const resolver = recording(txt('_dmarc.b.example.com', 'v=DMARC1; p=reject; psd=n'), txt('_dmarc.example.com', 'v=DMARC1; p=none'));
    const discovery = await discoverDmarc('a.b.example.com', resolver);
    expect(discovery).toMatchObject({ status: 'found', foundAt: '_dmarc.b.example.com', organizationalDomain: 'b.example.com', record: { policy: 'reject' } });
    expect(resolver.names()).toEqual(['_dmarc.a.b.example.com', '_dmarc.b.example.com']);
  });

  it('TW11: an organizational domain\'s own record is never overridden by the PSD record', async () => {
    const resolver = recording(txt('_dmarc.example', 'v=DMARC1; p=reject; psd=y; rua=mailto:psd@example'), txt('_dmarc.foo.example', 'v=DMARC1; p=none'));
    const discovery = await discoverDmarc('foo.example', resolver);
    expect(discovery).toMatchObject({ foundAt: '_dmarc.foo.example', policySource: 'author-domain', record: { policy: 'none' }, organizationalDomain: 'foo.example' });
  });

  it('TW12: a psd=y record at the start: the walk stops there and the name is its own organizational domain', async () => {
    const resolver = recording(txt('_dmarc.bank.example', 'v=DMARC1; p=reject; psd=y'));
    const discovery = await discoverDmarc('bank.example', resolver);
    expect(resolver.names()).toEqual(['_dmarc.bank.example']);
    expect(discovery).toMatchObject({ organizationalDomain: 'bank.example', policySource: 'author-domain' });
  });

  it('TW13: nothing anywhere: the walk includes the TLD, then no DMARC', async () => {
    const resolver = recording();
    const discovery = await discoverDmarc('sub.example.com', resolver);
    expect(resolver.names()).toEqual(['_dmarc.sub.example.com', '_dmarc.example.com', '_dmarc.com']);
    expect(discovery).toMatchObject({ status: 'none', organizationalDomain: 'sub.example.com', pslOrganizationalDomain: 'example.com' });
    expect(ids(discovery.findings)).not.toContain('dmarc-org-domain-mismatch');
  });
});

describe('discoverDmarc: DNS answers at each step', () => {
  const zone = () => [txt('_dmarc.example.com', 'v=DMARC1; p=reject'), a('sub.example.com')];

  it.each(['servfail', 'timeout', 'refused', 'malformed', 'budget'] as DnsErrorReason[])('%s at the name itself: temperror, the walk stops', async (reason) => {
    const resolver = recording(...zone()).fail('_dmarc.sub.example.com', reason);
    const discovery = await discoverDmarc('sub.example.com', resolver);
    expect(discovery).toMatchObject({ status: 'temperror', record: null, failedQuery: { name: '_dmarc.sub.example.com', type: 'TXT', reason } });
    expect(resolver.names()).toEqual(['_dmarc.sub.example.com']);
  });

  it.each(['servfail', 'timeout'] as DnsErrorReason[])('%s at the organizational domain: temperror, not a fallback to "none"', async (reason) => {
    const resolver = recording(...zone()).fail('_dmarc.example.com', reason, 'upstream said so');
    const discovery = await discoverDmarc('sub.example.com', resolver);
    expect(discovery).toMatchObject({ status: 'temperror', failedQuery: { name: '_dmarc.example.com', reason, detail: 'upstream said so' } });
    expect(resolver.names()).toEqual(['_dmarc.sub.example.com', '_dmarc.example.com']);
  });

  it('a failure at the TLD after the record was found still makes the discovery a temperror (any failed query does)', async () => {
    const resolver = recording(...zone()).fail('_dmarc.com', 'servfail');
    const discovery = await discoverDmarc('sub.example.com', resolver);
    expect(discovery).toMatchObject({ status: 'temperror', failedQuery: { name: '_dmarc.com' } });
  });

  it('NXDOMAIN and NODATA at the name are both "no record here": the walk goes on', async () => {
    const nxdomain = await discoverDmarc('sub.example.com', recording(...zone()));
    expect(nxdomain.walk[0]?.answer).toBe('nxdomain');
    // A record below _dmarc.sub makes _dmarc.sub an empty non-terminal: NODATA.
    const nodata = await discoverDmarc('sub.example.com', recording(...zone(), txt('x._dmarc.sub.example.com', 'unrelated')));
    expect(nodata.walk[0]?.answer).toBe('nodata');
    for (const discovery of [nxdomain, nodata]) {
      expect(discovery).toMatchObject({ status: 'found', foundAt: '_dmarc.example.com', record: { policy: 'reject' } });
    }
  });

  it('follows a CNAME at _dmarc (the resolver does) and reports where the record was asked for', async () => {
    const resolver = recording(cname('_dmarc.example.com', '_dmarc.provider.example.net'), txt('_dmarc.provider.example.net', 'v=DMARC1; p=reject'));
    const discovery = await discoverDmarc('example.com', resolver);
    expect(discovery).toMatchObject({ status: 'found', foundAt: '_dmarc.example.com', record: { policy: 'reject' } });
    expect(discovery.walk[0]?.cnames).toEqual(['_dmarc.provider.example.net']);
  });

  it('a CNAME at _dmarc to a missing name is "no record"', async () => {
    const discovery = await discoverDmarc('example.com', recording(cname('_dmarc.example.com', '_dmarc.gone.example.net')));
    expect(discovery).toMatchObject({ status: 'none' });
    expect(discovery.walk[0]).toMatchObject({ answer: 'nxdomain', cnames: ['_dmarc.gone.example.net'] });
  });

  it('a CNAME loop at _dmarc is a temperror', async () => {
    const resolver = new TestResolver(dns(cname('_dmarc.example.com', '_dmarc.loop.example.com'), cname('_dmarc.loop.example.com', '_dmarc.example.com')));
    const discovery = await discoverDmarc('example.com', resolver);
    expect(discovery).toMatchObject({ status: 'temperror', failedQuery: { name: '_dmarc.example.com', reason: 'servfail' } });
  });

  it('takes the name in any case and with a trailing dot', async () => {
    const discovery = await discoverDmarc('Sub.Example.COM.', recording(...zone()));
    expect(discovery).toMatchObject({ name: 'sub.example.com', status: 'found', foundAt: '_dmarc.example.com' });
  });
});

describe('discoverDmarc: findings', () => {
  it('turns the applicable record\'s problems into findings', async () => {
    const discovery = await discoverDmarc('example.com', recording(txt('_dmarc.example.com', 'v=DMARC1; p=reject; pct=0; t=y; adkim=x')));
    expect(ids(discovery.findings).sort()).toEqual(['dmarc-legacy-tag', 'dmarc-no-rua', 'dmarc-pct-partial', 'dmarc-syntax', 'dmarc-testing']);
    for (const finding of discovery.findings) {
      expect(finding.id).toMatch(/^dmarc-[a-z-]+$/);
      expect(finding.detail).toMatch(/Your DMARC record at _dmarc\.example\.com/);
    }
    expect(discovery.findings.find((finding) => finding.id === 'dmarc-legacy-tag')?.detail).toContain('RFC 9989');
  });

  it('reports an unusable policy as critical', async () => {
    const discovery = await discoverDmarc('example.com', recording(txt('_dmarc.example.com', 'v=DMARC1; p=rejct')));
    expect(discovery.status).toBe('found');
    expect(discovery.record?.outcome).toBe('no-dmarc');
    expect(discovery.findings.find((finding) => finding.id === 'dmarc-invalid-policy')).toMatchObject({ severity: 'critical' });
  });

  it('flags sp on a record below the organizational domain (ignored by every receiver)', async () => {
    const resolver = recording(txt('_dmarc.mail.example.com', 'v=DMARC1; p=reject; sp=none; rua=mailto:d@example.com'), txt('_dmarc.example.com', 'v=DMARC1; p=reject; rua=mailto:d@example.com'));
    const discovery = await discoverDmarc('mail.example.com', resolver);
    const finding = discovery.findings.find((candidate) => candidate.id === 'dmarc-sp-on-subdomain');
    expect(finding?.detail).toContain('sp=none');
    expect(finding?.detail).toContain('but receivers take');
    expect(finding?.title).toBe('Subdomain policy in a subdomain record has no effect');
  });

  it('flags sp on a subdomain record that only RFC 7489 receivers ignore (the tree walk makes it its own organizational domain)', async () => {
    const discovery = await discoverDmarc('mail.example.com', recording(txt('_dmarc.mail.example.com', 'v=DMARC1; p=reject; sp=none; rua=mailto:d@example.com')));
    expect(discovery.organizationalDomain).toBe('mail.example.com');
    const finding = discovery.findings.find((candidate) => candidate.id === 'dmarc-sp-on-subdomain');
    expect(finding?.detail).toContain('receivers that still follow RFC 7489 look for the policy of those names at _dmarc.example.com');
    expect(ids(discovery.findings)).toContain('dmarc-org-domain-mismatch');
  });

  it('does not flag sp at the organizational domain', async () => {
    const discovery = await discoverDmarc('example.com', recording(txt('_dmarc.example.com', 'v=DMARC1; p=reject; sp=none; rua=mailto:d@example.com')));
    expect(discovery.findings).toEqual([]);
  });
});

describe('findOrganizationalDomain', () => {
  it('TW4: a signing subdomain with its own record shares the organizational domain (fewest labels)', async () => {
    const resolver = recording(txt('_dmarc.example.com', 'v=DMARC1; p=reject'), txt('_dmarc.signing.example.com', 'v=DMARC1; p=reject'));
    expect(await findOrganizationalDomain('signing.example.com', resolver)).toMatchObject({ status: 'ok', organizationalDomain: 'example.com' });
    expect(await findOrganizationalDomain('example.com', resolver)).toMatchObject({ status: 'ok', organizationalDomain: 'example.com' });
  });

  it('gives temperror on a failed query, with the queries made', async () => {
    const resolver = recording(txt('_dmarc.example.com', 'v=DMARC1; p=reject')).fail('_dmarc.example.com', 'refused');
    expect(await findOrganizationalDomain('a.example.com', resolver)).toMatchObject({
      status: 'temperror',
      failedQuery: { name: '_dmarc.example.com', reason: 'refused' },
      queries: ['_dmarc.a.example.com', '_dmarc.example.com'],
    });
  });
});

describe('discoverDmarc: names that cannot be queried', () => {
  it.each(['', 'a..example.com', `${'a'.repeat(64)}.example.com`])('"%s" is a temperror with reason invalid-name, without any query', async (name) => {
    const resolver = recording();
    const discovery = await discoverDmarc(name, resolver);
    expect(discovery).toMatchObject({ status: 'temperror', record: null, failedQuery: { type: 'TXT', reason: 'invalid-name' } });
    expect(resolver.calls).toEqual([]);
    expect(discovery.findings[0]?.detail).toContain('check how the domain is spelled');
  });

  it.each(['192.0.2.1', '2001:db8::1', '[2001:db8::1]'])('the IP literal %s is refused as not a domain name, without any query', async (name) => {
    const resolver = recording();
    const discovery = await discoverDmarc(name, resolver);
    expect(discovery).toMatchObject({ status: 'temperror', record: null, failedQuery: { type: 'TXT', reason: 'invalid-name' } });
    expect(discovery.failedQuery?.detail).toContain('is an IP address, not a domain name');
    expect(resolver.calls).toEqual([]);
  });
});
