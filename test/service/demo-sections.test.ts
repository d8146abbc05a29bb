/**
 * The demo shows every section working offline (issue 42 item 3): the DNSSEC demo domains (secure,
 * bogus with its fix, insecure) validated against the demo's own trust anchor, which the page names,
 * and DANE on a demo MX; through `serve --demo` (a real listening server) and `check --demo-zones`.
 * The demo's signatures outlast the tests (their dates are checked here).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseSignedZone } from '../../packages/engine/src/zones/signed-zonefile.js';
import { TYPE } from '../../packages/engine/src/dns/canonical.js';
import { DEMO_DNSSEC_DOMAINS, DEMO_DNSSEC_ZONES_DIR } from '../../src/service/demo-dnssec.js';
import { DEMO_API_KEY } from '../../src/cli/serve.js';
import { DEMO_MARK_AUTHORITY } from '../../src/service/demo-transport.js';
import { X509Certificate } from 'node:crypto';
import { checkBimi } from '../../packages/engine/src/bimi/index.js';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import { loadZoneDirectory } from '../../packages/engine/src/zones/load.js';
import { captureIo } from '../cli/helpers.js';
import { textContent } from '../web/helpers.js';

/** What each DNSSEC demo domain must show. */
const EXPECTED_DNSSEC: Record<string, { status: string; code: number | null }> = {
  'dnssec-secure.example': { status: 'secure', code: null },
  'dnssec-bogus.example': { status: 'bogus', code: 7 },
  'dnssec-insecure.example': { status: 'insecure', code: null },
};

describe('the demo DNSSEC fixtures', () => {
  it('lists one domain per state, each with a signed (or unsigned) zone and a fixture zone for the check', () => {
    expect(DEMO_DNSSEC_DOMAINS.map((d) => d.domain).sort()).toEqual(Object.keys(EXPECTED_DNSSEC).sort());
    const fixtureZones = readdirSync('fixtures/zones');
    for (const { domain } of DEMO_DNSSEC_DOMAINS) expect(fixtureZones).toContain(`${domain}.zone`);
    const scenarios = JSON.parse(readFileSync('fixtures/scenarios.json', 'utf8')) as { input: string }[];
    for (const { domain } of DEMO_DNSSEC_DOMAINS) expect(scenarios.map((s) => s.input)).toContain(domain);
  });

  it('signs every demo zone (but the bogus one) until at least 2040, so the demo and its tests keep working', () => {
    const until = Date.UTC(2040, 0, 1) / 1000;
    const checked: string[] = [];
    for (const file of readdirSync(DEMO_DNSSEC_ZONES_DIR).filter((f) => f.endsWith('.signed'))) {
      const zone = parseSignedZone(readFileSync(join(DEMO_DNSSEC_ZONES_DIR, file), 'utf8'), { file });
      const expirations = zone.records.filter((r) => r.type === TYPE.RRSIG).map((r) => r.rdata.readUInt32BE(8));
      expect(expirations.length).toBeGreaterThan(0);
      if (zone.origin === 'dnssec-bogus.example') expect(Math.max(...expirations)).toBeLessThan(Date.now() / 1000);
      else expect(Math.min(...expirations), file).toBeGreaterThan(until);
      checked.push(zone.origin || '.');
    }
    expect(checked.sort()).toEqual(['.', 'dnssec-bogus.example', 'dnssec-secure.example', 'example']);
  });
});

describe('the demo BIMI material', () => {
  it('is valid until at least 2040 (every certificate: the authority, the VMC, the logo host)', () => {
    for (const file of ['mva-root.pem', 'vmc.pem', 'web-ca.pem', 'host.pem']) {
      const pem = readFileSync(join('fixtures/demo-bimi', file), 'utf8');
      for (const block of pem.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? []) {
        const certificate = new X509Certificate(block);
        expect(new Date(certificate.validTo).getTime(), `${file}: ${certificate.subject}`).toBeGreaterThan(Date.UTC(2040, 0, 1));
        expect(new Date(certificate.validFrom).getTime(), file).toBeLessThanOrEqual(Date.now());
      }
    }
  });

  it('is never trusted outside the demo: the shipped roots alone refuse the VMC', async () => {
    const resolver = new ZoneResolver(await loadZoneDirectory('fixtures/demo-transport/zones'));
    // Without the demo's HTTPS host the fetch fails; the certificate itself is judged against the shipped roots.
    const { checkMarkCertificate, shippedBimiRoots } = await import('../../packages/engine/src/bimi/index.js');
    const judged = checkMarkCertificate({ pem: readFileSync('fixtures/demo-bimi/vmc.pem', 'utf8'), url: 'u', domain: 'brand.example', organizationalDomain: 'brand.example', selector: 'default', logo: readFileSync('fixtures/demo-bimi/logo.svg'), roots: shippedBimiRoots(), now: new Date() });
    expect(judged.chain.trusted).toBe(false);
    expect((await checkBimi('brand.example', { resolver })).grade).not.toMatch(/^ready/);
  });
});

describe('check --demo-zones', () => {
  it.each(Object.entries(EXPECTED_DNSSEC))('%s: DNSSEC %o, validated in process from the demo anchor', async (domain, expected) => {
    const { main } = await import('../../src/cli/main.js');
    const { io, stdout } = captureIo();
    await main(['check', '--demo-zones', '--json', domain], io);
    const result = JSON.parse(stdout()) as { dnssec: { status: string; reason: { code: number | null } }; verdict: string };
    expect({ status: result.dnssec.status, code: result.dnssec.reason.code }).toEqual(expected);
    expect(result.verdict).toBe('protected');
  });

  it.each([
    ['2030-06-01', 'dnssec-secure.example', 'secure', null],
    ['2046-02-01T00:00:00Z', 'dnssec-secure.example', 'bogus', 7],
    ['2024-01-10', 'dnssec-secure.example', 'bogus', 8],
    ['2030-06-01T12:00:00+02:00', 'dnssec-bogus.example', 'bogus', 7],
  ])('--at %s judges %s\'s signatures at that time: %s (issue 42)', async (at, domain, status, code) => {
    const { main } = await import('../../src/cli/main.js');
    const { io, stdout } = captureIo();
    await main(['check', '--demo-zones', '--json', '--at', at, domain], io);
    const result = JSON.parse(stdout()) as { dnssec: { status: string; reason: { code: number | null } } };
    expect({ status: result.dnssec.status, code: result.dnssec.reason.code }).toEqual({ status, code });
  });

  it('leaves a demo domain outside the signed set not-checked (its zone file carries no signatures)', async () => {
    const { main } = await import('../../src/cli/main.js');
    const { io, stdout } = captureIo();
    await main(['check', '--demo-zones', '--json', 'p-none.example'], io);
    expect((JSON.parse(stdout()) as { dnssec: { status: string } }).dnssec.status).toBe('not-checked');
  });
});

describe('the demo page (inject)', () => {
  it('lists every section\'s demo domains, and a DNSSEC demo domain\'s result shows its state and the demo anchor', async () => {
    const { loadDemoSettings, withDemoBimiDomains, withDemoDnssecDomains, withDemoReportDomains, withDemoTransportDomains } = await import('../../src/cli/demo.js');
    const { DEMO_SCENARIOS_FILE, DEMO_ZONES_DIR } = await import('../../src/cli/serve.js');
    const { loadDemoDnssec, isDemoDnssecDomain } = await import('../../src/service/demo-dnssec.js');
    const { checkDomain } = await import('../../packages/engine/src/check.js');
    const { fixtureApp } = await import('../web/helpers.js');
    const demo = withDemoBimiDomains(withDemoReportDomains(withDemoDnssecDomains(withDemoTransportDomains(await loadDemoSettings(DEMO_SCENARIOS_FILE, DEMO_ZONES_DIR)))));
    const dnssec = await loadDemoDnssec();
    const resolver = new ZoneResolver(await loadZoneDirectory(DEMO_ZONES_DIR));
    const { app } = await fixtureApp({ overrides: { pages: { demo }, check: (domain) => checkDomain(domain, { resolver, ...(isDemoDnssecDomain(dnssec, domain) ? { dnssec: dnssec.options } : {}) }) } });
    try {
      const home = (await app.inject({ url: '/' })).body;
      for (const id of ['demo-domains', 'demo-transport', 'demo-dnssec', 'demo-bimi', 'demo-reports']) expect(home, id).toContain(`id="${id}"`);
      for (const [domain, expected] of Object.entries(EXPECTED_DNSSEC)) {
        const page = await app.inject({ url: `/check/${domain}` });
        expect(page.statusCode).toBe(200);
        expect(page.body).toContain(`data-dnssec="${expected.status}"`);
        expect(textContent(page.body)).toContain("Validated against the demo's own root key (fixtures/demo-dnssec/root-anchor.ds), not the IANA root's.");
      }
    } finally {
      await app.close();
    }
  });
});

describe('serve --demo', () => {
  it('lists the DNSSEC demo domains and the anchor on the home page; each result shows its state (the bogus one its fix); DANE holds on the demo MX; the demo reports are stored', async () => {
    const { main } = await import('../../src/cli/main.js');
    let stop!: (signal: string) => void;
    const { io, stderr } = captureIo('', { stop: new Promise((resolve) => (stop = resolve)) });
    const running = main(['serve', '--demo', '--port', '0', '--log-format', 'json'], io);
    try {
      await expect.poll(() => stderr(), { timeout: 15_000 }).toContain('listening on');
      const url = /listening on (http:\/\/[^ ]+)/.exec(stderr())![1]!;
      const home = await (await fetch(`${url}/`)).text();
      expect(home).toContain('id="demo-dnssec"');
      expect(textContent(home)).toContain("validated against the demo's own root key (fixtures/demo-dnssec/root-anchor.ds), not the IANA root's");
      for (const domain of Object.keys(EXPECTED_DNSSEC)) expect(home).toContain(`href="/check/${domain}"`);
      for (const [domain, expected] of Object.entries(EXPECTED_DNSSEC)) {
        const json = (await (await fetch(`${url}/check/${domain}`, { headers: { accept: 'application/json' } })).json()) as { dnssec: { status: string; reason: { code: number | null } } };
        expect({ status: json.dnssec.status, code: json.dnssec.reason.code }, domain).toEqual(expected);
        const page = await (await fetch(`${url}/check/${domain}`)).text();
        expect(page).toContain(`data-dnssec="${expected.status}"`);
        expect(page).toContain('id="dnssec-anchor"');
        expect(page.includes('id="dnssec-fix"'), domain).toBe(expected.status === 'bogus');
      }
      const bogus = await (await fetch(`${url}/check/dnssec-bogus.example`)).text();
      // The page's fix is the engine's own next step for the state, word for word (one source).
      const bogusJson = (await (await fetch(`${url}/check/dnssec-bogus.example`, { headers: { accept: 'application/json' } })).json()) as { dnssec: { nextSteps: string[] } };
      expect(bogusJson.dnssec.nextSteps[0]).toMatch(/^Sign the zone again \(its signatures have expired\)/);
      expect(textContent(bogus)).toContain(`Fix: ${bogusJson.dnssec.nextSteps[0]}`);
      // DANE: the signed TLSA on the demo MX matches the certificate the demo's own mail server presents.
      const transport = (await (await fetch(`${url}/transport/dnssec-secure.example`, { headers: { accept: 'application/json' } })).json()) as {
        verdict: string;
        dane?: { status?: string; mx?: { tlsa?: string; addresses?: { dane?: string }[] }[] };
        mx: { addresses: { dane?: string; outcome: string }[] }[];
      };
      expect(JSON.stringify(transport)).toContain('"dane":"match"');
      // BIMI: brand.example's logo and VMC chain to the demo authority, which the home page and the result name.
      expect(textContent(home)).toContain(`the logo's mark certificate is issued by the demo's own authority, ${DEMO_MARK_AUTHORITY}`);
      expect(textContent(home)).toContain('a demo authority that only this demo trusts, and only for its own domains');
      expect(home).toContain('href="/bimi/brand.example"');
      const bimi = (await (await fetch(`${url}/bimi/brand.example`, { headers: { accept: 'application/json' } })).json()) as {
        grade: string;
        logo: { violations: unknown[] };
        certificate: { kind: string; chain: { trusted: boolean; anchor: string } };
      };
      expect(bimi.grade).toBe('ready-vmc');
      expect(bimi.logo.violations).toEqual([]);
      expect(bimi.certificate.chain).toMatchObject({ trusted: true, anchor: `added root: ${DEMO_MARK_AUTHORITY}` });
      const bimiPage = await (await fetch(`${url}/bimi/brand.example`)).text();
      expect(textContent(bimiPage)).toContain(`chain trusted (to added root: ${DEMO_MARK_AUTHORITY}`);
      // The demo's reports, stored for its organisation: readiness ready and blocked, a forwarder, an unauthorised sender, a TLS failure.
      expect(textContent(home)).toContain('DMARC and TLS reports: the demo stores a day of reports for these');
      const reports = async (domain: string) =>
        (await (await fetch(`${url}/api/tools/v1/spoof-checker/reports/domains/${domain}`, { headers: { authorization: `Bearer ${DEMO_API_KEY}` } })).json()) as {
          reports: number;
          readiness: { verdict: string };
          senders: { source: string; class: string }[];
          tls: { reports: number; policies: { failed: number; failures: { resultType: string }[] }[] };
        };
      const ready = await reports('p-reject.example');
      expect([ready.reports, ready.readiness.verdict]).toEqual([1, 'ready']);
      const blocked = await reports('p-none.example');
      expect(blocked.readiness.verdict).toBe('not-ready');
      expect(Object.fromEntries(blocked.senders.map((s) => [s.source, s.class]))).toEqual({
        '198.51.100.25': 'legitimate',
        '198.51.100.200': 'legitimate',
        '192.0.2.77': 'forwarded',
        '203.0.113.66': 'unauthorised',
      });
      const broken = await reports('sts-broken.example');
      expect(broken.tls.policies[0]).toMatchObject({ failed: 57, failures: [{ resultType: 'certificate-host-mismatch' }] });
      expect((await reports('sts-enforced.example')).tls.policies[0]).toMatchObject({ failed: 0 });
    } finally {
      stop('SIGTERM');
      expect(await running).toBe(0);
    }
  }, 60_000);
});
