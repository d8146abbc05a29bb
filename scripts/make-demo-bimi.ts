/**
 * Makes the demo's BIMI material (issue 42 item 3) into fixtures/demo-bimi/ (or the folder given as
 * the first argument): the logo of the demo domain brand.example (SVG Tiny PS), a demo Mark
 * Verifying Authority (a root and an issuing CA with the BIMI key usage, research/bimi.md §6), the
 * brand's VMC (leaf + issuing CA) whose logotype is that logo, and a demo web authority with the
 * certificate of the logo host bimi.brand.example (the demo's HTTPS host on 127.0.0.4 presents it).
 * Twenty years, checked by test/service/demo-sections.test.ts. Nothing but `serve --demo` trusts
 * either authority, and only for the demo's own domains. The openssl steps are the BIMI lab's
 * (packages/engine/test/bimi/authority.ts). Run once (`scripts/make-demo-bimi.sh`); the output is
 * committed (the keys of the authorities are not).
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { issueMark, makeMarkAuthority, makeTlsAuthority, markSubject } from '../packages/engine/test/bimi/authority.js';

/** Twenty years, in days. */
const DAYS = 7300;
/** The demo brand's domain and the host its logo and VMC are served from (src/service/demo-transport.ts). */
const BRAND = 'brand.example';
const LOGO_HOST = 'bimi.brand.example';
const LOGO = `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" version="1.2" baseProfile="tiny-ps" viewBox="0 0 100 100">
<title>Brand Example (spoof-checker demo)</title>
<rect width="100" height="100" fill="#0b5394"/>
<path d="M30 25h25c12 0 20 7 20 17 0 6-3 10-8 12 7 2 11 7 11 14 0 11-9 17-22 17H30z M44 37v13h9c5 0 8-2 8-6.5S58 37 53 37z M44 61v15h11c6 0 9-3 9-7.5S61 61 55 61z" fill="#ffffff"/>
</svg>
`;

const out = resolve(process.argv[2] ?? fileURLToPath(new URL('../fixtures/demo-bimi/', import.meta.url)));
mkdirSync(out, { recursive: true });
const dir = mkdtempSync(join(tmpdir(), 'demo-bimi-'));
try {
  // The demo Mark Verifying Authority (its root's common name is DEMO_MARK_AUTHORITY) and the brand's VMC.
  const mva = makeMarkAuthority(dir, {
    root: '/O=spoof-checker demo/CN=spoof-checker demo Mark Verifying Authority (not for real use)',
    inter: '/O=spoof-checker demo/CN=spoof-checker demo Mark Issuing CA (not for real use)',
    rootDays: DAYS,
    interDays: DAYS,
    logo: LOGO,
  });
  const subject = markSubject({ organization: 'Brand Example', markType: 'Registered Mark', trademark: 'DEMO-1' });
  const vmc = issueMark(dir, 'vmc', { san: [BRAND], subject, logo: LOGO, issuer: 'inter', serial: 10_000, days: DAYS });
  // The demo web authority and the logo host's TLS certificate.
  const web = makeTlsAuthority(dir, { ca: 'web-ca', subject: '/CN=spoof-checker demo web authority (not for real use)', host: LOGO_HOST, days: DAYS });

  writeFileSync(join(out, 'logo.svg'), LOGO);
  writeFileSync(join(out, 'mva-root.pem'), mva.root);
  writeFileSync(join(out, 'vmc.pem'), vmc + mva.inter);
  writeFileSync(join(out, 'web-ca.pem'), web.ca);
  writeFileSync(join(out, 'host.pem'), web.cert);
  copyFileSync(join(dir, 'host.key'), join(out, 'host.key'));
  console.log(`wrote ${out}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
