/**
 * DANE matching (RFC 7672, RFC 7671, RFC 6698) against the chain a loopback SMTP server really sent
 * after STARTTLS (`chainAsSent`), with `openssl s_client -starttls smtp -dane_tlsa_*` as the referee
 * on the same server: 3 1 1 match and mismatch, 3 0 1, 3 1 2, 2 1 1 with and without the trust
 * anchor sent, a name mismatch under 2 and under 3, an expired leaf under 3 and under 2 (`-attime`),
 * only PKIX usages, and a server without STARTTLS. Certificates are made with openssl in a temp dir.
 *
 * Needs Debian `openssl`: without it these tests fail and say so.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chainAsSent } from '../../src/dane/handshake.js';
import { matchTlsa, parseTlsaRdata, rolloverScheme } from '../../src/dane/match.js';
import type { TlsaRecord } from '../../src/dane/types.js';
import { TYPE } from '../../src/dns/canonical.js';
import { parseSignedZone } from '../../src/zones/signed-zonefile.js';

const HOST = 'mx1.dane.test';
let dir: string;
const pem: Record<string, string> = {};
const servers: net.Server[] = [];

function openssl(args: string[]): void {
  try {
    execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error('openssl is missing: install the Debian package openssl');
    throw error;
  }
}

/** A leaf for `san`, signed by the root. */
function leaf(name: string, san: string): void {
  openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', `/CN=${san}`, '-keyout', `${name}.key`, '-out', `${name}.csr`]);
  writeFileSync(join(dir, `${name}.ext`), `subjectAltName=DNS:${san}\nbasicConstraints=CA:FALSE\n`);
  openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', 'root.pem', '-CAkey', 'root.key', '-CAcreateserial', '-days', '365', '-extfile', `${name}.ext`, '-out', `${name}.pem`]);
  pem[name] = readFileSync(join(dir, `${name}.pem`), 'utf8');
  pem[`${name}.key`] = readFileSync(join(dir, `${name}.key`), 'utf8');
}

/** An SMTP responder on loopback: 220, EHLO (with or without STARTTLS), then TLS with `chain`. */
async function smtpServer(key: string, chain: string, starttls = true): Promise<number> {
  const server = net.createServer((socket) => {
    socket.on('error', () => undefined);
    socket.write(`220 ${HOST} ESMTP test\r\n`);
    let buffer = '';
    const onData = (data: Buffer): void => {
      buffer += data.toString('latin1');
      while (buffer.includes('\r\n')) {
        const line = buffer.slice(0, buffer.indexOf('\r\n'));
        buffer = buffer.slice(line.length + 2);
        if (/^EHLO/i.test(line)) socket.write(starttls ? `250-${HOST}\r\n250 STARTTLS\r\n` : `250 ${HOST}\r\n`);
        else if (/^STARTTLS/i.test(line) && starttls) {
          socket.off('data', onData);
          socket.write('220 ready\r\n', () => {
            const secure = new tls.TLSSocket(socket, { isServer: true, key, cert: chain });
            secure.on('error', () => undefined);
            secure.on('data', () => secure.end('221 bye\r\n'));
          });
          return;
        } else if (/^QUIT/i.test(line)) socket.end('221 bye\r\n');
        else socket.write('502 no\r\n');
      }
    };
    socket.on('data', onData);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}

/** `3 1 1` and friends for a certificate. */
function tlsa(usage: number, selector: number, matchingType: number, certPem: string): TlsaRecord {
  const cert = new X509Certificate(certPem);
  const selected = selector === 0 ? cert.raw : cert.publicKey.export({ type: 'spki', format: 'der' });
  const data = matchingType === 0 ? selected : createHash(matchingType === 1 ? 'sha256' : 'sha512').update(selected).digest();
  return { usage, selector, matchingType, data: Buffer.from(data) };
}

/** The referee: does OpenSSL's DANE verification accept this server for `record`? */
function opensslSays(port: number, record: TlsaRecord, attime?: number): Promise<'OK' | 'FAIL'> {
  const args = ['s_client', '-connect', `127.0.0.1:${port}`, '-starttls', 'smtp', '-servername', HOST, '-brief', '-verify_return_error',
    '-dane_tlsa_domain', HOST, '-dane_tlsa_rrdata', `${record.usage} ${record.selector} ${record.matchingType} ${record.data.toString('hex')}`, '-dane_ee_no_namechecks',
    ...(attime ? ['-attime', String(attime)] : [])];
  return new Promise((resolve, reject) => {
    const child = spawn('openssl', args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', (error) => reject(new Error(`openssl is missing: install the Debian package openssl (${error.message})`)));
    child.on('close', (code) => resolve(code === 0 && /Verification: OK/.test(out) ? 'OK' : 'FAIL'));
    child.stdin.end('QUIT\r\n');
  });
}

let ports: Record<string, number>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dane-'));
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '36500', '-subj', '/CN=DANE Test Root', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign', '-keyout', 'root.key', '-out', 'root.pem']);
  pem.root = readFileSync(join(dir, 'root.pem'), 'utf8');
  leaf('good', HOST);
  leaf('wrongname', 'other.dane.test');
  ports = {
    leafOnly: await smtpServer(pem['good.key'] as string, pem.good as string),
    withRoot: await smtpServer(pem['good.key'] as string, `${pem.good}${pem.root}`),
    wrongName: await smtpServer(pem['wrongname.key'] as string, `${pem.wrongname}${pem.root}`),
    noStarttls: await smtpServer(pem['good.key'] as string, pem.good as string, false),
  };
}, 60_000);

afterAll(() => {
  for (const server of servers) server.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** 2040-06-01: the leaves (one year) have expired, the root (a century) has not. */
const LATER = Date.UTC(2040, 5, 1);

describe('TLSA matching against the chain as sent, refereed by openssl s_client', () => {
  const cases: [string, keyof typeof ports, () => TlsaRecord, 'match' | 'mismatch', number | undefined][] = [
    ['3 1 1 of the leaf: match', 'leafOnly', () => tlsa(3, 1, 1, pem.good as string), 'match', undefined],
    ['3 1 1 of another key: mismatch', 'leafOnly', () => tlsa(3, 1, 1, pem.wrongname as string), 'mismatch', undefined],
    ['3 0 1 (the whole certificate): match', 'leafOnly', () => tlsa(3, 0, 1, pem.good as string), 'match', undefined],
    ['3 1 2 (SHA-512): match', 'leafOnly', () => tlsa(3, 1, 2, pem.good as string), 'match', undefined],
    ['2 1 1 of the root, the root sent: match', 'withRoot', () => tlsa(2, 1, 1, pem.root as string), 'match', undefined],
    ['2 1 1 of the root, the root not sent: mismatch (RFC 7672 §3.1.2)', 'leafOnly', () => tlsa(2, 1, 1, pem.root as string), 'mismatch', undefined],
    ['3 1 1 with a leaf for another name: match (DANE-EE ignores names)', 'wrongName', () => tlsa(3, 1, 1, pem.wrongname as string), 'match', undefined],
    ['2 1 1 with a leaf for another name: mismatch (DANE-TA checks names)', 'wrongName', () => tlsa(2, 1, 1, pem.root as string), 'mismatch', undefined],
    ['3 1 1 with an expired leaf: match (DANE-EE ignores dates)', 'withRoot', () => tlsa(3, 1, 1, pem.good as string), 'match', LATER],
    ['2 1 1 with an expired leaf: mismatch', 'withRoot', () => tlsa(2, 1, 1, pem.root as string), 'mismatch', LATER],
  ];
  it.each(cases)('%s', async (_label, server, record, expected, at) => {
    const sent = await chainAsSent('127.0.0.1', ports[server] as number, HOST);
    if (!sent.ok) throw new Error(sent.detail);
    const ours = matchTlsa([record()], sent.chain, [HOST], at ? new Date(at) : new Date());
    expect(ours.outcome, ours.detail).toBe(expected);
    expect(await opensslSays(ports[server] as number, record(), at ? Math.floor(at / 1000) : undefined)).toBe(expected === 'match' ? 'OK' : 'FAIL');
  });

  it('the chain as sent: the root only when the server sends it (never from a trust store)', async () => {
    const leafOnly = await chainAsSent('127.0.0.1', ports.leafOnly as number, HOST);
    const withRoot = await chainAsSent('127.0.0.1', ports.withRoot as number, HOST);
    expect([leafOnly.ok && leafOnly.chain.length, withRoot.ok && withRoot.chain.length]).toEqual([1, 2]);
  });

  it('only PKIX usages (0, 1): no usable TLSA', async () => {
    const sent = await chainAsSent('127.0.0.1', ports.leafOnly as number, HOST);
    if (!sent.ok) throw new Error(sent.detail);
    expect(matchTlsa([tlsa(1, 1, 1, pem.good as string), tlsa(0, 1, 1, pem.root as string)], sent.chain, [HOST]).outcome).toBe('no-usable-tlsa');
  });

  it('a server that offers no STARTTLS gives no chain', async () => {
    const sent = await chainAsSent('127.0.0.1', ports.noStarttls as number, HOST);
    expect(sent).toMatchObject({ ok: false, stage: 'no-starttls' });
  });
});

/** The TLSA RDATA at _25._tcp.mx1.secure-nsec.test in the signed fixture zone. */
function fixtureTlsaRdata(): Buffer {
  const zone = parseSignedZone(readFileSync(new URL('../../../../fixtures/dnssec/zones/secure-nsec.test.signed', import.meta.url), 'utf8'));
  return (zone.records.find((r) => r.type === TYPE.TLSA) as { rdata: Buffer }).rdata;
}

describe('TLSA records', () => {
  it('reads the RDATA of the fixture TLSA (3 1 1) and judges rollover sets as internet.nl does', () => {
    const record = parseTlsaRdata(fixtureTlsaRdata());
    expect(record).toMatchObject({ usage: 3, selector: 1, matchingType: 1 });
    const ee = record as TlsaRecord;
    expect(rolloverScheme([ee])).toBe('none');
    expect(rolloverScheme([ee, { ...ee, data: Buffer.alloc(32) }])).toBe('current+next');
    expect(rolloverScheme([ee, { ...ee, usage: 2 }])).toBe('current+issuer');
    expect(rolloverScheme([{ ...ee, usage: 1 }, ee])).toBe('none');
  });

  it('the fixture certificate matches the fixture zone\'s TLSA record', () => {
    const cert = readFileSync(new URL('../../../../fixtures/dnssec/certs/mx1.pem', import.meta.url), 'utf8');
    const record = parseTlsaRdata(fixtureTlsaRdata()) as TlsaRecord;
    expect(matchTlsa([record], [new X509Certificate(cert)], ['mx1.secure-nsec.test']).outcome).toBe('match');
  });
});
