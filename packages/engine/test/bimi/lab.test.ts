/**
 * checkBimi end to end against the real lab (./lab.ts): zones, a loopback HTTPS host with a test
 * TLS authority, and a fake Mark Verifying Authority added as an extra root.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bimiRootsFromPem, checkBimi, checkMarkCertificate, shippedBimiRoots, type BimiGrade, type BimiOptions } from '../../src/bimi/index.js';
import { FaultyResolver } from '../../src/dns/faults.js';
import { LOGO_A, startBimiLab, type BimiLab } from './lab.js';

let lab: BimiLab;
beforeAll(async () => {
  lab = await startBimiLab();
}, 60_000);
afterAll(async () => {
  await lab?.close();
});

const options = (extra: Partial<BimiOptions> = {}): BimiOptions => ({
  resolver: lab.resolver,
  connectPorts: { https: lab.httpsPort },
  tlsCa: lab.tlsCaPem,
  allowPrivateAddresses: true,
  extraRoots: lab.mvaRootPem,
  ...extra,
});
const ids = (result: { findings: { id: string }[] }) => result.findings.map((f) => f.id);

describe('checkBimi in the lab: grades', () => {
  it('no record: not-published, the record to publish first, no fetch', async () => {
    const result = await checkBimi('none.example', options());
    expect(result).toMatchObject({ grade: 'not-published', record: null, logo: null, certificate: null, dmarc: { eligible: true } });
    expect(result.nextSteps[0]).toContain('Publish TXT default._bimi.none.example');
    expect(result.providers.gmail).toEqual({ eligible: false, why: 'no BIMI record is published' });
  });

  it('p=none: not-ready, and the DMARC record that blocks it is named', async () => {
    const result = await checkBimi('pnone.example', options());
    expect(result.grade).toBe('not-ready');
    expect(result.dmarc).toMatchObject({ eligible: false, blockedBy: [{ record: '_dmarc.pnone.example', reason: 'p-none' }] });
    expect(result.logo?.violations).toEqual([]);
    expect(result.nextSteps[0]).toMatch(/^Move _dmarc\.pnone\.example to p=quarantine/);
  });

  it('quarantine with pct=50: not-ready', async () => {
    const result = await checkBimi('pct.example', options());
    expect(result.dmarc.blockedBy.map((b) => b.reason)).toEqual(['quarantine-pct']);
    expect(result.grade).toBe('not-ready');
  });

  it('a valid self-asserted logo: ready-self-asserted; Yahoo yes, Gmail and Apple no', async () => {
    const result = await checkBimi('self.example', options());
    expect(result.grade).toBe('ready-self-asserted');
    expect(result.record).toEqual({ name: 'default._bimi.self.example', text: 'v=BIMI1; l=https://logos.lab.example/a.svg;', at: 'author-domain' });
    expect(result.logo).toMatchObject({ url: 'https://logos.lab.example/a.svg', fetch: null, violations: [], title: 'Brand Ltd', viewBox: [0, 0, 100, 100] });
    expect(result.providers.yahoo.eligible).toBe(true);
    expect(result.providers.gmail.eligible).toBe(false);
    expect(result.providers.apple.eligible).toBe(false);
    expect(result.certificate).toBeNull();
  });

  it('a subdomain without a record falls back to the organizational domain', async () => {
    const result = await checkBimi('mail.self.example', options());
    expect(result.queries.map((q) => [q.name, q.outcome])).toEqual([
      ['default._bimi.mail.self.example', 'none'],
      ['default._bimi.self.example', 'record'],
    ]);
    expect(result.record?.at).toBe('organizational-domain');
    expect(result.grade).toBe('ready-self-asserted');
  });

  it('a custom selector falls back to the organizational domain with the same selector, never to default', async () => {
    const result = await checkBimi('mail.self.example', options({ selector: 'Brand' }));
    expect(result.selector).toBe('brand');
    expect(result.queries.slice(0, 2).map((q) => [q.name, q.outcome])).toEqual([
      ['brand._bimi.mail.self.example', 'none'],
      ['brand._bimi.self.example', 'none'],
    ]);
    expect(result.grade).toBe('not-published');
    expect(result.nextSteps[0]).toContain('brand._bimi.mail.self.example');
  });

  it('a logo with a script: not-ready, the violation with its line, the fix first among the logo steps', async () => {
    const result = await checkBimi('script.example', options());
    expect(result.grade).toBe('not-ready');
    expect(result.logo?.violations.map((v) => [v.rule, v.line])).toEqual([['script', 5]]);
    expect(result.nextSteps).toContainEqual(expect.stringContaining('line 5'));
  });

  it('a logo over the fetch cap is a size violation', async () => {
    const result = await checkBimi('big.example', options());
    expect(result.grade).toBe('not-ready');
    expect(result.logo?.violations.map((v) => v.rule)).toEqual(['size']);
  });

  it('a redirect is followed; a redirect to http:// is refused', async () => {
    expect((await checkBimi('moved.example', options())).grade).toBe('ready-self-asserted');
    const refused = await checkBimi('to-http.example', options());
    expect(refused.grade).toBe('not-ready');
    expect(refused.logo?.fetch?.error).toBe('bad-url');
  });

  it('a failed fetch (HTTP 404) is unknown, never not-published', async () => {
    const result = await checkBimi('fetchfail.example', options());
    expect(result.grade).toBe('unknown');
    expect(result.logo?.fetch).toMatchObject({ error: 'http-status', httpStatus: 404 });
  });

  it('a failed lookup is unknown (faults apply to the BIMI lookups)', async () => {
    const resolver = new FaultyResolver(lab.resolver, [{ name: 'default._bimi.self.example', type: 'TXT', fault: { kind: 'servfail' } }]);
    const result = await checkBimi('self.example', options({ resolver }));
    expect(result.grade).toBe('unknown');
    expect(result.queries).toEqual([{ name: 'default._bimi.self.example', outcome: 'error', error: expect.stringContaining('SERVFAIL') }]);
  });

  it('declined, several records, a record in the wrong place', async () => {
    expect((await checkBimi('declined.example', options())).grade).toBe('declined');
    const two = await checkBimi('two.example', options());
    expect(two.grade).toBe('not-ready');
    expect(ids(two)).toContain('bimi-multiple-records');
    const misplaced = await checkBimi('misplaced.example', options());
    expect(misplaced.grade).toBe('not-published');
    expect(misplaced.nextSteps[0]).toBe('Move the record from _bimi.misplaced.example to default._bimi.misplaced.example.');
  });

  it('lps=: a matching local part uses <local part>._bimi.<domain>; another keeps the selector record', async () => {
    const sales = await checkBimi('lps.example', options({ localPart: 'Sales.Team+news' }));
    expect(sales.record?.name).toBe('sales-team._bimi.lps.example');
    expect(sales.logo?.url).toBe('https://logos.lab.example/b.svg');
    expect(sales.queries.map((q) => [q.name, q.outcome])).toContainEqual(['sales-team._bimi.lps.example', 'record']);
    const ceo = await checkBimi('lps.example', options({ localPart: 'ceo' }));
    expect(ceo.record?.name).toBe('default._bimi.lps.example');
    expect(ceo.tags?.lps).toEqual(['sales']);
    const { checkDomain } = await import('../../src/check.js');
    const viaAddress = await checkDomain('sales_team@lps.example', { resolver: lab.resolver, bimi: { connectPorts: { https: lab.httpsPort }, tlsCa: lab.tlsCaPem, allowPrivateAddresses: true } });
    expect(viaAddress.bimi?.record?.name).toBe('sales-team._bimi.lps.example');
  });

  it('without the TLS test CA the logo host is untrusted: not-ready, never ready', async () => {
    const result = await checkBimi('self.example', options({ tlsCa: undefined }));
    expect(result.logo?.fetch?.error).toBe('cert-untrusted');
    expect(result.grade).toBe('not-ready');
  });

  it('without --allow-private-addresses the loopback host is refused', async () => {
    const result = await checkBimi('self.example', options({ allowPrivateAddresses: false }));
    expect(result.logo?.fetch?.error).toBe('refused-private');
  });
});

describe('checkBimi in the lab: mark certificates', () => {
  it('a valid VMC: ready-vmc, every provider eligible, the logotype hash equal', async () => {
    const result = await checkBimi('vmc.example', options());
    expect(result.grade).toBe('ready-vmc');
    expect(result.certificate).toMatchObject({
      kind: 'VMC',
      markType: 'Registered Mark',
      chain: { trusted: true, problems: [] },
      bimiEku: true,
      sanMatch: true,
      logotype: { mediaType: 'image/svg+xml', hashAlg: 'sha256', hashOk: true },
      crl: { present: true, urls: ['http://crl.mva.test/inter.crl'] },
    });
    expect(result.providers).toEqual({
      gmail: { eligible: true, why: expect.stringContaining('check mark') },
      apple: { eligible: true, why: 'a VMC' },
      yahoo: { eligible: true, why: expect.any(String) },
    });
  });

  it('a valid CMC (SAN in the selector form): ready-cmc, Apple not eligible', async () => {
    const result = await checkBimi('cmc.example', options());
    expect(result.grade).toBe('ready-cmc');
    expect(result.certificate?.kind).toBe('CMC');
    expect(result.providers.gmail.eligible).toBe(true);
    expect(result.providers.apple).toEqual({ eligible: false, why: 'Apple Mail needs a VMC; a CMC is not accepted' });
  });

  it('a VMC from an Entrust authority issued after 2024-11-15: Gmail yes, Apple no', async () => {
    const result = await checkBimi('entrust.example', options());
    expect(result.grade).toBe('ready-vmc');
    expect(result.certificate?.chain.anchor).toContain('Entrust');
    expect(result.providers.gmail.eligible).toBe(true);
    expect(result.providers.apple).toEqual({ eligible: false, why: 'Apple Mail does not trust Entrust VMCs issued after 2024-11-15; replace it at renewal' });
  });

  it('without the fake MVA root the same VMC is untrusted, and the problem names the missing root, not a missing certificate (issue 42)', async () => {
    const result = await checkBimi('vmc.example', options({ extraRoots: undefined }));
    expect(result.grade).toBe('not-ready');
    expect(result.certificate?.chain.trusted).toBe(false);
    const problems = result.certificate?.chain.problems ?? [];
    expect(problems.join(' ')).toContain('but its root "Test Verified Mark Root CA" is not among the Mark Verifying Authority roots trusted here (5 shipped or given)');
    expect(problems.join(' ')).not.toContain('append the issuing CA');
  });

  it('ships the five VMC roots of the public lists, Entrust VMCR1 included, each fingerprint checked on load (issue 42)', () => {
    const roots = shippedBimiRoots();
    expect(roots.map((r) => [r.name, r.certificate.fingerprint256.replace(/:/g, '')])).toEqual([
      ['DigiCert Verified Mark Root CA', '504386C9EE8932FECC95FADE427F69C3E2534B7310489E300FEE448E33C46B42'],
      ['Entrust Verified Mark Root Certification Authority - VMCR1', '7831D95A47D42508CD5C9E6264F9096BAC19F04EB9B7C8BDD35FFFC71C189617'],
      ['GlobalSign Verified Mark Root R42', 'CD122CB877C6928B9017B0F0B80DBD508196300BBD03CD7356C3BEEF524E7E0B'],
      ['SSL.com VMC RSA Root CA 2024', '8F9D1B7698886782A599B48510651C66A1AA0C5CA3192097BDC68534154BD30D'],
      ['SSL.com VMC ECC Root CA 2024', '1B82E7F4910B51E3E802A493ACDC17FF58EAC8B9EB7C09B52AC6CD2EFB83598C'],
    ]);
    for (const root of roots) {
      expect(root.certificate.ca, root.name).toBe(true);
      expect(root.certificate.verify(root.certificate.publicKey), root.name).toBe(true);
      expect(new Date(root.certificate.validTo).getTime(), root.name).toBeGreaterThan(Date.UTC(2040, 0, 1));
    }
  });

  it.each([
    ['wrongsan.example', { sanMatch: false, chain: { trusted: true } }],
    ['noeku.example', { bimiEku: false, chain: { trusted: true } }],
    ['mismatch.example', { logotype: { hashOk: false }, chain: { trusted: true } }],
  ])('%s: not-ready', async (domain, expected) => {
    const result = await checkBimi(domain, options());
    expect(result.grade).toBe('not-ready');
    expect(result.certificate).toMatchObject(expected);
  });

  it('a forged certificate copying the issuing CA name: the signature does not verify', async () => {
    const result = await checkBimi('forged.example', options());
    expect(result.grade).toBe('not-ready');
    expect(result.certificate?.chain.trusted).toBe(false);
    expect(result.certificate?.chain.problems.join(' ')).toMatch(/signature .* does not verify/);
  });

  it('a root sent in the bundle is never an anchor', async () => {
    const result = await checkBimi('selfsigned.example', options());
    expect(result.certificate?.chain).toMatchObject({ trusted: false, anchor: null });
    expect(result.certificate?.chain.problems.join(' ')).toContain('self-signed');
  });

  it('a bundle without its issuing CA asks for it to be appended', async () => {
    const result = await checkBimi('leafonly.example', options());
    expect(result.certificate?.chain.trusted).toBe(false);
    expect(result.nextSteps).toContain('Append the issuing CA certificate after yours in https://logos.lab.example/leafonly.pem (leaf first).');
  });

  it('expired, and not yet valid (an injected clock): the chain says so and names the date', () => {
    const logo = Buffer.from(LOGO_A);
    const at = (now: Date) => checkMarkCertificate({ pem: lab.pems.vmc as string, url: 'https://logos.lab.example/vmc.pem', domain: 'vmc.example', organizationalDomain: 'vmc.example', selector: 'default', logo, roots: bimiRootsFromPem(lab.mvaRootPem), now });
    const valid = at(new Date());
    expect(valid.chain).toEqual({ trusted: true, anchor: 'extra root: Test Verified Mark Root CA', problems: [] });
    const later = at(new Date(Date.now() + 2 * 365 * 86_400_000));
    expect(later.chain.trusted).toBe(false);
    expect(later.chain.problems).toContainEqual(expect.stringMatching(/^the mark certificate expired on \d{4}-\d{2}-\d{2}$/));
    expect(later.daysLeft).toBeLessThan(0);
    const earlier = at(new Date(Date.now() - 2 * 86_400_000));
    expect(earlier.chain.problems).toContainEqual(expect.stringMatching(/^the mark certificate is not valid before/));
  });

  it('the shipped MVA roots load with their listed fingerprints, and alone do not trust the lab', () => {
    const roots = shippedBimiRoots();
    expect(roots.map((r) => r.name)).toEqual(['DigiCert Verified Mark Root CA', 'Entrust Verified Mark Root Certification Authority - VMCR1', 'GlobalSign Verified Mark Root R42', 'SSL.com VMC RSA Root CA 2024', 'SSL.com VMC ECC Root CA 2024']);
    const result = checkMarkCertificate({ pem: lab.pems.vmc as string, url: 'u', domain: 'vmc.example', organizationalDomain: 'vmc.example', selector: 'default', logo: null, roots, now: new Date() });
    expect(result.chain.trusted).toBe(false);
    expect(result.logotype).toEqual({ mediaType: 'image/svg+xml', hashAlg: 'sha256', hashOk: false });
  });
});

describe('the JSON shape, and checkDomain', () => {
  it('every lab result validates against schema/spoof-check-result.schema.json#/$defs/BimiResult, and the grade enum is the type', async () => {
    const { readFileSync } = await import('node:fs');
    const Ajv2020Module = await import('ajv/dist/2020.js');
    const Ajv2020 = ((Ajv2020Module as unknown as { default: { default?: unknown } }).default.default ?? (Ajv2020Module as unknown as { default: unknown }).default) as new (options: object) => {
      addSchema(schema: unknown, key: string): void;
      getSchema(key: string): ((value: unknown) => boolean) & { errors?: unknown };
    };
    const schema = JSON.parse(readFileSync(new URL('../../schema/spoof-check-result.schema.json', import.meta.url), 'utf8'));
    const ajv = new Ajv2020({ allErrors: true, strict: true });
    const formats = await import('ajv-formats');
    const addFormats = ((formats as unknown as { default: { default?: unknown } }).default.default ?? (formats as unknown as { default: unknown }).default) as (ajv: unknown) => void;
    addFormats(ajv);
    ajv.addSchema(schema, 'result');
    const validate = ajv.getSchema('result#/$defs/BimiResult');
    const grades: BimiGrade[] = ['ready-vmc', 'ready-cmc', 'ready-self-asserted', 'not-ready', 'declined', 'not-published', 'unknown'];
    expect(schema.$defs.BimiGrade.enum).toEqual(grades);
    const seen = new Set<string>();
    for (const domain of ['none.example', 'pnone.example', 'self.example', 'script.example', 'big.example', 'fetchfail.example', 'declined.example', 'two.example', 'vmc.example', 'cmc.example', 'forged.example', 'mismatch.example']) {
      const result = await checkBimi(domain, options());
      seen.add(result.grade);
      expect(validate(result), `${domain}: ${JSON.stringify(validate.errors)}`).toBe(true);
      // The shape, at least.
      expect(Object.keys(result)).toEqual(expect.arrayContaining(['grade', 'record', 'dmarc', 'logo', 'certificate', 'providers', 'findings']));
    }
    expect([...seen].sort()).toEqual([...grades].sort());
  });

  it('checkDomain adds `bimi` when asked, and the spoof verdict does not move', async () => {
    const { checkDomain } = await import('../../src/check.js');
    const plain = await checkDomain('vmc.example', { resolver: lab.resolver });
    const withBimi = await checkDomain('vmc.example', { resolver: lab.resolver, bimi: { connectPorts: { https: lab.httpsPort }, tlsCa: lab.tlsCaPem, allowPrivateAddresses: true, extraRoots: lab.mvaRootPem } });
    expect(plain.bimi).toBeUndefined();
    expect(withBimi.bimi?.grade).toBe('ready-vmc');
    expect(withBimi.verdict).toBe(plain.verdict);
    expect(withBimi.reasons).toEqual(plain.reasons);
  });
});
