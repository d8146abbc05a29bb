/**
 * DANE in the transport check, end to end: the signed fixture zones on the embedded server (MX,
 * the MX host's address and `_25._tcp` TLSA, all DNSSEC-signed), and a loopback SMTP server with
 * STARTTLS presenting the certificate the TLSA pins, or another one, or none. `checkDomain` with
 * `dnssec` and `transport` gives `transport.dane`, `mx[].tlsa`, `addresses[].dane` and the verdict.
 *
 * Needs Debian `openssl` (the second certificate): without it these tests fail and say so.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDomain } from '../../packages/engine/src/check.js';
import { NetworkResolver } from '../../packages/engine/src/dns/network-resolver.js';
import type { RunningDnsServer } from '../../packages/engine/src/zones/server.js';
import { DNSSEC_FIXTURES, fixtureAnchors, startSignedServer } from '../../packages/engine/test/dnssec/helpers.js';

let dns: RunningDnsServer;
let network: NetworkResolver;
let dir: string;
const smtp: net.Server[] = [];
const ports: Record<string, number> = {};

async function smtpServer(key: string | null, cert: string | null): Promise<number> {
  const server = net.createServer((socket) => {
    socket.on('error', () => undefined);
    socket.write('220 mx1 ESMTP test\r\n');
    const onData = (data: Buffer): void => {
      const line = data.toString('latin1');
      if (/^EHLO/i.test(line)) socket.write(key ? '250-mx1\r\n250 STARTTLS\r\n' : '250 mx1\r\n');
      else if (/^STARTTLS/i.test(line) && key && cert) {
        socket.off('data', onData);
        socket.write('220 ready\r\n', () => {
          const secure = new tls.TLSSocket(socket, { isServer: true, key, cert });
          secure.on('error', () => undefined);
          secure.on('data', () => secure.end('221 bye\r\n'));
        });
      } else if (/^QUIT/i.test(line)) socket.end('221 bye\r\n');
      else socket.write('502 no\r\n');
    };
    socket.on('data', onData);
  });
  smtp.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}

beforeAll(async () => {
  dns = await startSignedServer();
  network = new NetworkResolver({ servers: [`127.0.0.1:${dns.address.port}`] });
  dir = mkdtempSync(join(tmpdir(), 'dane-transport-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '3650', '-subj', '/CN=mx1.secure-nsec.test', '-keyout', 'other.key', '-out', 'other.pem'], { cwd: dir, stdio: 'pipe' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error('openssl is missing: install the Debian package openssl');
    throw error;
  }
  const certs = `${DNSSEC_FIXTURES}certs/`;
  ports.pinned = await smtpServer(readFileSync(`${certs}mx1.key`, 'utf8'), readFileSync(`${certs}mx1.pem`, 'utf8'));
  ports.other = await smtpServer(readFileSync(join(dir, 'other.key'), 'utf8'), readFileSync(join(dir, 'other.pem'), 'utf8'));
  ports.plain = await smtpServer(null, null);
}, 30_000);

afterAll(async () => {
  for (const server of smtp) server.close();
  network?.close();
  await dns?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function check(domain: string, port: number) {
  return checkDomain(domain, {
    resolver: network,
    dnssec: { query: network.dnssecQuery(), anchors: fixtureAnchors() },
    transport: { connectPorts: { smtp: port, https: 9 }, allowPrivateAddresses: true, timeoutMs: 3000 },
  });
}

describe('DANE for SMTP over the signed fixtures (RFC 7672)', () => {
  it('the TLSA record matches the certificate served: valid, and enforced without MTA-STS', async () => {
    const result = await check('secure-nsec.test', ports.pinned as number);
    const transport = result.transport!;
    expect(transport.dane).toBe('valid');
    expect(transport.verdict).toBe('enforced');
    expect(transport.mx[0]?.tlsa).toMatchObject({ status: 'secure', usable: true, rollover: 'none' });
    expect(transport.mx[0]?.tlsa?.records[0]).toMatch(/^3 1 1 [0-9a-f]{64}$/);
    expect(transport.mx[0]?.addresses[0]).toMatchObject({ address: '127.0.0.1', dane: 'match' });
    // PKIX says the self-signed certificate is untrusted; DANE-EE does not care.
    expect(transport.mx[0]?.addresses[0]?.outcome).toBe('cert-untrusted');
    expect(transport.findings.map((f) => f.id)).toContain('dane-no-rollover');
  });

  it('another certificate served: mismatch, broken, and the record to publish', async () => {
    const result = await check('secure-nsec3.test', ports.other as number);
    const transport = result.transport!;
    expect([transport.dane, transport.verdict, transport.mx[0]?.addresses[0]?.dane]).toEqual(['broken', 'broken', 'mismatch']);
    const finding = transport.findings.find((f) => f.id === 'dane-mismatch');
    expect(finding?.detail).toMatch(/_25\._tcp\.mx1\.secure-nsec3\.test\. IN TLSA 3 1 1 [0-9a-f]{64}/);
  });

  it('usable TLSA but no STARTTLS: mismatch, broken', async () => {
    const result = await check('alg13.test', ports.plain as number);
    expect([result.transport?.dane, result.transport?.mx[0]?.addresses[0]?.dane]).toEqual(['broken', 'mismatch']);
  });

  it('an MX host that is a secure CNAME: the TLSA of the target (RFC 7672 §2.2.3)', async () => {
    const result = await check('mx-cname.test', ports.pinned as number);
    expect(result.transport?.mx[0]?.host).toBe('mx-alias.mx-cname.test');
    expect([result.transport?.dane, result.transport?.mx[0]?.tlsa?.status, result.transport?.mx[0]?.addresses[0]?.dane]).toEqual(['valid', 'secure', 'match']);
  });

  it('MX bogus (expired signatures): DANE not applicable, whatever TLSA there is', async () => {
    const result = await check('expired.test', ports.pinned as number);
    expect(result.transport?.dane).toBe('none');
    expect(result.transport?.mx[0]?.tlsa?.status).toBe('not-applicable');
    expect(result.transport?.mx[0]?.addresses[0]?.dane).toBe('not-applicable');
    expect(result.dnssec?.status).toBe('bogus');
  });

  it('an unsigned zone: DANE not applicable', async () => {
    const result = await check('unsigned.test', ports.pinned as number);
    expect([result.transport?.dane, result.transport?.mx[0]?.addresses[0]?.dane]).toEqual(['none', 'not-applicable']);
  });

  it('without DNSSEC validation, no DANE fields at all', async () => {
    const result = await checkDomain('secure-nsec.test', { resolver: network, transport: { connectPorts: { smtp: ports.pinned as number, https: 9 }, allowPrivateAddresses: true, timeoutMs: 3000 } });
    expect(result.transport?.dane).toBeUndefined();
    expect(result.transport?.mx[0]?.tlsa).toBeUndefined();
  });
});

describe('the CLI report', () => {
  it('prints the DANE verdict, the TLSA records and each address\'s DANE outcome', async () => {
    const { main } = await import('../../src/cli/main.js');
    const { captureIo } = await import('../cli/helpers.js');
    const { io, stdout } = captureIo();
    const { ROOT_ANCHOR_FILE } = await import('../../packages/engine/test/dnssec/helpers.js');
    await main(['check', 'secure-nsec.test', '--resolver', `127.0.0.1:${dns.address.port}`, '--trust-anchor', ROOT_ANCHOR_FILE, '--transport', '--connect-ports', `smtp=${ports.pinned},https=9`, '--allow-private-addresses'], io);
    const text = stdout();
    expect(text).toContain('Mail sent to you: enforced');
    expect(text).toContain('DANE     valid');
    expect(text).toMatch(/TLSA secure, usable: 3 1 1 [0-9a-f]{64}/);
    expect(text).toMatch(/127\.0\.0\.1: cert-untrusted \(TLSv1\.3\); DANE match/);
  });
});

describe('the page', () => {
  it('shows DANE for the domain, the TLSA state of each MX and the outcome of each address, and DNSSEC on the result', async () => {
    const { transportSection } = await import('../../src/web/transport-view.js');
    const { resultPage } = await import('../../src/web/result-view.js');
    const { toHtmlString } = await import('../../src/web/html.js');
    const { withoutHyphenSpans } = await import('../web/helpers.js');
    const valid = await check('secure-nsec.test', ports.pinned as number);
    const section = withoutHyphenSpans(toHtmlString(transportSection(valid.transport!, valid.details.displayDomain)));
    expect(section).toMatch(/<dd id="transport-dane" data-dane="valid">valid on every mail server/);
    expect(section).toContain('data-tlsa="secure">TLSA: published and DNSSEC-secure, 1 record');
    expect(section).toContain('DANE: <span data-dane-address="match">the certificate matches the TLSA records</span>');
    const broken = await check('secure-nsec3.test', ports.other as number);
    const brokenSection = withoutHyphenSpans(toHtmlString(transportSection(broken.transport!, broken.details.displayDomain)));
    expect(brokenSection).toMatch(/data-dane="broken">broken: a mail server has TLSA records that match nothing/);
    expect(brokenSection).toContain('data-dane-address="mismatch">the certificate matches NO TLSA record');
    const bogus = await check('expired.test', ports.pinned as number);
    const page = withoutHyphenSpans(toHtmlString(resultPage(bogus, { origin: null, demo: null, historyLink: false })));
    expect(page).toMatch(/<dd id="dnssec" data-dnssec="bogus">bogus \(EDE 7\): /);
    // Without validation the page says nothing about DNSSEC or DANE.
    const plain = await checkDomain('secure-nsec.test', { resolver: network, transport: { connectPorts: { smtp: ports.pinned as number, https: 9 }, allowPrivateAddresses: true, timeoutMs: 3000 } });
    expect(toHtmlString(transportSection(plain.transport!, 'secure-nsec.test'))).not.toContain('transport-dane');
    expect(toHtmlString(resultPage(plain, { origin: null, demo: null, historyLink: false }))).not.toContain('id="dnssec"');
  });
});
