import { describe, expect, it } from 'vitest';
import { discoverDmarc } from '../../src/dmarc/discover.js';
import { effectivePolicy, lowerOneLevel, nameExists } from '../../src/dmarc/policy.js';
import type { DnsErrorReason } from '../../src/dns/types.js';
import type { ResourceRecord } from '../../src/zones/types.js';
import { a, mx, recording, txt } from './helpers.js';
import type { TestResolver } from './helpers.js';

/** Discovers, then computes the effective policy, with one resolver. */
async function policyFor(name: string, resolver: TestResolver) {
  const discovery = await discoverDmarc(name, resolver);
  return effectivePolicy(name, discovery, resolver);
}

const N_ORG = txt('_dmarc.example.org', 'v=DMARC1; p=reject; sp=quarantine; np=none');
const N_COM = txt('_dmarc.example.com', 'v=DMARC1; p=reject; sp=none; np=quarantine');

describe('effectivePolicy: p, sp or np (cases.md §11)', () => {
  it.each<[string, string, ResourceRecord[], Record<string, unknown>, string]>([
    ['N1', 'example.org', [N_ORG], { policy: 'reject', source: 'p', nameExists: true, subdomainPolicy: 'quarantine', nonExistentSubdomainPolicy: 'none' }, 'the record at the name itself: p; sp and np still reported'],
    ['N2', 'sub.example.org', [N_ORG, a('sub.example.org', '127.0.0.1')], { policy: 'quarantine', source: 'sp', nameExists: true }, 'an existing subdomain: sp'],
    ['N3', 'ghost.example.org', [N_ORG], { policy: 'none', source: 'np', nameExists: false }, 'a non-existent subdomain: np'],
    ['N4', 'sub.example.com', [N_COM], { policy: 'quarantine', source: 'np', nameExists: false }, 'NXDOMAIN: np'],
    ['N5', 'sub.example.com', [N_COM, a('sub.example.com', '192.0.2.10')], { policy: 'none', source: 'sp', nameExists: true }, 'an address record: sp'],
    ['N6', 'mail.example.com', [N_COM, mx('mail.example.com', 'mx.example.com', 1)], { policy: 'none', source: 'sp', nameExists: true }, 'NODATA for A is not NXDOMAIN: the name exists'],
    ['N7', 'example.com', [txt('_dmarc.example.com', 'v=DMARC1; p=reject; t=y')], { policy: 'quarantine', publishedPolicy: 'reject', testing: true }, 't=y: reject becomes quarantine'],
    ['N8', 'example.com', [txt('_dmarc.example.com', 'v=DMARC1; p=quarantine; t=y')], { policy: 'none', publishedPolicy: 'quarantine', testing: true }, 't=y: quarantine becomes none'],
    [
      'TW3',
      'a.b.c.d.e.f.g.h.i.j.mail.example.com',
      [txt('_dmarc.example.com', 'v=DMARC1; p=reject; np=none; rua=mailto:d@example.com')],
      { policy: 'none', source: 'np', nameExists: false, policyDomain: 'example.com' },
      'found within eight queries; a non-existent 12-label name gets np',
    ],
  ])('%s: %s (%s)', async (_id, name, records, expected) => {
    expect(await policyFor(name, recording(...records))).toMatchObject(expected);
  });

  it('N6: one definite existence answer settles it (A only)', async () => {
    const resolver = recording(N_COM, mx('mail.example.com', 'mx.example.com', 1));
    const result = await policyFor('mail.example.com', resolver);
    expect(result.existenceQueries).toEqual([{ name: 'mail.example.com', type: 'A', answer: 'nodata' }]);
  });

  it('a name covered by a wildcard exists', async () => {
    const result = await policyFor('anything.example.com', recording(N_COM, a('*.example.com')));
    expect(result).toMatchObject({ source: 'sp', policy: 'none', nameExists: true });
  });

  it('the record at the name needs no existence query', async () => {
    const resolver = recording(N_ORG);
    const result = await policyFor('example.org', resolver);
    expect(result.existenceQueries).toEqual([]);
    expect(resolver.calls.every((call) => call.type === 'TXT')).toBe(true);
  });

  it('t=y lowers the subdomain policies too', async () => {
    const result = await policyFor('example.com', recording(txt('_dmarc.example.com', 'v=DMARC1; p=reject; np=quarantine; t=y')));
    expect(result).toMatchObject({ policy: 'quarantine', subdomainPolicy: 'quarantine', nonExistentSubdomainPolicy: 'none' });
  });

  it('a name with its own record below the organizational domain: its subdomains follow the organizational domain\'s record', async () => {
    const resolver = recording(txt('_dmarc.mail.example.com', 'v=DMARC1; p=reject; sp=none'), txt('_dmarc.example.com', 'v=DMARC1; p=reject; sp=quarantine; np=reject'));
    const result = await policyFor('mail.example.com', resolver);
    expect(result).toMatchObject({ policy: 'reject', source: 'p', subdomainPolicy: 'quarantine', nonExistentSubdomainPolicy: 'reject' });
  });

  it('TW9: a PSD record (psd=y) supplies sp or np to names below its organizational domains', async () => {
    const psd = txt('_dmarc.com', 'v=DMARC1; p=reject; sp=quarantine; np=reject; psd=y');
    expect(await policyFor('a.mail.example.com', recording(psd))).toMatchObject({ source: 'np', policy: 'reject', policyDomain: 'com' });
    expect(await policyFor('a.mail.example.com', recording(psd, a('a.mail.example.com')))).toMatchObject({ source: 'sp', policy: 'quarantine' });
  });
});

describe('effectivePolicy: pct (legacy) and the unusable outcomes', () => {
  it.each<[string, number | null, boolean]>([
    ['v=DMARC1; p=reject; pct=25', 25, true],
    ['v=DMARC1; p=reject; pct=0', 0, true],
    ['v=DMARC1; p=reject; pct=100', 100, false],
    ['v=DMARC1; p=reject', null, false],
    ['v=DMARC1; p=reject; pct=abc', null, false],
  ])('%s → pct %s, partial %s; the policy itself is unchanged (RFC 9989 ignores pct)', async (record, pct, partial) => {
    const result = await policyFor('example.com', recording(txt('_dmarc.example.com', record)));
    expect(result).toMatchObject({ policy: 'reject', pct, partial });
  });

  it('R4: pct=0 does not change the policy a failing message gets (RFC 9989); it is flagged partial for RFC 7489 receivers', async () => {
    const resolver = recording(txt('_dmarc.example.com', 'v=DMARC1; p=reject; pct=0'));
    const discovery = await discoverDmarc('example.com', resolver);
    const result = await effectivePolicy('example.com', discovery, resolver);
    expect(result).toMatchObject({ policy: 'reject', publishedPolicy: 'reject', pct: 0, partial: true });
    expect(discovery.findings.find((finding) => finding.id === 'dmarc-pct-partial')?.detail).toContain('none of the failing mail');
  });

  it('as-none: p missing with a valid rua is treated as p=none', async () => {
    const result = await policyFor('example.com', recording(txt('_dmarc.example.com', 'v=DMARC1; rua=mailto:d@example.com')));
    expect(result).toMatchObject({ policy: 'none', source: 'p', asNone: true, subdomainPolicy: 'none', nonExistentSubdomainPolicy: 'none' });
  });

  it('no-dmarc: p invalid and no rua means no policy at all', async () => {
    const result = await policyFor('example.com', recording(txt('_dmarc.example.com', 'v=DMARC1; p=rejectt')));
    expect(result).toMatchObject({ policy: null, source: null, asNone: false, subdomainPolicy: null });
  });

  it.each<[string, TestResolver]>([
    ['none', recording()],
    ['multiple', recording(txt('_dmarc.example.com', 'v=DMARC1; p=reject'), txt('_dmarc.example.com', 'v=DMARC1; p=none'))],
    ['temperror', recording(txt('_dmarc.example.com', 'v=DMARC1; p=reject')).fail('_dmarc.example.com', 'timeout')],
  ])('discovery %s: no policy, no existence queries', async (status, resolver) => {
    const discovery = await discoverDmarc('sub.example.com', resolver);
    expect(discovery.status).toBe(status);
    const before = resolver.calls.length;
    const result = await effectivePolicy('sub.example.com', discovery, resolver);
    expect(result).toMatchObject({ policy: null, source: null, nameExists: null, findings: [] });
    expect(resolver.calls.length).toBe(before);
  });
});

describe('effectivePolicy: existence lookups that fail', () => {
  it.each<DnsErrorReason>(['servfail', 'refused'])('%s on A, then NXDOMAIN on AAAA: the name does not exist (np)', async (reason) => {
    const resolver = recording(N_COM).fail('A sub.example.com', reason);
    const result = await policyFor('sub.example.com', resolver);
    expect(result).toMatchObject({ source: 'np', policy: 'quarantine', nameExists: false, findings: [] });
    expect(result.existenceQueries).toEqual([
      { name: 'sub.example.com', type: 'A', answer: 'error', reason },
      { name: 'sub.example.com', type: 'AAAA', answer: 'nxdomain' },
    ]);
  });

  it('a timeout on A ends the existence lookups: a silent server would cost the whole wait once per type', async () => {
    const resolver = recording(N_COM).fail('A sub.example.com', 'timeout');
    const result = await policyFor('sub.example.com', resolver);
    expect(result).toMatchObject({ source: 'sp', policy: 'none', nameExists: null });
    expect(result.existenceQueries).toEqual([{ name: 'sub.example.com', type: 'A', answer: 'error', reason: 'timeout' }]);
  });

  it('every existence lookup fails: assume the name exists (sp) and say so', async () => {
    const resolver = recording(N_COM).fail('sub.example.com', 'servfail');
    const result = await policyFor('sub.example.com', resolver);
    expect(result).toMatchObject({ source: 'sp', policy: 'none', nameExists: null });
    expect(result.existenceQueries.map((query) => query.type)).toEqual(['A', 'AAAA', 'MX']);
    expect(result.findings).toHaveLength(1);
    expect(result.findings[0]).toMatchObject({ id: 'dmarc-temperror', severity: 'warning' });
    expect(result.findings[0]?.detail).toContain('assumed it does');
    expect(result.findings[0]?.detail).toContain('SERVFAIL');
  });
});

describe('nameExists and lowerOneLevel', () => {
  it.each<[string, ResourceRecord[], boolean]>([
    ['present.example', [a('present.example')], true],
    ['mxonly.example', [mx('mxonly.example', 'mx.example')], true],
    ['ent.example', [a('below.ent.example')], true],
    ['absent.example', [a('present.example')], false],
  ])('%s exists: %s', async (name, records, exists) => {
    expect((await nameExists(name, recording(...records))).exists).toBe(exists);
  });

  it.each([
    ['reject', 'quarantine'],
    ['quarantine', 'none'],
    ['none', 'none'],
  ] as const)('%s → %s', (policy, lowered) => {
    expect(lowerOneLevel(policy)).toBe(lowered);
  });
});
