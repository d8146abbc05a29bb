/**
 * The signed fixture zones (fixtures/dnssec, made by scripts/sign-fixture-zones.sh) behind the
 * embedded server on loopback, and the cases every DNSSEC test runs: each with what unbound says.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { startDnsServer, type RunningDnsServer } from '../../src/zones/server.js';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { loadSignedZoneDirectory } from '../../src/zones/signed.js';
import { parseTrustAnchors } from '../../src/dnssec/anchors.js';
import { createRawQuery } from '../../src/dnssec/query.js';
import type { DnssecStatus, RawQuery, TrustAnchor } from '../../src/dnssec/types.js';

/** fixtures/dnssec */
export const DNSSEC_FIXTURES = fileURLToPath(new URL('../../../../fixtures/dnssec/', import.meta.url));
/** The test root's trust anchor file (DS). */
export const ROOT_ANCHOR_FILE = `${DNSSEC_FIXTURES}root-anchor.ds`;
/** 2030-01-01T00:00:00Z: inside the 2025–2035 windows, after the expired zone's, before the future one's. */
export const FIXED_NOW = Date.UTC(2030, 0, 1) / 1000;

/** The test root's anchors. */
export function fixtureAnchors(): TrustAnchor[] {
  return parseTrustAnchors(readFileSync(ROOT_ANCHOR_FILE, 'utf8'), ROOT_ANCHOR_FILE);
}

/** The embedded server with every signed fixture zone; names outside them are NXDOMAIN. */
export async function startSignedServer(): Promise<RunningDnsServer> {
  const signedZones = await loadSignedZoneDirectory(`${DNSSEC_FIXTURES}zones`);
  return startDnsServer({ resolver: new ZoneResolver([]), signedZones, outsideZones: 'nxdomain' });
}

/**
 * The signed server for the tests of one file (call it at the file's top level): started before
 * them, closed after. `query` asks it with DO and CD (`createRawQuery`); `server()` is the server.
 */
export function signedServerPerFile(): { query: RawQuery; server: () => RunningDnsServer } {
  let server: RunningDnsServer | undefined;
  let query: RawQuery | undefined;
  beforeAll(async () => {
    server = await startSignedServer();
    query = createRawQuery([server.address]);
  });
  afterAll(async () => {
    await server?.close();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the signed server is not started yet (beforeAll)');
    return value;
  };
  return { query: (name, type) => started(query)(name, type), server: () => started(server) };
}

/** One fixture question and the state (and RFC 8914 code) it must get, with what unbound says. */
export interface DnssecCase {
  name: string;
  type: 'A' | 'MX' | 'TXT' | 'TLSA';
  status: DnssecStatus;
  code: number | null;
  /** unbound 1.17 (forward mode, `ede: yes`): secure = AD, insecure = no AD, bogus = SERVFAIL. */
  unbound: 'secure' | 'insecure' | 'bogus';
}

/** Every case of the fixtures (docs/dnssec.md lists them with how each was made). */
export const CASES: readonly DnssecCase[] = [
  { name: 'secure-nsec.test', type: 'MX', status: 'secure', code: null, unbound: 'secure' },
  { name: 'nope.secure-nsec.test', type: 'A', status: 'secure', code: null, unbound: 'secure' },
  { name: 'www.secure-nsec.test', type: 'MX', status: 'secure', code: null, unbound: 'secure' },
  { name: 'x.wild.secure-nsec.test', type: 'TXT', status: 'secure', code: null, unbound: 'secure' },
  { name: 'x.wild.secure-nsec.test', type: 'A', status: 'secure', code: null, unbound: 'secure' },
  { name: '_tcp.mx1.secure-nsec.test', type: 'A', status: 'secure', code: null, unbound: 'secure' },
  { name: '_25._tcp.mx1.secure-nsec.test', type: 'TLSA', status: 'secure', code: null, unbound: 'secure' },
  { name: 'secure-nsec3.test', type: 'MX', status: 'secure', code: null, unbound: 'secure' },
  { name: 'nope.secure-nsec3.test', type: 'A', status: 'secure', code: null, unbound: 'secure' },
  { name: 'www.secure-nsec3.test', type: 'MX', status: 'secure', code: null, unbound: 'secure' },
  { name: 'x.wild.secure-nsec3.test', type: 'TXT', status: 'secure', code: null, unbound: 'secure' },
  { name: 'x.wild.secure-nsec3.test', type: 'A', status: 'secure', code: null, unbound: 'secure' },
  { name: '_tcp.mx1.secure-nsec3.test', type: 'A', status: 'secure', code: null, unbound: 'secure' },
  { name: 'expired.test', type: 'MX', status: 'bogus', code: 7, unbound: 'bogus' },
  { name: 'future.test', type: 'MX', status: 'bogus', code: 8, unbound: 'bogus' },
  { name: 'ds-mismatch.test', type: 'MX', status: 'bogus', code: 9, unbound: 'bogus' },
  { name: 'no-dnskey.test', type: 'MX', status: 'bogus', code: 9, unbound: 'bogus' },
  { name: 'no-rrsig.test', type: 'MX', status: 'bogus', code: 10, unbound: 'bogus' },
  { name: 'tampered.test', type: 'MX', status: 'bogus', code: 6, unbound: 'bogus' },
  { name: 'wrong-signer.test', type: 'MX', status: 'bogus', code: 9, unbound: 'bogus' },
  { name: 'unsigned.test', type: 'MX', status: 'insecure', code: null, unbound: 'insecure' },
  { name: 'unsupported-alg.test', type: 'MX', status: 'insecure', code: 1, unbound: 'insecure' },
  { name: 'unsupported-digest.test', type: 'MX', status: 'insecure', code: 2, unbound: 'insecure' },
  { name: 'optout.test', type: 'MX', status: 'secure', code: null, unbound: 'secure' },
  { name: 'nope.optout.test', type: 'A', status: 'insecure', code: null, unbound: 'insecure' },
  { name: 'iter200.test', type: 'MX', status: 'secure', code: null, unbound: 'secure' },
  { name: 'nope.iter200.test', type: 'A', status: 'insecure', code: 27, unbound: 'insecure' },
  { name: 'to-insecure.cname.test', type: 'A', status: 'insecure', code: null, unbound: 'insecure' },
  { name: 'to-bogus.cname.test', type: 'A', status: 'bogus', code: 7, unbound: 'bogus' },
  { name: 'to-secure.cname.test', type: 'A', status: 'secure', code: null, unbound: 'secure' },
  { name: 'mx-alias.mx-cname.test', type: 'A', status: 'secure', code: null, unbound: 'secure' },
  { name: 'alg5.test', type: 'MX', status: 'secure', code: null, unbound: 'secure' },
  { name: 'alg7.test', type: 'MX', status: 'secure', code: null, unbound: 'secure' },
  { name: 'alg8.test', type: 'MX', status: 'secure', code: null, unbound: 'secure' },
  { name: 'alg10.test', type: 'MX', status: 'secure', code: null, unbound: 'secure' },
  { name: 'alg13.test', type: 'MX', status: 'secure', code: null, unbound: 'secure' },
  { name: 'alg14.test', type: 'MX', status: 'secure', code: null, unbound: 'secure' },
  { name: 'alg15.test', type: 'MX', status: 'secure', code: null, unbound: 'secure' },
  { name: 'alg16.test', type: 'MX', status: 'secure', code: null, unbound: 'secure' },
  { name: 'x.deleg.secure-nsec.test', type: 'A', status: 'insecure', code: null, unbound: 'insecure' },
  { name: 'x.deleg.secure-nsec3.test', type: 'A', status: 'insecure', code: null, unbound: 'insecure' },
  { name: 'nope.test', type: 'A', status: 'secure', code: null, unbound: 'secure' },
  { name: 'nope', type: 'A', status: 'secure', code: null, unbound: 'secure' },
];
