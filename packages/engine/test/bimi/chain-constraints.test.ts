/**
 * Issue 38, item 11: RFC 5280 §6.1 constraints on mark certificate chains made with openssl (the
 * lab's fake Mark Verifying Authority recipe, packages/engine/test/bimi/authority.ts): a sub-CA under a `pathlen:0` CA
 * (§4.2.1.9), an issuer without `keyCertSign` (§4.2.1.3), names outside a CA's name constraints
 * (§4.2.1.10, DNS and directory names); and the same chains within their constraints, still trusted.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bimiRootsFromPem, checkMarkCertificate, type BimiRoot } from '../../src/bimi/certificate.js';
import { BIMI_EKU, issue, issueMark, markSubject, mvaConfig, selfSigned } from './authority.js';
import { LAB_CRL, LOGO_A } from './lab.js';

/** A CA section of the configuration: its basic constraints, key usage and extra lines. */
const caSection = (name: string, basic: string, usage: string, extra: string[] = []): string =>
  [`[ ${name} ]`, `basicConstraints = critical, ${basic}`, `keyUsage = critical, ${usage}`, `extendedKeyUsage = ${BIMI_EKU}`, ...extra, 'subjectKeyIdentifier = hash', 'authorityKeyIdentifier = keyid:always'].join('\n');

/** CA sections added to the lab's configuration. */
const CA_SECTIONS = [
  '',
  caSection('sub_ext', 'CA:TRUE', 'keyCertSign, cRLSign'),
  caSection('nokcs_ext', 'CA:TRUE', 'digitalSignature'),
  caSection('ncdns_ext', 'CA:TRUE, pathlen:0', 'keyCertSign, cRLSign', ['nameConstraints = critical, permitted;DNS:allowed.example, excluded;DNS:blocked.allowed.example']),
  caSection('ncdir_ext', 'CA:TRUE, pathlen:0', 'keyCertSign, cRLSign', ['nameConstraints = critical, permitted;dirName:dir_other']),
  caSection('ncdirok_ext', 'CA:TRUE, pathlen:0', 'keyCertSign, cRLSign', ['nameConstraints = critical, permitted;dirName:dir_brand']),
  '[ dir_other ]\nC = ZZ\nO = Other Ltd',
  '[ dir_brand ]\nC = ZZ\nO = Brand Ltd',
  '',
].join('\n');

let dir = '';
let roots: BimiRoot[] = [];
const pems: Record<string, string> = {};
/** A random serial number, below a billion. */
const randomSerial = (): number => Math.floor(Math.random() * 1e9);

/** A CA named `name`, signed by `issuer` (its .pem and .key), with the configuration's `section`. */
function ca(name: string, issuer: string, section: string): string {
  return issue(dir, name, { subject: `/O=Test MVA/CN=${name}`, issuer, serial: randomSerial(), days: 365, config: 'ca.cnf', extfile: 'ca.cnf', extensions: section });
}

/** A mark certificate for `san`, signed by `issuer`. */
function leaf(name: string, san: string, issuer: string): string {
  const subject = markSubject({ organization: 'Brand Ltd', markType: 'Registered Mark', trademark: 'TM-1' });
  return issueMark(dir, name, { san: [san], subject, logo: LOGO_A, issuer, serial: randomSerial(), days: 365, crl: LAB_CRL });
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'bimi-chains-'));
  writeFileSync(join(dir, 'ca.cnf'), mvaConfig({ san: ['unused.example'], eku: BIMI_EKU, logo: LOGO_A, crl: LAB_CRL }) + CA_SECTIONS);
  roots = bimiRootsFromPem(selfSigned(dir, 'root', { subject: '/O=Test MVA/CN=Constraints Root', days: 3650, config: 'ca.cnf', extensions: 'root_ext' }), 'lab');
  // pathlen:0 CA → sub-CA → mark certificate (refused); and root → sub-CA → sub-CA → mark (no pathlen: trusted).
  const zero = ca('Pathlen Zero CA', 'root', 'inter_ext');
  const under = ca('Sub CA Under Zero', 'Pathlen Zero CA', 'sub_ext');
  pems.pathlen = leaf('pathlen', 'brand.example', 'Sub CA Under Zero') + under + zero;
  const open1 = ca('Open CA One', 'root', 'sub_ext');
  const open2 = ca('Open CA Two', 'Open CA One', 'sub_ext');
  pems.twoLevels = leaf('twolevels', 'brand.example', 'Open CA Two') + open2 + open1;
  const noKeyCertSign = ca('No KeyCertSign CA', 'root', 'nokcs_ext');
  pems.noKeyCertSign = leaf('nokcs', 'brand.example', 'No KeyCertSign CA') + noKeyCertSign;
  const dns = ca('DNS Constrained CA', 'root', 'ncdns_ext');
  pems.dnsOutside = leaf('dnsout', 'brand.example', 'DNS Constrained CA') + dns;
  pems.dnsExcluded = leaf('dnsexcl', 'blocked.allowed.example', 'DNS Constrained CA') + dns;
  pems.dnsInside = leaf('dnsin', 'shop.allowed.example', 'DNS Constrained CA') + dns;
  const dirOther = ca('Dir Constrained CA', 'root', 'ncdir_ext');
  pems.dirOutside = leaf('dirout', 'brand.example', 'Dir Constrained CA') + dirOther;
  const dirBrand = ca('Dir Brand CA', 'root', 'ncdirok_ext');
  pems.dirInside = leaf('dirin', 'brand.example', 'Dir Brand CA') + dirBrand;
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const judge = (pem: string, domain: string) =>
  checkMarkCertificate({ pem, url: 'https://logos.lab.example/x.pem', domain, organizationalDomain: domain, selector: 'default', logo: new TextEncoder().encode(LOGO_A), roots, now: new Date() });

describe('RFC 5280 §6.1 constraints on a mark certificate chain', () => {
  it.each([
    ['a sub-CA under a pathlen:0 CA (§4.2.1.9)', 'pathlen', 'brand.example', /"Pathlen Zero CA" allows 0 intermediate CA certificate\(s\) below it \(pathLenConstraint\), and the path has 1/],
    ['an issuer whose key usage lacks keyCertSign (§4.2.1.3)', 'noKeyCertSign', 'brand.example', /"No KeyCertSign CA" may not sign certificates: its key usage lacks keyCertSign/],
    ['a DNS name outside the permitted subtree (§4.2.1.10)', 'dnsOutside', 'brand.example', /"brand\.example", outside the dNSName subtrees "DNS Constrained CA" permits/],
    ['a DNS name inside an excluded subtree (§4.2.1.10)', 'dnsExcluded', 'blocked.allowed.example', /"blocked\.allowed\.example", inside a dNSName subtree "DNS Constrained CA" excludes/],
    ['a subject outside the permitted directory names (§4.2.1.10)', 'dirOutside', 'brand.example', /its subject name, outside the directoryName subtrees "Dir Constrained CA" permits/],
  ])('refuses %s', (_what, name, domain, problem) => {
    const result = judge(pems[name]!, domain);
    expect(result.chain.anchor).toBe('lab: Constraints Root');
    expect(result.chain.trusted).toBe(false);
    expect(result.chain.problems.join('\n')).toMatch(problem);
  });

  it.each([
    ['two intermediates under a root without a path length', 'twoLevels', 'brand.example'],
    ['a DNS name inside the permitted subtree', 'dnsInside', 'shop.allowed.example'],
    ['a subject inside the permitted directory names', 'dirInside', 'brand.example'],
  ])('trusts %s', (_what, name, domain) => {
    const result = judge(pems[name]!, domain);
    expect(result.chain.problems).toEqual([]);
    expect(result.chain.trusted).toBe(true);
  });
});
