/**
 * The embedded server against a real authoritative server: NSD serves a few fixture zones on a
 * loopback port, the embedded server serves the same files, and `NetworkResolver` asks both the same
 * questions: every owner name of the zones with every record type, names that do not exist, empty
 * non-terminals, wildcard matches, CNAME chains across zones, names outside the zones. The answers
 * must be identical, TTLs and negative TTLs included. NSD must be installed (Debian: `nsd`); without
 * it this test fails, saying so.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetworkResolver } from '../../src/dns/network-resolver.js';
import { startDnsServer, type RunningDnsServer } from '../../src/zones/server.js';
import type { DnsAnswer, RecordType } from '../../src/dns/types.js';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { loadZoneFile } from '../../src/zones/load.js';
import { startNsd, type RunningNsd } from '../acceptance/nsd.js';

const FIXTURE_ZONES = fileURLToPath(new URL('../../../../fixtures/zones/', import.meta.url));
/** Zones with apex data, CNAMEs within and across zones, wildcards, deep names, a long TXT. */
const ZONES = ['p-reject.example', 'dmarc-cname.example', 'dmarc-saas.example', 'deep-name.example', 'rua-wildcard.example', 'mx-cname.example', 'spf-long-record.example'];
const TYPES: RecordType[] = ['A', 'AAAA', 'MX', 'TXT', 'CNAME', 'NS', 'SOA', 'PTR'];

let nsd: RunningNsd | undefined;
let embedded: RunningDnsServer;
let viaNsd: NetworkResolver;
let viaEmbedded: NetworkResolver;
let owners: string[] = [];

beforeAll(async () => {
  const texts = new Map<string, string>();
  for (const zone of ZONES) texts.set(zone, await readFile(join(FIXTURE_ZONES, `${zone}.zone`), 'utf8'));
  nsd = await startNsd(texts, 'p-reject.example');
  const zones = await Promise.all(ZONES.map((zone) => loadZoneFile(join(FIXTURE_ZONES, `${zone}.zone`), { origin: zone })));
  owners = [...new Set(zones.flatMap((zone) => zone.records.map((record) => record.name.toLowerCase().replace(/\.$/, ''))))];
  embedded = await startDnsServer({ resolver: new ZoneResolver(zones) });
  viaEmbedded = new NetworkResolver({ servers: [`127.0.0.1:${embedded.address.port}`], timeoutMs: 2000, attempts: 1 });
  viaNsd = new NetworkResolver({ servers: [nsd.address], timeoutMs: 500, attempts: 1 });
}, 30_000);

afterAll(async () => {
  await nsd?.stop();
  await embedded?.close();
});

/** An answer in a form two servers must agree on: records in a fixed order, the error reason without its detail. */
function comparable(answer: DnsAnswer): unknown {
  if (answer.kind === 'error') return { kind: 'error', reason: answer.reason };
  const records = answer.kind === 'records' ? answer.records.map((record) => JSON.stringify(record)).sort() : undefined;
  return { kind: answer.kind, ttl: answer.ttl, cnames: answer.cnames ?? [], records };
}

async function both(name: string, type: RecordType): Promise<[unknown, unknown]> {
  const [fromNsd, fromEmbedded] = await Promise.all([viaNsd.resolve(name, type), viaEmbedded.resolve(name, type)]);
  return [comparable(fromNsd), comparable(fromEmbedded)];
}

describe('the embedded server answers as NSD does (the same zone files, the same client)', () => {
  it('for every owner name of the zones and every record type', async () => {
    expect(owners.length).toBeGreaterThan(30);
    const differences: string[] = [];
    for (const owner of owners) {
      for (const type of TYPES) {
        const [fromNsd, fromEmbedded] = await both(owner, type);
        if (JSON.stringify(fromNsd) !== JSON.stringify(fromEmbedded)) {
          differences.push(`${owner} ${type}: NSD ${JSON.stringify(fromNsd)}, embedded ${JSON.stringify(fromEmbedded)}`);
        }
      }
    }
    expect(differences).toEqual([]);
  }, 30_000);

  it.each([
    ['nothing-here.p-reject.example', 'TXT', 'nxdomain', 'a name that does not exist'],
    ['p-reject.example', 'AAAA', 'nodata', 'a name without that type'],
    ['c.d.e.f.g.h.deep-name.example', 'A', 'nodata', 'an empty non-terminal (RFC 8020)'],
    ['_dmarc.dmarc-cname.example', 'TXT', 'records', 'a CNAME into another zone'],
    ['example', 'TXT', 'error', 'outside every zone: REFUSED'],
    ['com', 'NS', 'error', 'the same for a TLD'],
  ] as [string, RecordType, string, string][])('%s %s: %s (%s)', async (name, type, kind) => {
    const [fromNsd, fromEmbedded] = await both(name, type);
    expect(fromEmbedded).toEqual(fromNsd);
    expect(fromNsd).toMatchObject({ kind });
  });

  it('answers a wildcard-covered name the same', async () => {
    const wildcardOwner = owners.find((owner) => owner.startsWith('*.'));
    expect(wildcardOwner, 'rua-wildcard.example has a wildcard').toBeDefined();
    const covered = `covered-by-test.${wildcardOwner!.slice(2)}`;
    for (const type of ['TXT', 'A'] as const) {
      const [fromNsd, fromEmbedded] = await both(covered, type);
      expect(fromEmbedded).toEqual(fromNsd);
    }
  });
});
