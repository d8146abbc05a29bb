/**
 * Makes the demo's own test certificate authority and the certificates its transport responders
 * present (src/service/demo-transport.ts) into fixtures/demo-transport/ (or the folder given as the
 * first argument): `ca.pem`, and `good.pem`/`good.key` (the MX and MTA-STS hosts of the three
 * sts-*.example domains) and `wrong.pem`/`wrong.key` (a name none of them has). Twenty years. The
 * openssl steps are the BIMI lab's TLS authority (packages/engine/test/bimi/authority.ts). Run once
 * (`scripts/make-demo-transport-certs.sh`); the output is committed, so the demo needs no openssl
 * (the authority's key is not). The keys are demo-only: nothing but `serve --demo` trusts this
 * authority, and only for the demo's own loopback responders. New keys change what
 * dnssec-secure.example's TLSA record (DANE-EE 3 1 1) must pin: run scripts/sign-demo-zones.sh after.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { issueTlsServer, makeTlsCa } from '../packages/engine/test/bimi/authority.js';

/** Twenty years, in days. */
const DAYS = 7300;
/** The demo domains whose MX and MTA-STS hosts present the good certificate (fixtures/demo-transport/zones/). */
const STS_DOMAINS = ['sts-enforced.example', 'sts-testing.example', 'sts-broken.example'];
/** The leaves: the good one for every demo host, the wrong one for a name none of them has. */
const LEAVES = {
  good: [...STS_DOMAINS.map((d) => `mx.${d}`), ...STS_DOMAINS.map((d) => `mta-sts.${d}`)],
  wrong: ['mx.elsewhere.example'],
};

const out = resolve(process.argv[2] ?? fileURLToPath(new URL('../fixtures/demo-transport/', import.meta.url)));
mkdirSync(out, { recursive: true });
const dir = mkdtempSync(join(tmpdir(), 'demo-transport-'));
try {
  writeFileSync(join(out, 'ca.pem'), makeTlsCa(dir, { ca: 'ca', subject: '/CN=spoof-checker demo authority (not for real use)', days: DAYS }));
  for (const [serial, [name, names]] of Object.entries(LEAVES).entries()) {
    writeFileSync(join(out, `${name}.pem`), issueTlsServer(dir, name, { names, issuer: 'ca', serial: serial + 1, days: DAYS }));
    copyFileSync(join(dir, `${name}.key`), join(out, `${name}.key`));
  }
  console.log(`wrote ${out}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
