import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chooseBestKey, keptProbePlans, MAX_CALLER_SELECTORS, MAX_PARALLEL_SELECTOR_QUERIES, probeDkim } from '../../src/dkim/probe.js';
import { parseDkimKeyRecord } from '../../src/dkim/parse.js';
import { KNOWN_SELECTORS, microsoftDynamicSelectors } from '../../src/dkim/selectors.js';
import type { DkimKey } from '../../src/dkim/types.js';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import type { DnsAnswer, RecordType, Resolver } from '../../src/dns/types.js';
import type { ResourceRecord, Zone } from '../../src/zones/types.js';
import { InjectingResolver, SOA, txtStrings } from './injecting-resolver.js';

const keys = (JSON.parse(readFileSync(new URL('../../../../conformance/dkim/cases.json', import.meta.url), 'utf8')) as { keys: Record<string, string> }).keys;
const RSA2048 = keys['GEN-RSA2048'] as string;
const RSA1024 = keys['RFC6376-RSA1024'] as string;
const RSA512 = keys['GEN-RSA512'] as string;
const ED25519 = keys['GEN-ED25519-RAW'] as string;

/** Every distinct built-in selector, in list order, then Microsoft's two for the domain. */
function builtInSelectors(domain: string): string[] {
  return [...new Set(KNOWN_SELECTORS.map((entry) => entry.selector)), ...microsoftDynamicSelectors(domain)];
}

const txt = (name: string, text: string): ResourceRecord => ({ name, type: 'TXT', ttl: 300, data: txtStrings(text) });
const cname = (name: string, target: string): ResourceRecord => ({ name, type: 'CNAME', ttl: 300, data: target });

const exampleZone: Zone = {
  origin: 'example.com',
  records: [
    { name: 'example.com', type: 'SOA', ttl: 3600, data: SOA },
    // A 2048-bit key must be split into several character-strings (RFC 6376 §3.6.2.2).
    txt('google._domainkey.example.com', `v=DKIM1; k=rsa; p=${RSA2048}`),
    cname('s1._domainkey.example.com', 's1.domainkey.u123.wl001.sendgrid.net'),
    cname('selector1._domainkey.example.com', 'selector1-example-com._domainkey.example.onmicrosoft.com'),
    txt('k1._domainkey.example.com', 'v=DKIM1; p='),
    txt('custom2024._domainkey.example.com', `v=DKIM1; k=ed25519; t=y; p=${ED25519}`),
    txt('mail._domainkey.example.com', `v=DKIM1; p=${RSA1024}`),
    txt('mail._domainkey.example.com', `v=DKIM1; p=${RSA2048}`),
    txt('default._domainkey.example.com', 'google-site-verification=abc123'),
    { name: 'dkim._domainkey.example.com', type: 'A', ttl: 300, data: '192.0.2.1' },
  ],
};
const providerZones: Zone[] = [
  { origin: 'sendgrid.net', records: [txt('s1.domainkey.u123.wl001.sendgrid.net', `k=rsa; t=s; p=${RSA1024}`)] },
  { origin: 'onmicrosoft.com', records: [{ name: 'onmicrosoft.com', type: 'SOA', ttl: 3600, data: SOA }] },
];
const zones = new ZoneResolver([exampleZone, ...providerZones]);

describe('probeDkim: keys through an in-memory zone', () => {
  it('reports every key found, caller selectors first, then the list in order', async () => {
    const resolver = new InjectingResolver(zones);
    const probe = await probeDkim('Example.COM.', resolver, { selectors: ['custom2024'] });
    expect(probe.status).toBe('found');
    expect(probe.found.map((key) => key.selector)).toEqual(['custom2024', 'google', 'k1', 's1', 'mail', 'mail']);
    expect(probe.selectorsProbed).toEqual(['custom2024', ...builtInSelectors('example.com')]);
    expect(probe.probed).toBe(probe.selectorsProbed.length);
    // Each selector name is asked for its CNAME exactly once; TXT only where the name exists (a CNAME
    // NXDOMAIN already says nothing is there, RFC 8020).
    expect(resolver.names('CNAME')).toHaveLength(probe.probed);
    expect(new Set(resolver.names('CNAME'))).toEqual(new Set(probe.selectorsProbed.map((selector) => `${selector}._domainkey.example.com`)));
    const txtNames = resolver.names('TXT');
    expect(txtNames.length).toBeLessThan(probe.probed / 2);
    for (const key of probe.found) expect(txtNames).toContain(key.name);
    expect(probe.failed).toEqual([]);
  });

  it('reads sizes from the keys, joins split TXT strings, and keeps the flags', async () => {
    const probe = await probeDkim('example.com', zones, { selectors: ['custom2024'] });
    const bySelector = (selector: string) => probe.found.find((key) => key.selector === selector);
    expect(bySelector('google')).toMatchObject({ keyType: 'rsa', keyLength: 2048, usable: true, revoked: false, testing: false, record: `v=DKIM1; k=rsa; p=${RSA2048}` });
    expect(bySelector('custom2024')).toMatchObject({ keyType: 'ed25519', keyLength: 256, testing: true, origin: 'caller' });
    expect(bySelector('s1')).toMatchObject({ keyType: 'rsa', keyLength: 1024, strict: true });
    expect(bySelector('k1')).toMatchObject({ revoked: true, usable: false, keyLength: null, keyType: null });
  });

  it('names the provider from a CNAME target first, from the selector name otherwise', async () => {
    const probe = await probeDkim('example.com', zones);
    const s1 = probe.found.find((key) => key.selector === 's1');
    expect(s1).toMatchObject({ provider: 'Twilio SendGrid', providerEvidence: 'cname', cnameTarget: 's1.domainkey.u123.wl001.sendgrid.net', name: 's1._domainkey.example.com' });
    const google = probe.found.find((key) => key.selector === 'google');
    expect(google).toMatchObject({ provider: 'Google Workspace', providerEvidence: 'selector', cnameTarget: null });
  });

  it('reports a selector CNAME whose target has no key as dangling, with the provider', async () => {
    const probe = await probeDkim('example.com', zones);
    expect(probe.dangling).toEqual([
      { selector: 'selector1', name: 'selector1._domainkey.example.com', cnameTarget: 'selector1-example-com._domainkey.example.onmicrosoft.com', provider: 'Microsoft 365' },
    ]);
    const finding = probe.findings.find((f) => f.id === 'dkim-cname-dangling');
    expect(finding?.detail).toContain('Microsoft 365');
  });

  it('keeps several key records at one selector and reports the oddity (RFC 6376 §3.6.2.2)', async () => {
    const probe = await probeDkim('example.com', zones);
    expect(probe.found.filter((key) => key.selector === 'mail').map((key) => key.keyLength)).toEqual([1024, 2048]);
    expect(probe.findings.filter((f) => f.id === 'dkim-multiple-records').map((f) => f.title)).toEqual(["Several DKIM Records (Selector: 'mail')"]);
  });

  it('ignores TXT records that are not DKIM keys, and NODATA at a selector name', async () => {
    const probe = await probeDkim('example.com', zones);
    expect(probe.found.some((key) => key.selector === 'default' || key.selector === 'dkim')).toBe(false);
    expect(probe.failed).toEqual([]);
  });

  it('produces findings with stable ids per key', async () => {
    const probe = await probeDkim('example.com', zones, { selectors: ['custom2024'] });
    const ids = probe.findings.map((f) => `${f.id} ${f.title}`);
    expect(ids).toContain("dkim-found DKIM Public Key Found (Selector: 'google')");
    expect(ids).toContain("dkim-testing DKIM Key in Testing Mode (Selector: 'custom2024')");
    expect(ids).toContain("dkim-weak-key Weak DKIM Key (Selector: 's1')");
    expect(ids).toContain("dkim-key-revoked DKIM Key Revoked (Selector: 'k1')");
    expect(probe.findings.find((f) => f.title === "DKIM Public Key Found (Selector: 'google')")?.detail).toBe('2048-bit RSA key; the selector name suggests Google Workspace.');
    expect(probe.findings.find((f) => f.title === "DKIM Public Key Found (Selector: 's1')")?.detail).toBe('1024-bit RSA key, hosted by Twilio SendGrid.');
    expect(probe.findings.some((f) => f.id === 'dkim-not-found')).toBe(false);
  });

  it('chooses the best key for the summary: usable, then RSA, then longest', async () => {
    const probe = await probeDkim('example.com', zones, { selectors: ['custom2024'] });
    expect(probe.bestKey).toMatchObject({ selector: 'google', keyLength: 2048 });
  });
});

describe('probeDkim: nothing found', () => {
  const empty = new ZoneResolver([{ origin: 'quiet.example', records: [{ name: 'quiet.example', type: 'SOA', ttl: 3600, data: SOA }] }]);

  it('says "not found among N selectors", never "no DKIM"', async () => {
    const probe = await probeDkim('quiet.example', empty);
    const count = builtInSelectors('quiet.example').length;
    expect(probe).toMatchObject({ status: 'not-found', found: [], bestKey: null, probed: count, failed: [] });
    const finding = probe.findings.find((f) => f.id === 'dkim-not-found');
    expect(finding?.severity).toBe('info');
    expect(finding?.detail).toContain(`No DKIM key found among the ${count} selectors probed.`);
    expect(finding?.detail).toContain('custom selector');
  });

  it('treats NXDOMAIN and NODATA at the selector names alike: not found', async () => {
    const zone: Zone = {
      origin: 'mixed.example',
      records: [
        { name: 'mixed.example', type: 'SOA', ttl: 3600, data: SOA },
        { name: 'google._domainkey.mixed.example', type: 'A', ttl: 60, data: '192.0.2.9' },
      ],
    };
    const resolver = new ZoneResolver([zone]);
    expect((await resolver.resolve('google._domainkey.mixed.example', 'TXT')).kind).toBe('nodata');
    expect((await resolver.resolve('s1._domainkey.mixed.example', 'TXT')).kind).toBe('nxdomain');
    const probe = await probeDkim('mixed.example', resolver);
    expect(probe.status).toBe('not-found');
    expect(probe.failed).toEqual([]);
  });

  it('does not take a wildcard SPF record for a key', async () => {
    const zone: Zone = {
      origin: 'wild.example',
      records: [{ name: 'wild.example', type: 'SOA', ttl: 3600, data: SOA }, txt('*.wild.example', 'v=spf1 -all')],
    };
    const probe = await probeDkim('wild.example', new ZoneResolver([zone]));
    expect(probe.status).toBe('not-found');
  });
});

describe('probeDkim: DNS failures are not "not found"', () => {
  const failure = (reason: 'servfail' | 'timeout' | 'budget' | 'refused'): DnsAnswer => ({ kind: 'error', reason, detail: 'injected' });

  it.each(['servfail', 'timeout', 'budget', 'refused'] as const)('%s on some selectors → failed, named, and the rest still found', async (reason) => {
    const resolver = new InjectingResolver(zones, [
      { name: 'google._domainkey.example.com', answer: failure(reason) },
      { name: 's2._domainkey.example.com', answer: failure(reason) },
    ]);
    const probe = await probeDkim('example.com', resolver);
    expect(probe.failed).toEqual([
      { selector: 'google', name: 'google._domainkey.example.com', reason, detail: 'injected' },
      { selector: 's2', name: 's2._domainkey.example.com', reason, detail: 'injected' },
    ]);
    expect(probe.found.some((key) => key.selector === 'google')).toBe(false);
    expect(probe.status).toBe('found');
    const finding = probe.findings.find((f) => f.id === 'dkim-probe-failed');
    expect(finding?.severity).toBe('info');
    expect(finding?.detail).toContain("'google'");
    expect(finding?.detail).toContain("'s2'");
    expect(finding?.detail).toContain('not the same as having none');
  });

  it('nothing found and some lookups failed → incomplete, counted among the selectors that answered', async () => {
    const empty = new ZoneResolver([{ origin: 'quiet.example', records: [{ name: 'quiet.example', type: 'SOA', ttl: 3600, data: SOA }] }]);
    const resolver = new InjectingResolver(empty, [{ name: 'google._domainkey.quiet.example', answer: failure('timeout') }]);
    const probe = await probeDkim('quiet.example', resolver);
    const count = builtInSelectors('quiet.example').length;
    expect(probe.status).toBe('incomplete');
    expect(probe.findings.map((f) => f.id)).toEqual(['dkim-probe-failed', 'dkim-not-found']);
    expect(probe.findings[1]?.detail).toContain(`among the ${count - 1} selectors that answered (of ${count} probed)`);
  });

  it('every lookup failing → incomplete, with no "not found" claim about any selector', async () => {
    const failing: Resolver = {
      async resolve<T extends RecordType>(): Promise<DnsAnswer<T>> {
        return { kind: 'error', reason: 'servfail' };
      },
    };
    const probe = await probeDkim('example.com', failing);
    expect(probe.status).toBe('incomplete');
    expect(probe.failed).toHaveLength(probe.probed);
    expect(probe.findings.find((f) => f.id === 'dkim-not-found')?.detail).toContain('among the 0 selectors that answered');
  });
});

describe('probeDkim: selector handling', () => {
  it('validates caller selectors: bad ones are reported and not queried; duplicates are probed once', async () => {
    const resolver = new InjectingResolver(zones);
    const probe = await probeDkim('example.com', resolver, {
      selectors: ['bad selector', '-lead', 'a..b', 'Custom2024', 's1._domainkey.example.com', 'CUSTOM2024', 'x'.repeat(64), 'sélecteur'],
      useBuiltInList: false,
    });
    expect(probe.selectorsProbed).toEqual(['custom2024', 's1']);
    expect(resolver.names('TXT')).toEqual(['custom2024._domainkey.example.com', 's1._domainkey.example.com']);
    expect(probe.rejected.map((rejection) => rejection.selector)).toEqual(['bad selector', '-lead', 'a..b', 'x'.repeat(64), 'sélecteur']);
    expect(probe.findings.filter((f) => f.id === 'dkim-selector-invalid')).toHaveLength(5);
    expect(probe.found.map((key) => key.selector)).toEqual(['custom2024', 's1']);
  });

  it('a caller selector that is also in the list is probed once, in the caller position', async () => {
    const resolver = new InjectingResolver(zones);
    const probe = await probeDkim('example.com', resolver, { selectors: ['s1'] });
    expect(probe.selectorsProbed.filter((selector) => selector === 's1')).toHaveLength(1);
    expect(probe.selectorsProbed[0]).toBe('s1');
    expect(probe.found.find((key) => key.selector === 's1')?.origin).toBe('caller');
  });

  it('a domain probed again (its plan is kept) still puts caller selectors first, and probes the same names', async () => {
    const plain = await probeDkim('example.com', zones);
    const again = await probeDkim('example.com', zones);
    expect(again.selectorsProbed).toEqual(plain.selectorsProbed);
    expect(again.found).toEqual(plain.found);
    expect(again.selectorsProbed).toEqual(builtInSelectors('example.com'));
    const withCaller = await probeDkim('example.com', zones, { selectors: ['custom2024'] });
    expect(withCaller.selectorsProbed).toEqual(['custom2024', ...builtInSelectors('example.com')]);
    const listOff = await probeDkim('example.com', zones, { useBuiltInList: false });
    expect(listOff).toMatchObject({ probed: 0, status: 'incomplete' });
    // The kept plan is not changed by the calls that did not use it.
    expect((await probeDkim('example.com', zones)).selectorsProbed).toEqual(plain.selectorsProbed);
  });

  it("keeps a domain's plan only once it is checked a second time (a scan checks each name once and keeps none)", async () => {
    const before = keptProbePlans();
    await probeDkim('once.plan-admission.example', zones);
    await probeDkim('other.plan-admission.example', zones);
    expect(keptProbePlans()).toBe(before);
    await probeDkim('once.plan-admission.example', zones);
    expect(keptProbePlans()).toBe(before + 1);
    await probeDkim('once.plan-admission.example', zones, { selectors: ['s1'] }); // caller selectors: planned afresh
    expect(keptProbePlans()).toBe(before + 1);
  });

  it(`probes at most ${MAX_CALLER_SELECTORS} caller selectors`, async () => {
    const selectors = Array.from({ length: MAX_CALLER_SELECTORS + 2 }, (_, index) => `sel${index}`);
    const probe = await probeDkim('example.com', zones, { selectors, useBuiltInList: false });
    expect(probe.probed).toBe(MAX_CALLER_SELECTORS);
    expect(probe.rejected.map((rejection) => rejection.selector)).toEqual([`sel${MAX_CALLER_SELECTORS}`, `sel${MAX_CALLER_SELECTORS + 1}`]);
  });

  it(`runs queries in parallel, at most ${MAX_PARALLEL_SELECTOR_QUERIES} at a time`, async () => {
    const resolver = new InjectingResolver(zones, [], 5);
    await probeDkim('example.com', resolver);
    expect(resolver.maxInFlight).toBeGreaterThan(1);
    expect(resolver.maxInFlight).toBeLessThanOrEqual(MAX_PARALLEL_SELECTOR_QUERIES);
  });

  it("finds a key at Microsoft's per-domain selector", async () => {
    const zone: Zone = {
      origin: 'contoso.onmicrosoft.com',
      records: [txt('selector1-contoso-onmicrosoft-com._domainkey.contoso.onmicrosoft.com', `v=DKIM1; k=rsa; p=${RSA2048}`)],
    };
    const probe = await probeDkim('contoso.onmicrosoft.com', new ZoneResolver([zone]));
    expect(probe.found).toHaveLength(1);
    expect(probe.found[0]).toMatchObject({ selector: 'selector1-contoso-onmicrosoft-com', origin: 'microsoft-dynamic', provider: 'Microsoft 365', keyLength: 2048 });
  });

  it('skips names that would be too long for DNS instead of sending them', async () => {
    const longDomain = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.example`;
    const resolver = new InjectingResolver(zones);
    const probe = await probeDkim(longDomain, resolver);
    expect(probe.probed).toBeGreaterThan(0);
    for (const name of resolver.names('TXT')) expect(name.length).toBeLessThanOrEqual(253);
    expect(probe.selectorsProbed.some((selector) => selector.startsWith('selector1-'))).toBe(false);
  });

  it('an invalid domain is not queried at all: incomplete, with a reason', async () => {
    const resolver = new InjectingResolver(zones);
    const probe = await probeDkim('bad..example', resolver);
    expect(resolver.calls).toEqual([]);
    expect(probe.status).toBe('incomplete');
    expect(probe.findings.map((f) => f.id)).toEqual(['dkim-probe-failed']);
    expect(probe.findings[0]?.detail).toContain('empty label');
  });
});

describe('probeDkim: key findings', () => {
  const zone: Zone = {
    origin: 'keys.example',
    records: [
      txt('short._domainkey.keys.example', `v=DKIM1; p=${RSA512}`),
      txt('sha1._domainkey.keys.example', `v=DKIM1; h=sha1; p=${RSA2048}`),
      txt('upper._domainkey.keys.example', `v=DKIM1; h=SHA256; p=${RSA2048}`),
      txt('broken._domainkey.keys.example', 'v=DKIM1; k=rsa; p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQ!!!!'),
      txt('loose._domainkey.keys.example', `v=DKIM1; p=${RSA2048};; `),
      // RFC 8301 §3.2 only obliges verifiers up to 4096 bits.
      txt('huge._domainkey.keys.example', `v=DKIM1; p=${generateKeyPairSync('rsa', { modulusLength: 4160 }).publicKey.export({ format: 'der', type: 'spki' }).toString('base64')}`),
    ],
  };
  const resolver = new ZoneResolver([zone]);

  it.each([
    ['short', 'dkim-key-too-short', 'warning'],
    ['sha1', 'dkim-sha1-only', 'warning'],
    ['upper', 'dkim-hash-unusable', 'warning'],
    ['broken', 'dkim-invalid-key', 'warning'],
    ['loose', 'dkim-record-nonstandard', 'info'],
    ['huge', 'dkim-key-oversized', 'info'],
  ])('selector %s → %s (%s)', async (selector, id, severity) => {
    const probe = await probeDkim('keys.example', resolver, { selectors: [selector], useBuiltInList: false });
    const finding = probe.findings.find((f) => f.id === id);
    expect(finding?.severity).toBe(severity);
    expect(finding?.title).toContain(`'${selector}'`);
  });

  it('h=SHA256 explains that names are case-sensitive', async () => {
    const probe = await probeDkim('keys.example', resolver, { selectors: ['upper'], useBuiltInList: false });
    expect(probe.findings.find((f) => f.id === 'dkim-hash-unusable')?.detail).toContain("write 'sha256'");
  });

  it('with hashNameCase ignore-case, h=SHA256 is accepted and raises nothing', async () => {
    const probe = await probeDkim('keys.example', resolver, { selectors: ['upper'], useBuiltInList: false, parse: { hashNameCase: 'ignore-case' } });
    expect(probe.findings.map((f) => f.id)).toEqual(['dkim-found']);
  });

  it('a too-short key is found but not usable, and is still the best key when alone', async () => {
    const probe = await probeDkim('keys.example', resolver, { selectors: ['short'], useBuiltInList: false });
    expect(probe.found[0]).toMatchObject({ keyLength: 512, usable: false });
    expect(probe.bestKey?.selector).toBe('short');
    expect(probe.findings.some((f) => f.id === 'dkim-found')).toBe(false);
  });
});

describe('chooseBestKey', () => {
  const make = (selector: string, record: string): DkimKey => {
    const outcome = parseDkimKeyRecord(record);
    const parsed = 'record' in outcome ? outcome.record : null;
    return {
      selector,
      name: `${selector}._domainkey.example.com`,
      origin: 'list',
      record,
      outcome,
      keyType: parsed?.key.type ?? null,
      keyLength: parsed?.key.bits ?? null,
      testing: false,
      strict: false,
      revoked: outcome.status === 'revoked',
      usable: outcome.status === 'valid',
      provider: null,
      providerEvidence: null,
      cnameTarget: null,
    };
  };
  const rsa1024 = make('a', `p=${RSA1024}`);
  const rsa2048 = make('b', `p=${RSA2048}`);
  const rsa2048Later = make('c', `p=${RSA2048}`);
  const ed = make('d', `k=ed25519; p=${ED25519}`);
  const short = make('e', `p=${RSA512}`);
  const revoked = make('f', 'p=');

  it.each<[string, DkimKey[], string | null]>([
    ['nothing found', [], null],
    ['a usable key beats a longer list position', [revoked, short, rsa1024], 'a'],
    ['a too-short key beats a revoked one', [revoked, short], 'e'],
    ['RSA beats Ed25519', [ed, rsa1024], 'a'],
    ['Ed25519 beats an unusable RSA key', [short, ed], 'd'],
    ['longer RSA wins', [rsa1024, rsa2048], 'b'],
    ['ties go to the first in probe order', [rsa2048, rsa2048Later], 'b'],
    ['ties go to the first in probe order, reversed', [rsa2048Later, rsa2048], 'c'],
  ])('%s', (_name, found, expected) => {
    expect(chooseBestKey(found)?.selector ?? null).toBe(expected);
  });
});
