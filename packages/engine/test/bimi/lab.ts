/**
 * The BIMI test lab, all real parts on loopback:
 * - a TLS test authority and a certificate for logos.lab.example (the HTTPS host);
 * - a fake Mark Verifying Authority made with `openssl` (research/bimi.md §6 recipe): a root, an
 *   issuing CA with the BIMI EKU, and mark certificates: a VMC, a CMC, one for another domain, one
 *   without the BIMI EKU, one whose logotype is another logo, and a forged one whose issuer copies
 *   the issuing CA's name and key identifier but is signed by another key;
 * - 127.0.0.9:Q  an HTTPS server answering by path (logos, PEM bundles, a redirect, a 404);
 * - zones built here pointing the lab domains at it.
 * `openssl` missing makes the set-up FAIL with a message naming the Debian package (never a skip).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { parseZone } from '../../src/zones/parse.js';

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

export function openssl(args: string[], cwd: string): string {
  try {
    return execFileSync('openssl', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] }).toString();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error('The BIMI lab needs the openssl command (Debian package "openssl"); it is not installed.');
    throw new Error(`openssl ${args.join(' ')} failed: ${(error as { stderr?: Buffer }).stderr?.toString() ?? ''}`);
  }
}

export const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** research/bimi.md §6: the MVA configuration; the leaf's SAN, EKU and logo are templated. */
export function mvaConfig(leaf: { san: string[]; eku: string; logo: string }): string {
  const svg = Buffer.from(leaf.logo);
  return `oid_section = new_oids
[ new_oids ]
markType = 1.3.6.1.4.1.53087.1.13
trademarkCountryOrRegionName = 1.3.6.1.4.1.53087.1.3
trademarkIdentifier = 1.3.6.1.4.1.53087.1.4
[ req ]
distinguished_name = dn
prompt = no
[ dn ]
CN = unused
[ root_ext ]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[ inter_ext ]
basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
extendedKeyUsage = 1.3.6.1.5.5.7.3.31
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
[ leaf_ext ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = ${leaf.eku}
subjectAltName = ${leaf.san.map((n) => `DNS:${n}`).join(', ')}
authorityKeyIdentifier = keyid:always
crlDistributionPoints = URI:http://crl.mva.test/inter.crl
certificatePolicies = 1.3.6.1.4.1.53087.1.1
1.3.6.1.5.5.7.1.12 = ASN1:SEQUENCE:logotype_extn
[ logotype_extn ]
subjectLogo = EXPLICIT:2C,IMPLICIT:0C,SEQUENCE:logotype_data
[ logotype_data ]
image = SEQUENCE:image_seq
[ image_seq ]
img1 = SEQUENCE:logotype_image
[ logotype_image ]
imageDetails = SEQUENCE:logotype_details
[ logotype_details ]
mediaType = IA5STRING:image/svg+xml
logotypeHash = SEQUENCE:hash_seq
logotypeURI = SEQUENCE:uri_seq
[ hash_seq ]
h1 = SEQUENCE:hash_alg_value
[ hash_alg_value ]
hashAlg = SEQUENCE:sha256_alg
hashValue = FORMAT:HEX,OCTETSTRING:${createHash('sha256').update(svg).digest('hex')}
[ sha256_alg ]
algorithm = OID:sha256
[ uri_seq ]
u1 = IA5STRING:data:image/svg+xml;base64,${gzipSync(svg).toString('base64')}
`;
}

/** Makes the TLS CA, the logo host's certificate, the fake MVA and the mark certificates. */
export function makeLabCertificates(dir: string): { tls: { ca: string; key: string; cert: string }; mvaRoot: string; pems: Record<string, string> } {
  const read = (file: string) => readFileSync(join(dir, file), 'utf8');
  // TLS: a CA and the HTTPS host's certificate.
  openssl(['req', '-x509', ...EC, '-keyout', 'tls-ca.key', '-out', 'tls-ca.pem', '-days', '30', '-subj', '/CN=spoof-checker BIMI lab TLS CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir);
  writeFileSync(join(dir, 'host.ext'), `basicConstraints = CA:FALSE\nkeyUsage = critical,digitalSignature\nextendedKeyUsage = serverAuth\nsubjectAltName = DNS:${LOGO_HOST}\n`);
  openssl(['req', '-new', ...EC, '-keyout', 'host.key', '-out', 'host.csr', '-subj', `/CN=${LOGO_HOST}`], dir);
  openssl(['x509', '-req', '-in', 'host.csr', '-CA', 'tls-ca.pem', '-CAkey', 'tls-ca.key', '-set_serial', '4096', '-days', '30', '-extfile', 'host.ext', '-out', 'host.pem'], dir);

  // The fake MVA: root and issuing CA (research/bimi.md §6).
  writeFileSync(join(dir, 'mva.cnf'), mvaConfig({ san: ['unused.example'], eku: '1.3.6.1.5.5.7.3.31', logo: LOGO_A }));
  openssl(['req', '-x509', ...EC, '-keyout', 'root.key', '-out', 'root.pem', '-days', '3650', '-subj', '/O=Test MVA/CN=Test Verified Mark Root CA', '-config', 'mva.cnf', '-extensions', 'root_ext'], dir);
  openssl(['req', '-new', ...EC, '-keyout', 'inter.key', '-out', 'inter.csr', '-subj', '/O=Test MVA/CN=Test Verified Mark Issuing CA', '-config', 'mva.cnf'], dir);
  openssl(['x509', '-req', '-in', 'inter.csr', '-CA', 'root.pem', '-CAkey', 'root.key', '-set_serial', '8192', '-days', '1825', '-extfile', 'mva.cnf', '-extensions', 'inter_ext', '-out', 'inter.pem'], dir);

  let serial = 10_000;
  const leaf = (name: string, spec: { san: string[]; eku?: string; logo?: string; mark?: string; ca?: { cert: string; key: string } }): string => {
    writeFileSync(join(dir, `${name}.cnf`), mvaConfig({ san: spec.san, eku: spec.eku ?? '1.3.6.1.5.5.7.3.31', logo: spec.logo ?? LOGO_A }));
    const subject = `/C=ZZ/O=Brand Ltd/CN=Brand Ltd/markType=${spec.mark ?? 'Registered Mark'}/trademarkCountryOrRegionName=ZZ/trademarkIdentifier=TM-1`;
    openssl(['req', '-new', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject, '-config', `${name}.cnf`], dir);
    const ca = spec.ca ?? { cert: 'inter.pem', key: 'inter.key' };
    openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', ca.cert, '-CAkey', ca.key, '-set_serial', String(serial++), '-days', '365', '-extfile', `${name}.cnf`, '-extensions', 'leaf_ext', '-out', `${name}.pem`], dir);
    return read(`${name}.pem`);
  };
  const inter = read('inter.pem');
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
  writeFileSync(join(dir, 'fake.cnf'), readFileSync(join(dir, 'mva.cnf'), 'utf8').replace('[ inter_ext ]', `[ fake_ext ]\nbasicConstraints = critical, CA:TRUE, pathlen:0\nkeyUsage = critical, keyCertSign, cRLSign\nextendedKeyUsage = 1.3.6.1.5.5.7.3.31\nsubjectKeyIdentifier = ${ski}\n[ inter_ext ]`));
  openssl(['req', '-x509', ...EC, '-keyout', 'fake.key', '-out', 'fake.pem', '-days', '365', '-subj', '/O=Test MVA/CN=Test Verified Mark Issuing CA', '-config', 'fake.cnf', '-extensions', 'fake_ext'], dir);
  pems.forged = leaf('forged', { san: ['forged.example'], ca: { cert: 'fake.pem', key: 'fake.key' } }) + inter;
  // A chain to a root sent in the bundle that no one trusts.
  openssl(['req', '-x509', ...EC, '-keyout', 'rogue.key', '-out', 'rogue.pem', '-days', '365', '-subj', '/O=Rogue/CN=Rogue Mark Root', '-config', 'mva.cnf', '-extensions', 'inter_ext'], dir);
  pems.selfsigned = leaf('selfsigned', { san: ['selfsigned.example'], ca: { cert: 'rogue.pem', key: 'rogue.key' } }) + read('rogue.pem');
  // A second authority whose name says Entrust (Apple refuses Entrust VMCs issued after 2024-11-15).
  openssl(['req', '-x509', ...EC, '-keyout', 'entrust-root.key', '-out', 'entrust-root.pem', '-days', '3650', '-subj', '/O=Entrust Test/CN=Entrust Verified Mark Test Root', '-config', 'mva.cnf', '-extensions', 'inter_ext'], dir);
  pems.entrust = leaf('entrust', { san: ['entrust.example'], ca: { cert: 'entrust-root.pem', key: 'entrust-root.key' } });
  return { tls: { ca: read('tls-ca.pem'), key: read('host.key'), cert: read('host.pem') }, mvaRoot: read('root.pem') + read('entrust-root.pem'), pems };
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
