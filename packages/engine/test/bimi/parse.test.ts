/**
 * The BIMI record (draft-brand-indicators-for-message-identification-14 §4.3), table-driven, and
 * the DMARC prerequisite (§7.1) over in-memory zones.
 */
import { describe, expect, it } from 'vitest';
import { bimiDmarcEligibility, bimiSelectorProblem, lpsMatches, normaliseLocalPart, parseBimiRecord, selectBimiRecord } from '../../src/bimi/index.js';
import { discoverDmarc } from '../../src/dmarc/discover.js';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { parseZone } from '../../src/zones/parse.js';

describe('parseBimiRecord', () => {
  it.each([
    ['v=BIMI1; l=https://brand.example/logo.svg;', { l: 'https://brand.example/logo.svg', a: null, avp: null, lps: null, unknown: [] }],
    ['v=BIMI1;l=https://brand.example/logo.svg;a=https://brand.example/vmc.pem', { l: 'https://brand.example/logo.svg', a: 'https://brand.example/vmc.pem' }],
    ['v=BIMI1; a=https://b.example/v.pem; l=https://b.example/l.svg', { l: 'https://b.example/l.svg', a: 'https://b.example/v.pem' }],
    ['v=BIMI1; l=; a=;', { l: '', a: '' }],
    ['v=BIMI1; l=https://b.example/l.svg; avp=personal', { avp: 'personal' }],
    ['v=BIMI1; l=https://b.example/l.svg; lps=sales,ceo-office', { lps: ['sales', 'ceo-office'] }],
    ['v=BIMI1; l=https://b.example/l.svg; lps=', { lps: [] }],
    ['v=BIMI1; l=https://b.example/l.svg; s=x; future=1', { unknown: ['s', 'future'] }],
  ])('%s', (text, tags) => {
    const parsed = parseBimiRecord(text);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(parsed.tags).toMatchObject(tags);
  });

  it.each([
    ['v=bimi1; l=https://b.example/l.svg', 'must begin with "v=BIMI1;"'],
    [' v=BIMI1; l=https://b.example/l.svg', 'must begin'],
    ['l=https://b.example/l.svg; v=BIMI1', 'must begin'],
    ['v=BIMI1; a=https://b.example/v.pem', 'no l= tag'],
    ['v=BIMI1; l=http://b.example/l.svg', 'must be an https:// URL'],
    ['v=BIMI1; l=https://192.0.2.1/l.svg', 'IP address'],
    ['v=BIMI1; l=https://b.example/a.svg,https://b.example/b.svg', 'more than one URL'],
    ['v=BIMI1; l=; a=https://b.example/v.pem', 'l= is empty but a= names'],
    ['v=BIMI1; l=https://b.example/l.svg; l=https://b.example/m.svg', 'appears twice'],
    ['v=BIMI1; l=https://b.example/l.svg; lps=a_b', 'each prefix'],
    ['v=BIMI1; l=https://b.example/l.svg; nonsense', 'is not a tag'],
  ])('%s → %s', (text, problem) => {
    const parsed = parseBimiRecord(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problem).toContain(problem);
  });

  it('a logo URL not ending in .svg is a warning', () => {
    const parsed = parseBimiRecord('v=BIMI1; l=https://b.example/logo.png');
    expect(parsed.ok && parsed.warnings[0]).toContain('.svg');
  });
});

describe('selectBimiRecord and selectors', () => {
  it('joins character-strings, discards other TXT, refuses several', () => {
    expect(selectBimiRecord([['v=spf1 -all'], ['v=BIMI1; l=https://b.example/', 'l.svg']])).toEqual({ kind: 'one', text: 'v=BIMI1; l=https://b.example/l.svg' });
    expect(selectBimiRecord([['v=BIMI1; l=;'], ['v=BIMI1; l=https://b.example/l.svg']])).toEqual({ kind: 'multiple', count: 2 });
    expect(selectBimiRecord([['V=BIMI1; l=x']])).toEqual({ kind: 'none', lookalike: 'V=BIMI1; l=x' });
    expect(selectBimiRecord([])).toEqual({ kind: 'none', lookalike: null });
  });
  it.each([['default', null], ['brand.2024', null], ['', 'empty'], ['bad_sel', 'not made of DNS labels'], ['-x', 'not made of DNS labels']])('selector %j', (selector, problem) => {
    const found = bimiSelectorProblem(selector);
    if (problem === null) expect(found).toBeNull();
    else expect(found).toContain(problem);
  });
});

describe('lps: normaliseLocalPart and lpsMatches', () => {
  it.each([
    ['ceo', 'ceo'],
    ['Sales.Team+news', 'sales-team'],
    ['a__b..c', 'a-b-c'],
    ['-x-', 'x'],
    ['+only', null],
    ['ünïcode', null],
    ['x'.repeat(64), null],
  ])('%j → %j', (local, expected) => {
    expect(normaliseLocalPart(local)).toBe(expected);
  });
  it('an empty list matches every local part; prefixes compare case-insensitively', () => {
    expect(lpsMatches([], 'anyone')).toBe(true);
    expect(lpsMatches(['Sales'], 'sales-team')).toBe(true);
    expect(lpsMatches(['sales'], 'ceo')).toBe(false);
  });
});

describe('bimiDmarcEligibility', () => {
  const zone = (domain: string, records: string[]) =>
    parseZone([`$ORIGIN ${domain}.`, '$TTL 300', `@ IN SOA ns1 h ( 1 3600 600 86400 60 )`, '@ IN NS ns1', 'ns1 IN A 198.51.100.53', '@ IN A 198.51.100.80', 'sub IN A 198.51.100.81', ...records].join('\n'), { origin: domain });
  const judge = async (domain: string, records: string[], name = domain) => bimiDmarcEligibility(await discoverDmarc(name, new ZoneResolver([zone(domain, records)]))).dmarc;

  it.each([
    ['p=reject', ['_dmarc IN TXT "v=DMARC1; p=reject"'], true, []],
    ['p=quarantine', ['_dmarc IN TXT "v=DMARC1; p=quarantine"'], true, []],
    ['p=none', ['_dmarc IN TXT "v=DMARC1; p=none"'], false, ['p-none']],
    ['sp=none, even for the apex', ['_dmarc IN TXT "v=DMARC1; p=reject; sp=none"'], false, ['sp-none']],
    ['quarantine pct=50', ['_dmarc IN TXT "v=DMARC1; p=quarantine; pct=50"'], false, ['quarantine-pct']],
    ['reject pct=50 (a warning only)', ['_dmarc IN TXT "v=DMARC1; p=reject; pct=50"'], true, []],
    ['t=y', ['_dmarc IN TXT "v=DMARC1; p=reject; t=y"'], false, ['t-y']],
    ['no record', [], false, ['no-record']],
  ])('%s', async (_name, records, eligible, reasons) => {
    const dmarc = await judge('brand.example', records);
    expect(dmarc.eligible).toBe(eligible);
    expect(dmarc.blockedBy.map((b) => b.reason)).toEqual(reasons);
  });

  it('a subdomain: a stricter record of its own does not lift the organizational domain p=none', async () => {
    const dmarc = await judge('brand.example', ['_dmarc IN TXT "v=DMARC1; p=none"', '_dmarc.sub IN TXT "v=DMARC1; p=reject"'], 'sub.brand.example');
    expect(dmarc.eligible).toBe(false);
    expect(dmarc.blockedBy).toEqual([expect.objectContaining({ record: '_dmarc.brand.example', reason: 'p-none' })]);
    expect(dmarc.records.map((r) => r.name)).toEqual(['_dmarc.sub.brand.example', '_dmarc.brand.example']);
  });

  it('a subdomain under the organizational record: its effective sp applies', async () => {
    const dmarc = await judge('brand.example', ['_dmarc IN TXT "v=DMARC1; p=reject"'], 'sub.brand.example');
    expect(dmarc).toMatchObject({ eligible: true, records: [{ name: '_dmarc.brand.example', policy: 'reject' }] });
  });
});
