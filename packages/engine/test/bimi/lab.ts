/**
 * The BIMI test lab, all real parts on loopback:
 * - a TLS test authority and a certificate for logos.lab.example (the HTTPS host);
 * - a fake Mark Verifying Authority made with `openssl` (authority.ts, research/bimi.md §6 recipe): a root, an
 *   issuing CA with the BIMI EKU, and mark certificates: a VMC, a CMC, one for another domain, one
 *   without the BIMI EKU, one whose logotype is another logo, and a forged one whose issuer copies
 *   the issuing CA's name and key identifier but is signed by another key;
 * - 127.0.0.9:Q  an HTTPS server answering by path (logos, PEM bundles, a redirect, a 404);
 * - zones built here pointing the lab domains at it.
 * `openssl` missing makes the set-up FAIL with a message naming the Debian package (never a skip).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { parseZone } from '../../src/zones/parse.js';
import { BIMI_EKU, issueMark, makeMarkAuthority, makeTlsAuthority, markSubject, openssl, selfSigned } from './authority.js';

export const LOGO_HOST = 'logos.lab.example';
export const LOGO_ADDRESS = '127.0.0.9';

const ROOT = '<svg xmlns="http://www.w3.org/2000/svg" version="1.2" baseProfile="tiny-ps" viewBox="0 0 100 100">';
/** The logo the certificates embed. */
export const LOGO_A = `<?xml version="1.0" encoding="UTF-8"?>\n${ROOT}\n<title>Brand Ltd</title>\n<rect width="100" height="100" fill="#c00"/>\n</svg>\n`;
/** Another valid logo (the mismatch certificate embeds this one). */
export const LOGO_B = `<?xml version="1.0" encoding="UTF-8"?>\n${ROOT}\n<title>Other Brand</title>\n<circle cx="50" cy="50" r="50" fill="#00c"/>\n</svg>\n`;
/** A logo with a script on line 5. */
export const LOGO_SCRIPT = `<?xml version="1.0" encoding="UTF-8"?>\n${ROOT}\n<title>Brand Ltd</title>\n<rect width="100" height="100"/>\n<script>alert(1)</script>\n</svg>\n`;

/** What the HTTPS host serves, by path. */
function routes(pems: Record<string, string>): Record<string, { status: number; type?: string; body?: string | Buffer; headers?: Record<string, string> }> {
  return {
    '/a.svg': { status: 200, type: 'image/svg+xml', body: LOGO_A },
    '/b.svg': { status: 200, type: 'image/svg+xml', body: LOGO_B },
    '/watched.svg': { status: 200, type: 'image/svg+xml', body: LOGO_A },
    '/script.svg': { status: 200, type: 'image/svg+xml', body: LOGO_SCRIPT },
    '/big.svg': { status: 200, type: 'image/svg+xml', body: LOGO_A.replace('</svg>', `<desc>${'x'.repeat(70 * 1024)}</desc></svg>`) },
    '/moved.svg': { status: 302, headers: { location: '/a.svg' } },
    '/to-http.svg': { status: 302, headers: { location: `http://${LOGO_HOST}/a.svg` } },
    '/missing.svg': { status: 404, type: 'text/plain', body: 'not found' },
    ...Object.fromEntries(Object.entries(pems).map(([name, pem]) => [`/${name}.pem`, { status: 200, type: 'application/x-pem-file', body: pem }])),
  };
}

/** The lab's domains and their BIMI and DMARC records. */
const DOMAINS: Record<string, { dmarc: string | null; bimi: string | null; extra?: string[] }> = {
  'none.example': { dmarc: 'v=DMARC1; p=reject', bimi: null },
  'pnone.example': { dmarc: 'v=DMARC1; p=none', bimi: `v=BIMI1; l=https://${LOGO_HOST}/a.svg;` },
  'pct.example': { dmarc: 'v=DMARC1; p=quarantine; pct=50', bimi: `v=BIMI1; l=https://${LOGO_HOST}/a.svg;` },
  'self.example': { dmarc: 'v=DMARC1; p=reject', bimi: `v=BIMI1; l=https://${LOGO_HOST}/a.svg;`, extra: ['mail IN A 127.0.0.1'] },
  'script.example': { dmarc: 'v=DMARC1; p=reject', bimi: `v=BIMI1; l=https://${LOGO_HOST}/script.svg;` },
  'big.example': { dmarc: 'v=DMARC1; p=reject', bimi: `v=BIMI1; l=https://${LOGO_HOST}/big.svg;` },
  'moved.example': { dmarc: 'v=DMARC1; p=reject', bimi: `v=BIMI1; l=https://${LOGO_HOST}/moved.svg;` },
  'to-http.example': { dmarc: 'v=DMARC1; p=reject', bimi: `v=BIMI1; l=https://${LOGO_HOST}/to-http.svg;` },
  'fetchfail.example': { dmarc: 'v=DMARC1; p=reject', bimi: `v=BIMI1; l=https://${LOGO_HOST}/missing.svg;` },
  'declined.example': { dmarc: 'v=DMARC1; p=reject', bimi: 'v=BIMI1; l=; a=;' },
  'two.example': { dmarc: 'v=DMARC1; p=reject', bimi: null, extra: [`default._bimi IN TXT "v=BIMI1; l=https://${LOGO_HOST}/a.svg;"`, `default._bimi IN TXT "v=BIMI1; l=https://${LOGO_HOST}/b.svg;"`] },
  'misplaced.example': { dmarc: 'v=DMARC1; p=reject', bimi: null, extra: [`_bimi IN TXT "v=BIMI1; l=https://${LOGO_HOST}/a.svg;"`] },
  'lps.example': { dmarc: 'v=DMARC1; p=reject', bimi: `v=BIMI1; l=https://${LOGO_HOST}/a.svg; lps=sales`, extra: [`sales-team._bimi IN TXT "v=BIMI1; l=https://${LOGO_HOST}/b.svg;"`] },
  'watched.example': { dmarc: 'v=DMARC1; p=reject', bimi: `v=BIMI1; l=https://${LOGO_HOST}/watched.svg;` },
  'entrust.example': { dmarc: 'v=DMARC1; p=reject', bimi: `v=BIMI1; l=https://${LOGO_HOST}/a.svg; a=https://${LOGO_HOST}/entrust.pem;` },
  'vmc.example': { dmarc: 'v=DMARC1; p=reject', bimi: `v=BIMI1; l=https://${LOGO_HOST}/a.svg; a=https://${LOGO_HOST}/vmc.pem;` },
  'cmc.example': { dmarc: 'v=DMARC1; p=quarantine', bimi: `v=BIMI1; l=https://${LOGO_HOST}/a.svg; a=https://${LOGO_HOST}/cmc.pem;` },
  'wrongsan.example': { dmarc: 'v=DMARC1; p=reject', bimi: `v=BIMI1; l=https://${LOGO_HOST}/a.svg; a=https://${LOGO_HOST}/wrongsan.pem;` },
  'noeku.example': { dmarc: 'v=DMARC1; p=reject', bimi: `v=BIMI1; l=https://${LOGO_HOST}/a.svg; a=https://${LOGO_HOST}/noeku.pem;` },
  'mismatch.example': { dmarc: 'v=DMARC1; p=reject', bimi: `v=BIMI1; l=https://${LOGO_HOST}/a.svg; a=https://${LOGO_HOST}/mismatch.pem;` },
  'forged.example': { dmarc: 'v=DMARC1; p=reject', bimi: `v=BIMI1; l=https://${LOGO_HOST}/a.svg; a=https://${LOGO_HOST}/forged.pem;` },
  'selfsigned.example': { dmarc: 'v=DMARC1; p=reject', bimi: `v=BIMI1; l=https://${LOGO_HOST}/a.svg; a=https://${LOGO_HOST}/selfsigned.pem;` },
  'leafonly.example': { dmarc: 'v=DMARC1; p=reject', bimi: `v=BIMI1; l=https://${LOGO_HOST}/a.svg; a=https://${LOGO_HOST}/leafonly.pem;` },
};

/** The running lab. */
export interface BimiLab {
  dir: string;
  /** PEM of the TLS test CA (`tlsCa`, `--tls-ca`). */
  tlsCaPem: string;
  tlsCaFile: string;
  /** PEM of the fake Mark Verifying Authorities' roots (`extraRoots`, `--bimi-roots`): the test MVA and an "Entrust" one. */
  mvaRootPem: string;
  mvaRootFile: string;
  httpsPort: number;
  resolver: ZoneResolver;
  /** The zone folder for the CLI (`--zones`). */
  zonesDir: string;
  /** The bundles served, by name. */
  pems: Record<string, string>;
  /** Requests answered, by path. */
  seen: string[];
  /** Serves `body` (image/svg+xml, 200) at `path` from now on (a logo that changes under a monitor). */
  setFile(path: string, body: string): void;
  close(): Promise<void>;
}

/** The CRL distribution point of the lab's mark certificates (lab.test.ts reads it back). */
export const LAB_CRL = 'http://crl.mva.test/inter.crl';

/** Makes the TLS CA, the logo host's certificate, the fake MVA and the mark certificates. */
export function makeLabCertificates(dir: string): { tls: { ca: string; key: string; cert: string }; mvaRoot: string; pems: Record<string, string> } {
  // TLS: a CA and the HTTPS host's certificate.
  const tls = makeTlsAuthority(dir, { ca: 'tls-ca', subject: '/CN=spoof-checker BIMI lab TLS CA', host: LOGO_HOST, days: 30 });
  // The fake MVA: root and issuing CA (research/bimi.md §6).
  const mva = makeMarkAuthority(dir, { root: '/O=Test MVA/CN=Test Verified Mark Root CA', inter: '/O=Test MVA/CN=Test Verified Mark Issuing CA', rootDays: 3650, interDays: 1825, logo: LOGO_A });

  let serial = 10_000;
  const leaf = (name: string, spec: { san: string[]; eku?: string; logo?: string; mark?: string; issuer?: string }): string =>
    issueMark(dir, name, {
      san: spec.san,
      subject: markSubject({ organization: 'Brand Ltd', markType: spec.mark ?? 'Registered Mark', trademark: 'TM-1' }),
      logo: spec.logo ?? LOGO_A,
      issuer: spec.issuer ?? 'inter',
      serial: serial++,
      days: 365,
      crl: LAB_CRL,
      ...(spec.eku === undefined ? {} : { eku: spec.eku }),
    });
  const inter = mva.inter;
  const pems: Record<string, string> = {
    vmc: leaf('vmc', { san: ['vmc.example'] }) + inter,
    cmc: leaf('cmc', { san: ['default._bimi.cmc.example'], mark: 'Prior Use Mark' }) + inter,
    wrongsan: leaf('wrongsan', { san: ['brand.other'] }) + inter,
    noeku: leaf('noeku', { san: ['noeku.example'], eku: 'serverAuth' }) + inter,
    mismatch: leaf('mismatch', { san: ['mismatch.example'], logo: LOGO_B }) + inter,
    leafonly: leaf('leafonly', { san: ['leafonly.example'] }),
  };
  // The forgery: an issuer copying the issuing CA's subject and key identifier, its own key.
  const ski = /Subject Key Identifier:\s*\n\s*([0-9A-F:]+)/.exec(openssl(['x509', '-in', 'inter.pem', '-noout', '-ext', 'subjectKeyIdentifier'], dir))?.[1];
  if (!ski) throw new Error('could not read the issuing CA subjectKeyIdentifier');
  writeFileSync(join(dir, 'fake.cnf'), readFileSync(join(dir, 'mva.cnf'), 'utf8').replace('[ inter_ext ]', `[ fake_ext ]\nbasicConstraints = critical, CA:TRUE, pathlen:0\nkeyUsage = critical, keyCertSign, cRLSign\nextendedKeyUsage = ${BIMI_EKU}\nsubjectKeyIdentifier = ${ski}\n[ inter_ext ]`));
  selfSigned(dir, 'fake', { subject: '/O=Test MVA/CN=Test Verified Mark Issuing CA', days: 365, config: 'fake.cnf', extensions: 'fake_ext' });
  pems.forged = leaf('forged', { san: ['forged.example'], issuer: 'fake' }) + inter;
  // A chain to a root sent in the bundle that no one trusts.
  const rogue = selfSigned(dir, 'rogue', { subject: '/O=Rogue/CN=Rogue Mark Root', days: 365, config: 'mva.cnf', extensions: 'inter_ext' });
  pems.selfsigned = leaf('selfsigned', { san: ['selfsigned.example'], issuer: 'rogue' }) + rogue;
  // A second authority whose name says Entrust (Apple refuses Entrust VMCs issued after 2024-11-15).
  const entrustRoot = selfSigned(dir, 'entrust-root', { subject: '/O=Entrust Test/CN=Entrust Verified Mark Test Root', days: 3650, config: 'mva.cnf', extensions: 'inter_ext' });
  pems.entrust = leaf('entrust', { san: ['entrust.example'], issuer: 'entrust-root' });
  return { tls, mvaRoot: mva.root + entrustRoot, pems };
}

/** The zone of one lab domain. */
function zoneText(domain: string, spec: (typeof DOMAINS)[string]): string {
  const lines = [`$ORIGIN ${domain}.`, '$TTL 300', `@ IN SOA ns1.${domain}. hostmaster.${domain}. ( 1 3600 600 86400 60 )`, '@ IN NS ns1', 'ns1 IN A 198.51.100.53', '@ IN A 198.51.100.80', '@ IN TXT "v=spf1 -all"'];
  if (spec.dmarc) lines.push(`_dmarc IN TXT "${spec.dmarc}"`);
  if (spec.bimi) lines.push(`default._bimi IN TXT "${spec.bimi}"`);
  lines.push(...(spec.extra ?? []));
  return `${lines.join('\n')}\n`;
}

/** Starts the lab; `close()` stops it and removes the temp dir. */
export async function startBimiLab(): Promise<BimiLab> {
  const dir = mkdtempSync(join(tmpdir(), 'bimi-lab-'));
  const certs = makeLabCertificates(dir);
  const zonesDir = join(dir, 'zones');
  execFileSync('mkdir', ['-p', zonesDir]);
  const zones = Object.entries(DOMAINS).map(([domain, spec]) => {
    const text = zoneText(domain, spec);
    writeFileSync(join(zonesDir, `${domain}.zone`), text);
    return parseZone(text, { origin: domain, file: `${domain}.zone` });
  });
  const labText = `$ORIGIN lab.example.\n$TTL 300\n@ IN SOA ns1.lab.example. hostmaster.lab.example. ( 1 3600 600 86400 60 )\n@ IN NS ns1\nns1 IN A 198.51.100.53\nlogos IN A ${LOGO_ADDRESS}\n`;
  writeFileSync(join(zonesDir, 'lab.example.zone'), labText);
  zones.push(parseZone(labText, { origin: 'lab.example', file: 'lab.example.zone' }));
  const table = routes(certs.pems);
  const seen: string[] = [];
  const server: Server = createServer({ key: certs.tls.key, cert: certs.tls.cert }, (request, response) => {
    const path = request.url ?? '/';
    seen.push(path);
    const answer = table[path];
    if (!answer) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('no such file');
      return;
    }
    response.writeHead(answer.status, { ...(answer.type ? { 'content-type': answer.type } : {}), ...(answer.headers ?? {}) }).end(answer.body ?? '');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, LOGO_ADDRESS, () => resolve());
  });
  const httpsPort = (server.address() as { port: number }).port;
  writeFileSync(join(dir, 'mva-root.pem'), certs.mvaRoot);
  return {
    dir,
    tlsCaPem: certs.tls.ca,
    tlsCaFile: join(dir, 'tls-ca.pem'),
    mvaRootPem: certs.mvaRoot,
    mvaRootFile: join(dir, 'mva-root.pem'),
    httpsPort,
    resolver: new ZoneResolver(zones),
    zonesDir,
    pems: certs.pems,
    seen,
    setFile: (path, body) => {
      table[path] = { status: 200, type: 'image/svg+xml', body };
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
