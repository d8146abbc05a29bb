/**
 * Synthetic domains for the benchmarks: a realistic mix of what checked domains publish, generated
 * deterministically from an index, as RFC 1035 §5 master files (so the scan benchmark can load them
 * from disk through the CLI) or as parsed `Zone`s (for the in-process benchmarks).
 *
 * Each domain `brand<index>.example` is its own zone: SOA, NS, an address, and by a fixed draw
 * - SPF (90%): provider includes (Google, Microsoft 365, Mailchimp, SendGrid), sometimes ip4 ranges
 *   and a self-hosted `mx`, ending in -all, ~all or ?all; a few publish +all or two records;
 * - DMARC (70%): p=reject / quarantine / none, sometimes sp=, pct=, and rua= to the domain itself or
 *   to an outside report service (which authorises it, RFC 7489 §7.1);
 * - DKIM (40%): one key, RSA 2048 mostly, some RSA 1024 and Ed25519, under a common selector;
 * - MX (85%): Google, Microsoft 365, or hosts of its own with addresses.
 * The providers' zones (their SPF includes, MX hosts) are shared by every domain, as in real DNS.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Zone } from '../packages/engine/src/zones/types.js';
import { parseZone } from '../packages/engine/src/zones/parse.js';

/** The keys domains publish: a small pool, shared, since generating one per domain would take minutes. */
export interface KeyPool {
  rsa2048: string[];
  rsa1024: string[];
  ed25519: string[];
}

/** RSA 2048-bit keys in the pool (key generation is the slow part of the set-up). */
export const POOL_RSA_2048 = 6;
/** RSA 1024-bit keys in the pool. */
export const POOL_RSA_1024 = 2;
/** Ed25519 keys in the pool. */
export const POOL_ED25519 = 2;

/** Generates the key pool: the base64 `p=` values (SubjectPublicKeyInfo for RSA, raw 32 octets for Ed25519, RFC 8463 §4.2). */
export function createKeyPool(): KeyPool {
  const rsa = (bits: number) =>
    generateKeyPairSync('rsa', { modulusLength: bits }).publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  const ed25519 = () => {
    const der = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'der' });
    return der.subarray(der.length - 32).toString('base64'); // the raw key is the last 32 octets of the SPKI
  };
  return {
    rsa2048: Array.from({ length: POOL_RSA_2048 }, () => rsa(2048)),
    rsa1024: Array.from({ length: POOL_RSA_1024 }, () => rsa(1024)),
    ed25519: Array.from({ length: POOL_ED25519 }, ed25519),
  };
}

/** The name of synthetic domain `index`. */
export function syntheticDomainName(index: number): string {
  return `brand${String(index).padStart(6, '0')}.example`;
}

/** A small deterministic generator (mulberry32), so every run builds the same domains. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function pick<T>(draw: () => number, items: readonly T[]): T {
  return items[Math.floor(draw() * items.length)] as T;
}

/** A TXT record's data as quoted character-strings of at most 255 octets (RFC 1035 §3.3.14). */
function quoted(text: string): string {
  const pieces: string[] = [];
  for (let start = 0; start < text.length; start += 255) pieces.push(`"${text.slice(start, start + 255)}"`);
  return pieces.length > 1 ? `( ${pieces.join(' ')} )` : (pieces[0] ?? '""');
}

const SOA_TAIL = '( 2025060101 7200 900 1209600 300 )';
const NS_LINES = '                  IN NS    ns1.dns-host.example.\n                  IN NS    ns2.dns-host.example.';

/** The master file of synthetic domain `index`. */
export function domainZoneText(index: number, keys: KeyPool): string {
  const domain = syntheticDomainName(index);
  const draw = random(index * 2654435761);
  const octet = 1 + (index % 250);
  const lines = [
    `$ORIGIN ${domain}.`,
    '$TTL 3600',
    `@                 IN SOA   ns1.dns-host.example. hostmaster.${domain}. ${SOA_TAIL}`,
    NS_LINES,
    `                  IN A     198.51.100.${octet}`,
  ];

  // MX: who receives the domain's mail decides its SPF includes, as in practice.
  const mxKind = draw() < 0.85 ? pick(draw, ['google', 'google', 'microsoft', 'own'] as const) : 'none';
  if (mxKind === 'google') {
    lines.push('                  IN MX    1 aspmx.l.google.com.', '                  IN MX    5 alt1.aspmx.l.google.com.');
  } else if (mxKind === 'microsoft') {
    lines.push(`                  IN MX    0 ${domain.replace(/\./g, '-')}.mail.protection.outlook.com.`);
  } else if (mxKind === 'own') {
    lines.push('                  IN MX    10 mx1', '                  IN MX    20 mx2');
    lines.push(`mx1               IN A     203.0.113.${octet}`, `mx2               IN A     203.0.113.${(octet % 250) + 1}`);
    lines.push(`mx1               IN AAAA  2001:db8:${(index >>> 16).toString(16)}:${(index & 0xffff).toString(16)}::25`);
  }

  // SPF (RFC 7208).
  const spfDraw = draw();
  if (spfDraw < 0.9) {
    const terms: string[] = [];
    if (mxKind === 'google') terms.push('include:_spf.google.com');
    if (mxKind === 'microsoft') terms.push('include:spf.protection.outlook.com');
    if (mxKind === 'own') terms.push(draw() < 0.5 ? 'mx' : `ip4:203.0.113.${octet}`);
    if (draw() < 0.3) terms.push('include:servers.mcsv.net');
    if (draw() < 0.2) terms.push('include:sendgrid.net');
    if (draw() < 0.25) terms.push(`ip4:198.51.100.${octet}/32`);
    const all = spfDraw < 0.01 ? '+all' : pick(draw, ['-all', '-all', '~all', '~all', '~all', '?all'] as const);
    lines.push(`                  IN TXT   ${quoted(['v=spf1', ...terms, all].join(' '))}`);
    if (spfDraw > 0.885) lines.push('                  IN TXT   "v=spf1 include:_spf.google.com ~all"'); // two records: permerror
  }
  lines.push(`                  IN TXT   "site-verification=${(index * 7919).toString(36)}"`);
  lines.push(`www               IN CNAME ${domain}.`);

  // DMARC (RFC 7489, RFC 9989).
  if (draw() < 0.7) {
    const tags = [`p=${pick(draw, ['reject', 'reject', 'quarantine', 'none'] as const)}`];
    if (draw() < 0.2) tags.push(`sp=${pick(draw, ['none', 'quarantine', 'reject'] as const)}`);
    if (draw() < 0.1) tags.push(`pct=${pick(draw, [0, 25, 50, 100] as const)}`);
    const rua = draw();
    if (rua < 0.5) tags.push(`rua=mailto:dmarc@${domain}`);
    else if (rua < 0.8) tags.push(`rua=mailto:${domain.replace(/\./g, '-')}@reports.dmarc-collector.example`);
    lines.push(`_dmarc            IN TXT   ${quoted(['v=DMARC1', ...tags].join('; '))}`);
  }

  // DKIM (RFC 6376 §3.6.1).
  if (draw() < 0.4) {
    const selector = mxKind === 'microsoft' ? 'selector1' : pick(draw, ['google', 'default', 's1', 'k1', 'dkim'] as const);
    const kind = draw();
    const record =
      kind < 0.8
        ? `v=DKIM1; k=rsa; p=${pick(draw, keys.rsa2048)}`
        : kind < 0.9
          ? `v=DKIM1; k=rsa; p=${pick(draw, keys.rsa1024)}`
          : `v=DKIM1; k=ed25519; p=${pick(draw, keys.ed25519)}`;
    lines.push(`${selector}._domainkey IN TXT ${quoted(record)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The providers' zones every synthetic domain may refer to. */
export function sharedZoneTexts(): Record<string, string> {
  const zone = (origin: string, body: string[]) =>
    [`$ORIGIN ${origin}.`, '$TTL 3600', `@ IN SOA ns1.dns-host.example. hostmaster.${origin}. ${SOA_TAIL}`, NS_LINES, ...body, ''].join('\n');
  return {
    'google.com': zone('google.com', [
      '_spf              IN TXT   "v=spf1 include:_netblocks.google.com include:_netblocks2.google.com ~all"',
      '_netblocks        IN TXT   "v=spf1 ip4:35.190.247.0/24 ip4:64.233.160.0/19 ip4:66.102.0.0/20 ip4:66.249.80.0/20 ip4:72.14.192.0/18 ~all"',
      '_netblocks2       IN TXT   "v=spf1 ip6:2001:4860:4000::/36 ip6:2404:6800:4000::/36 ~all"',
      'aspmx.l           IN A     142.250.27.26',
      'aspmx.l           IN AAAA  2a00:1450:4025:401::1a',
      'alt1.aspmx.l      IN A     142.250.153.26',
      'alt1.aspmx.l      IN AAAA  2a00:1450:4013:c16::1a',
    ]),
    'outlook.com': zone('outlook.com', [
      'spf.protection    IN TXT   "v=spf1 ip4:40.92.0.0/15 ip4:40.107.0.0/16 ip4:52.100.0.0/15 ip4:104.47.0.0/17 ip6:2a01:111:f400::/48 include:spfd.protection.outlook.com -all"',
      'spfd.protection   IN TXT   "v=spf1 ip4:51.4.72.0/24 ip4:51.5.72.0/24 ip4:51.5.80.0/27 -all"',
      '*.mail.protection IN A     52.101.68.10',
      '*.mail.protection IN A     52.101.68.11',
    ]),
    'mcsv.net': zone('mcsv.net', ['servers           IN TXT   "v=spf1 ip4:205.201.128.0/20 ip4:198.2.128.0/18 ip4:148.105.8.0/21 ?all"']),
    'sendgrid.net': zone('sendgrid.net', ['@                 IN TXT   "v=spf1 ip4:167.89.0.0/17 ip4:208.117.48.0/20 ip4:50.31.32.0/19 ip4:198.37.144.0/20 ~all"']),
    'dns-host.example': zone('dns-host.example', ['ns1 IN A 192.0.2.53', 'ns2 IN A 192.0.2.54']),
    'dmarc-collector.example': zone('dmarc-collector.example', [
      '_dmarc            IN TXT   "v=DMARC1; p=reject"',
      'reports           IN MX    10 mx.dmarc-collector.example.',
      'mx                IN A     192.0.2.25',
      // RFC 7489 §7.1: the collector authorises reports for any domain.
      '*._report._dmarc.reports IN TXT "v=DMARC1"',
    ]),
  };
}

/** `count` synthetic domains plus the shared zones, parsed, for a `ZoneResolver`. */
export function syntheticZones(count: number, keys: KeyPool, first = 0): Zone[] {
  const zones = Object.values(sharedZoneTexts()).map((text) => parseZone(text, { requireSoaAndNs: true }));
  for (let index = first; index < first + count; index++) zones.push(parseZone(domainZoneText(index, keys), { requireSoaAndNs: true }));
  return zones;
}

/** Writes the zones of `count` synthetic domains (and the shared ones) as `*.zone` files in `dir`. */
export async function writeSyntheticZoneDirectory(dir: string, count: number, keys: KeyPool): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const [origin, text] of Object.entries(sharedZoneTexts())) await writeFile(join(dir, `${origin}.zone`), text);
  const batch = 500;
  for (let start = 0; start < count; start += batch) {
    const writes: Promise<void>[] = [];
    for (let index = start; index < Math.min(count, start + batch); index++) {
      writes.push(writeFile(join(dir, `${syntheticDomainName(index)}.zone`), domainZoneText(index, keys)));
    }
    await Promise.all(writes);
  }
}
