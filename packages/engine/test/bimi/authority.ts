/**
 * A test certificate authority for BIMI, made with `openssl` (research/bimi.md §6 recipe): a TLS
 * authority and the certificate of one HTTPS host, a fake Mark Verifying Authority (a root and an
 * issuing CA with the BIMI EKU) and its mark certificates, whose logotype extension embeds a logo.
 * Used by the BIMI lab (lab.ts), the chain-constraint tests, the demo's BIMI material
 * (scripts/make-demo-bimi.ts) and the demo's transport certificates (scripts/make-demo-transport-certs.ts). Every step writes `<name>.key` and `<name>.pem` into `dir`.
 * `openssl` missing is an error naming the Debian package (never a skip).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

/** The BIMI extended key usage, id-kp-BrandIndicatorforMessageIdentification (research/bimi.md §6: leaf and issuing CA carry it). */
export const BIMI_EKU = '1.3.6.1.5.5.7.3.31';

/** Runs `openssl` in `cwd`; its standard output. */
export function openssl(args: string[], cwd: string): string {
  try {
    return execFileSync('openssl', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] }).toString();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error('The BIMI lab needs the openssl command (Debian package "openssl"); it is not installed.');
    throw new Error(`openssl ${args.join(' ')} failed: ${(error as { stderr?: Buffer }).stderr?.toString() ?? ''}`);
  }
}

/** `openssl req` arguments for a new P-256 key, unencrypted. */
export const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/**
 * research/bimi.md §6: the MVA configuration (`root_ext`, `inter_ext`, `leaf_ext` and the subject's
 * mark attributes); the leaf's SAN, EKU, logo and CRL distribution point (none when left out) are templated.
 */
export function mvaConfig(leaf: { san: string[]; eku: string; logo: string; crl?: string }): string {
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
extendedKeyUsage = ${BIMI_EKU}
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
[ leaf_ext ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = ${leaf.eku}
subjectAltName = ${leaf.san.map((n) => `DNS:${n}`).join(', ')}
authorityKeyIdentifier = keyid:always
${leaf.crl === undefined ? '' : `crlDistributionPoints = URI:${leaf.crl}\n`}certificatePolicies = 1.3.6.1.4.1.53087.1.1
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

/**
 * A self-signed certificate `<name>.pem` and its key: `extensions` from the `config` file, or
 * `addext` lines when there is no configuration. Its PEM.
 */
export function selfSigned(dir: string, name: string, spec: { subject: string; days: number; config?: string; extensions?: string; addext?: string[] }): string {
  const config = spec.config === undefined ? [] : ['-config', spec.config, ...(spec.extensions === undefined ? [] : ['-extensions', spec.extensions])];
  const addext = (spec.addext ?? []).flatMap((line) => ['-addext', line]);
  openssl(['req', '-x509', ...EC, '-keyout', `${name}.key`, '-out', `${name}.pem`, '-days', String(spec.days), '-subj', spec.subject, ...config, ...addext], dir);
  return readFileSync(join(dir, `${name}.pem`), 'utf8');
}

/**
 * A certificate `<name>.pem` and its key, signed by `issuer` (`<issuer>.pem` and `<issuer>.key`):
 * the request made with `config` (when given), the extensions taken from `extfile` (its
 * `extensions` section, else its default one). Its PEM.
 */
export function issue(dir: string, name: string, spec: { subject: string; issuer: string; serial: number; days: number; config?: string; extfile: string; extensions?: string }): string {
  openssl(['req', '-new', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', spec.subject, ...(spec.config === undefined ? [] : ['-config', spec.config])], dir);
  const extensions = spec.extensions === undefined ? [] : ['-extensions', spec.extensions];
  openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', `${spec.issuer}.pem`, '-CAkey', `${spec.issuer}.key`, '-set_serial', String(spec.serial), '-days', String(spec.days), '-extfile', spec.extfile, ...extensions, '-out', `${name}.pem`], dir);
  return readFileSync(join(dir, `${name}.pem`), 'utf8');
}

/** A TLS authority `<ca>.pem` and its key: a self-signed CA (RFC 5280 §4.2.1.9 basicConstraints, §4.2.1.3 keyUsage). Its PEM. */
export function makeTlsCa(dir: string, spec: { ca: string; subject: string; days: number }): string {
  return selfSigned(dir, spec.ca, { subject: spec.subject, days: spec.days, addext: ['basicConstraints=critical,CA:TRUE', 'keyUsage=critical,keyCertSign,cRLSign'] });
}

/**
 * A TLS server certificate `<name>.pem` and its key, for the host names `names` (its subjectAltName,
 * RFC 5280 §4.2.1.6; the common name is the first), signed by the TLS authority `issuer`. Its PEM.
 */
export function issueTlsServer(dir: string, name: string, spec: { names: readonly string[]; issuer: string; serial: number; days: number }): string {
  writeFileSync(join(dir, `${name}.ext`), `basicConstraints = CA:FALSE\nkeyUsage = critical,digitalSignature\nextendedKeyUsage = serverAuth\nsubjectAltName = ${spec.names.map((n) => `DNS:${n}`).join(',')}\n`);
  return issue(dir, name, { subject: `/CN=${spec.names[0]}`, issuer: spec.issuer, serial: spec.serial, days: spec.days, extfile: `${name}.ext` });
}

/** A TLS authority `<ca>.pem` and the certificate `host.pem` (key `host.key`) of the HTTPS host `host`, serial 4096. */
export function makeTlsAuthority(dir: string, spec: { ca: string; subject: string; host: string; days: number }): { ca: string; key: string; cert: string } {
  const ca = makeTlsCa(dir, spec);
  const cert = issueTlsServer(dir, 'host', { names: [spec.host], issuer: spec.ca, serial: 4096, days: spec.days });
  return { ca, key: readFileSync(join(dir, 'host.key'), 'utf8'), cert };
}

/**
 * The fake Mark Verifying Authority: its configuration `mva.cnf` (the leaf section for `logo`), the
 * root `root.pem` and the issuing CA `inter.pem` (serial 8192) with the BIMI EKU.
 */
export function makeMarkAuthority(dir: string, spec: { root: string; inter: string; rootDays: number; interDays: number; logo: string }): { root: string; inter: string } {
  writeFileSync(join(dir, 'mva.cnf'), mvaConfig({ san: ['unused.example'], eku: BIMI_EKU, logo: spec.logo }));
  const root = selfSigned(dir, 'root', { subject: spec.root, days: spec.rootDays, config: 'mva.cnf', extensions: 'root_ext' });
  const inter = issue(dir, 'inter', { subject: spec.inter, issuer: 'root', serial: 8192, days: spec.interDays, config: 'mva.cnf', extfile: 'mva.cnf', extensions: 'inter_ext' });
  return { root, inter };
}

/** A mark certificate's subject (research/bimi.md §6): the organization, its mark type and trademark number, country ZZ. */
export function markSubject(mark: { organization: string; markType: string; trademark: string }): string {
  return `/C=ZZ/O=${mark.organization}/CN=${mark.organization}/markType=${mark.markType}/trademarkCountryOrRegionName=ZZ/trademarkIdentifier=${mark.trademark}`;
}

/** A mark certificate `<name>.pem` (its configuration `<name>.cnf`) for `san`, whose logotype is `logo`, signed by `issuer`. Its PEM. */
export function issueMark(dir: string, name: string, spec: { san: string[]; subject: string; logo: string; issuer: string; serial: number; days: number; eku?: string; crl?: string }): string {
  writeFileSync(join(dir, `${name}.cnf`), mvaConfig({ san: spec.san, eku: spec.eku ?? BIMI_EKU, logo: spec.logo, ...(spec.crl === undefined ? {} : { crl: spec.crl }) }));
  return issue(dir, name, { subject: spec.subject, issuer: spec.issuer, serial: spec.serial, days: spec.days, config: `${name}.cnf`, extfile: `${name}.cnf`, extensions: 'leaf_ext' });
}
