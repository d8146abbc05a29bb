/**
 * checkTransport against the real lab (./lab.ts): a test CA, an HTTPS policy host and SMTP servers
 * on loopback, zones pointing the lab domains at them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkTransport, TransportCache, type TransportOptions } from '../../packages/engine/src/transport/index.js';
import { probeStarttls } from '../../packages/engine/src/transport/starttls.js';
import { startLab, SMTP_TLS, type Lab } from './lab.js';

let lab: Lab;
beforeAll(async () => {
  lab = await startLab();
});
afterAll(async () => {
  await lab?.close();
});

const options = (extra: Partial<TransportOptions> = {}): TransportOptions => ({
  resolver: lab.resolver,
  connectPorts: { smtp: lab.smtpPort, https: lab.httpsPort },
  tlsCa: lab.caPem,
  allowPrivateAddresses: true,
  ehloName: 'probe.lab.example',
  ...extra,
});

const outcomes = (result: Awaited<ReturnType<typeof checkTransport>>) => result.mx.flatMap((mx) => mx.addresses.map((a) => `${mx.host} ${a.outcome}`));
const ids = (result: Awaited<ReturnType<typeof checkTransport>>) => result.findings.map((f) => f.id);

describe('checkTransport in the lab', () => {
  it('a valid enforce policy over a covered MX with a valid certificate is enforced', async () => {
    const result = await checkTransport('enforce-ok.example', options());
    expect(result.verdict).toBe('enforced');
    expect(result.mtaSts).toEqual({
      status: 'enforce',
      record: 'v=STSv1; id=20260101',
      id: '20260101',
      policy: { mode: 'enforce', maxAge: 604800, mx: ['mx.enforce-ok.example'] },
      fetch: { url: 'https://mta-sts.enforce-ok.example/.well-known/mta-sts.txt', httpStatus: 200, error: null },
      problems: [],
    });
    expect(result.tlsRpt).toEqual({ status: 'valid', record: 'v=TLSRPTv1; rua=mailto:tls-reports@enforce-ok.example', rua: ['mailto:tls-reports@enforce-ok.example'] });
    expect(result.mx).toHaveLength(1);
    const [mx] = result.mx;
    expect(mx).toMatchObject({ host: 'mx.enforce-ok.example', preference: 10, mtaStsCovered: true });
    const [address] = mx!.addresses;
    expect(address).toMatchObject({ address: SMTP_TLS, outcome: 'ok' });
    expect(address!.tlsVersion).toMatch(/^TLSv1\.[23]$/);
    expect(address!.certificate!.san).toContain('mx.enforce-ok.example');
    expect(address!.certificate!.issuer).toContain('spoof-checker test CA');
    expect(Date.parse(address!.certificate!.notAfter)).toBeGreaterThan(Date.now());
    expect(ids(result)).toContain('mta-sts-enforced');
    // Exactly the keys of the shape.
    expect(Object.keys(result).sort()).toEqual(['findings', 'mtaSts', 'mx', 'tlsRpt', 'verdict']);
    expect(Object.keys(address!).sort()).toEqual(['address', 'addressClass', 'certificate', 'outcome', 'tlsVersion']);
  });

  it('without the test CA the same MX is cert-untrusted (the default roots only)', async () => {
    const result = await checkTransport('enforce-ok.example', options({ tlsCa: undefined }));
    expect(result.mtaSts.status).toBe('invalid');
    expect(result.mtaSts.fetch?.error).toBe('cert-untrusted');
    expect(outcomes(result)).toEqual(['mx.enforce-ok.example cert-untrusted']);
  });

  it('a wildcard one label too shallow leaves the MX uncovered: enforce is broken', async () => {
    const result = await checkTransport('wildcard-shallow.example', options());
    expect(result.mx[0]).toMatchObject({ host: 'a.b.wildcard-shallow.example', mtaStsCovered: false });
    expect(result.mx[0]!.addresses[0]!.outcome).toBe('ok');
    expect(result.verdict).toBe('broken');
    const finding = result.findings.find((f) => f.id === 'mta-sts-mx-not-covered');
    expect(finding?.severity).toBe('critical');
    expect(finding?.detail).toContain('mx: a.b.wildcard-shallow.example');
  });

  it('a redirecting policy host gives no policy, and the redirect is not followed', async () => {
    const before = lab.seen.https;
    const result = await checkTransport('redirect.example', options());
    expect(result.mtaSts.status).toBe('invalid');
    expect(result.mtaSts.fetch).toEqual({ url: 'https://mta-sts.redirect.example/.well-known/mta-sts.txt', httpStatus: 301, error: 'redirect' });
    expect(result.mtaSts.problems.join(' ')).toMatch(/redirect/);
    expect(lab.seen.https - before).toBe(1);
    expect(result.verdict).toBe('opportunistic');
  });

  it('two STS records are no policy, and no fetch is made', async () => {
    const result = await checkTransport('two-sts.example', options());
    expect(result.mtaSts).toMatchObject({ status: 'invalid', record: null, fetch: null, policy: null });
    expect(result.mtaSts.problems[0]).toMatch(/2 records/);
    expect(ids(result)).toContain('mta-sts-invalid');
  });

  it('unknown fields in the record and the policy are ignored (CRLF policy)', async () => {
    const result = await checkTransport('unknown-fields.example', options());
    expect(result.mtaSts).toMatchObject({ status: 'enforce', id: 'abc123', policy: { mode: 'enforce', maxAge: 86400, mx: ['*.unknown-fields.example'] } });
    expect(result.mtaSts.problems).toEqual(['unknown policy field(s) ignored: future_field']);
    expect(result.mx[0]!.mtaStsCovered).toBe(true);
    expect(result.verdict).toBe('enforced');
    // An unrelated TXT beside the TLS-RPT record is discarded, not an error.
    expect(result.tlsRpt.status).toBe('valid');
  });

  it('testing mode over an expired certificate: opportunistic, the MX is cert-expired', async () => {
    const result = await checkTransport('testing-expired.example', options());
    expect(result.mtaSts.status).toBe('testing');
    expect(outcomes(result)).toEqual(['mx.testing-expired.example cert-expired']);
    expect(result.mx[0]!.addresses[0]!.certificate!.notAfter).toBe('2020-02-01T00:00:00.000Z');
    expect(result.verdict).toBe('opportunistic');
    expect(result.findings.find((f) => f.id === 'mx-cert-expired')?.severity).toBe('warning');
  });

  it('an MX without STARTTLS is at-risk', async () => {
    const result = await checkTransport('no-starttls.example', options());
    expect(outcomes(result)).toEqual(['mx.no-starttls.example no-starttls']);
    expect(result.mx[0]!.addresses[0]).toMatchObject({ tlsVersion: null, certificate: null });
    expect(result.mtaSts.status).toBe('absent');
    expect(result.tlsRpt.status).toBe('absent');
    expect(result.verdict).toBe('at-risk');
    expect(ids(result)).toEqual(expect.arrayContaining(['mx-no-starttls', 'mta-sts-absent', 'tlsrpt-absent']));
  });

  it('a wrong-name certificate under enforce is broken (a matching CN does not count)', async () => {
    const result = await checkTransport('wrong-name.example', options());
    expect(outcomes(result)).toEqual(['mx.wrong-name.example cert-name-mismatch']);
    expect(result.mx[0]!.addresses[0]!.certificate).toMatchObject({ subject: 'CN=mx.wrong-name.example', san: ['elsewhere.example'] });
    expect(result.verdict).toBe('broken');
    expect(result.findings[0]).toMatchObject({ id: 'mx-cert-name-mismatch', severity: 'critical' });
  });

  it('a self-signed MX certificate is cert-untrusted', async () => {
    const result = await checkTransport('self-signed.example', options());
    expect(outcomes(result)).toEqual(['mx.self-signed.example cert-untrusted']);
    expect(result.verdict).toBe('opportunistic');
  });

  it.each([
    ['policy-404.example', 404, 'http-status'],
    ['policy-type.example', 200, 'content-type'],
    ['policy-big.example', 200, 'too-large'],
    ['policy-expired.example', null, 'cert-expired'],
    ['policy-wrong-name.example', null, 'cert-name-mismatch'],
    ['policy-self-signed.example', null, 'cert-untrusted'],
  ])('%s: the policy fetch fails with %s / %s and the status is invalid', async (domain, httpStatus, error) => {
    const result = await checkTransport(domain, options());
    expect(result.mtaSts.status).toBe('invalid');
    expect(result.mtaSts.fetch).toEqual({ url: `https://mta-sts.${domain}/.well-known/mta-sts.txt`, httpStatus, error });
    expect(result.mtaSts.id).toBe('1');
    expect(result.mx[0]!.mtaStsCovered).toBeNull();
  });

  it('a certificate failure of the policy host sends no HTTP request', async () => {
    const before = lab.seen.https;
    await checkTransport('policy-wrong-name.example', options());
    expect(lab.seen.https).toBe(before);
  });

  it.each([
    ['tlsrpt-nosemi.example', 'invalid', []],
    ['tlsrpt-http.example', 'invalid', []],
    ['tlsrpt-two.example', 'invalid', []],
    ['tlsrpt-ext.example', 'valid', ['mailto:a@tlsrpt-ext.example', 'https://r.tlsrpt-ext.example/x']],
  ])('TLS-RPT %s is %s', async (domain, status, rua) => {
    const result = await checkTransport(domain, options());
    expect(result.tlsRpt.status).toBe(status);
    expect(result.tlsRpt.rua).toEqual(rua);
    if (status === 'invalid') expect(ids(result)).toContain('tlsrpt-invalid');
  });

  it('nothing listening is unreachable, which counts neither way', async () => {
    const result = await checkTransport('unreachable.example', options());
    expect(outcomes(result)).toEqual(['mx.unreachable.example unreachable']);
    expect(result.verdict).toBe('untested');
    expect(result.findings.map((f) => f.id)).toContain('transport-untested');
  });

  it('enforce with a second MX offering no STARTTLS is broken, and each MX is reported', async () => {
    const result = await checkTransport('enforce-two-mx.example', options());
    expect(outcomes(result)).toEqual(['mx1.enforce-two-mx.example ok', 'mx2.enforce-two-mx.example no-starttls']);
    expect(result.mx.map((m) => m.mtaStsCovered)).toEqual([true, true]);
    expect(result.verdict).toBe('broken');
  });

  it('every address of an MX is probed, IPv4 and IPv6, each with its own outcome', async () => {
    const result = await checkTransport('dual-stack.example', options());
    expect(result.mx[0]!.addresses.map((a) => [a.address, a.outcome])).toEqual([
      ['127.0.0.2', 'ok'],
      ['::1', 'unreachable'], // nothing listens there
    ]);
    expect(result.verdict).toBe('enforced');
    expect(result.findings.map((f) => f.id)).toContain('mx-unreachable');
    const guarded = await checkTransport('dual-stack.example', options({ allowPrivateAddresses: false }));
    expect(guarded.mx[0]!.addresses.map((a) => a.outcome)).toEqual(['refused-private', 'refused-private']);
  });

  // 3 s: long enough for a loopback TLS handshake on a loaded machine, so only the silence can run it out.
  it('deadlines end a silent MX (unreachable) and a policy host that never answers (timeout)', async () => {
    const result = await checkTransport('slow.example', options({ timeoutMs: 3000 }));
    expect(result.mtaSts.fetch).toMatchObject({ httpStatus: null, error: 'timeout' });
    expect(result.mx[0]!.addresses[0]!.outcome).toBe('unreachable');
    expect(result.findings.find((f) => f.id === 'mx-unreachable')?.detail).toMatch(/timed out after 3000 ms waiting for the 220 greeting/);
  });

  it('a CNAME at _mta-sts is followed (RFC 8461 §8.2 delegation)', async () => {
    const result = await checkTransport('sts-cname.example', options());
    expect(result.mtaSts).toMatchObject({ status: 'enforce', record: 'v=STSv1; id=20260101', id: '20260101', policy: { mx: ['mx.sts-cname.example'] } });
    expect(result.verdict).toBe('enforced');
  });

  it('with no MX the domain itself is probed (implicit MX)', async () => {
    const result = await checkTransport('implicit-mx.example', options());
    expect(result.mx).toEqual([expect.objectContaining({ host: 'implicit-mx.example', preference: 0 })]);
    expect(outcomes(result)).toEqual(['implicit-mx.example ok']);
  });

  it('probe results are cached for the record TTL: a second check makes no new connection', async () => {
    const cache = new TransportCache();
    const first = await checkTransport('no-starttls.example', options({ cache }));
    const before = lab.seen.smtpPlain;
    const second = await checkTransport('no-starttls.example', options({ cache }));
    expect(lab.seen.smtpPlain).toBe(before);
    expect(second.mx).toEqual(first.mx);
    expect(cache.size).toBe(1);
  });

  it('rejects input that is not a domain', async () => {
    await expect(checkTransport('not a domain', options())).rejects.toMatchObject({ code: 'invalid_domain' });
  });
});

describe('the address guard in the probe', () => {
  it('without allowPrivateAddresses every loopback MX and policy host is refused-private and never connected to', async () => {
    const before = { ...lab.seen };
    const result = await checkTransport('enforce-ok.example', options({ allowPrivateAddresses: false }));
    expect(outcomes(result)).toEqual(['mx.enforce-ok.example refused-private']);
    expect(result.mx[0]!.addresses[0]).toEqual({ address: SMTP_TLS, outcome: 'refused-private', addressClass: 'loopback', tlsVersion: null, certificate: null });
    expect(result.verdict).toBe('untested');
    expect(result.mtaSts.fetch?.error).toBe('refused-private');
    expect(result.verdict).not.toBe('enforced');
    expect(result.findings.map((f) => f.id)).toContain('mx-refused-private');
    // The servers saw nothing: no SMTP connection, no HTTPS request.
    expect(lab.seen).toEqual(before);
  });

  it('probeStarttls refuses before connecting (a broken guard would reach the server and fail this)', async () => {
    const before = lab.seen.smtpTls;
    const result = await probeStarttls(SMTP_TLS, 'mx.enforce-ok.example', { port: lab.smtpPort });
    expect(result.outcome).toBe('refused-private');
    await new Promise((r) => setTimeout(r, 50));
    expect(lab.seen.smtpTls).toBe(before);
  });

  it('the same probe with allowPrivateAddresses reaches the server (the counter works)', async () => {
    const before = lab.seen.smtpTls;
    const result = await probeStarttls(SMTP_TLS, 'mx.enforce-ok.example', { port: lab.smtpPort, allowPrivateAddresses: true });
    expect(result.outcome).toBe('cert-untrusted');
    expect(lab.seen.smtpTls).toBe(before + 1);
  });
});

describe('the JSON shape', () => {
  it('every lab result validates against schema/spoof-check-result.schema.json#/$defs/TransportResult', async () => {
    const { readFileSync } = await import('node:fs');
    const Ajv2020Module = await import('ajv/dist/2020.js');
    const Ajv2020 = ((Ajv2020Module as unknown as { default: { default?: unknown } }).default.default ?? (Ajv2020Module as unknown as { default: unknown }).default) as new (options: object) => {
      addSchema(schema: unknown, key: string): void;
      getSchema(key: string): ((value: unknown) => boolean) & { errors?: unknown };
    };
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    ajv.addSchema(JSON.parse(readFileSync(new URL('../../packages/engine/schema/spoof-check-result.schema.json', import.meta.url), 'utf8')), 'result');
    const validate = ajv.getSchema('result#/$defs/TransportResult');
    const { LAB_DOMAINS } = await import('./lab.js');
    for (const domain of LAB_DOMAINS) {
      const result = await checkTransport(domain, options());
      expect(validate(result), `${domain}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
  });
});

describe('DNS failures are never missing records', () => {
  it.each([
    ['_mta-sts.enforce-ok.example', 'TXT'],
    ['_smtp._tls.enforce-ok.example', 'TXT'],
    ['mta-sts.enforce-ok.example', 'A'],
    ['mx.enforce-ok.example', 'A'],
    ['enforce-ok.example', 'MX'],
  ] as const)('SERVFAIL for %s %s', async (name, type) => {
    const { FaultyResolver } = await import('../../packages/engine/src/dns/faults.js');
    const resolver = new FaultyResolver(lab.resolver, [{ name, type, fault: { kind: 'servfail' } }]);
    const result = await checkTransport('enforce-ok.example', options({ resolver }));
    const text = JSON.stringify(result);
    expect(text).not.toContain('"status":"absent"');
    if (name.startsWith('_mta-sts')) expect(result.mtaSts).toMatchObject({ status: 'invalid', problems: [expect.stringMatching(/lookup of _mta-sts\.enforce-ok\.example failed.*SERVFAIL/)] });
    if (name.startsWith('_smtp')) expect(result.tlsRpt.status).toBe('invalid');
    if (name.startsWith('mta-sts.')) expect(result.mtaSts.fetch?.error).toBe('dns-failure');
    if (name.startsWith('mx.')) {
      expect(result.mx[0]!.addresses).toEqual([]);
      expect(result.findings.find((f) => f.id === 'mx-not-probed')?.detail).toMatch(/address lookup failed/);
    }
    if (type === 'MX') {
      expect(result.mx).toEqual([]);
      expect(result.findings.map((f) => f.id)).toContain('transport-mx-temperror');
      expect(result.verdict).not.toBe('enforced');
    }
  });
});
