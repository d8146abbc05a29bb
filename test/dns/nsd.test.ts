/**
 * The embedded server against a real authoritative server: NSD serves a few fixture zones on a
 * loopback port, the embedded server serves the same files, and `NetworkResolver` asks both the same
 * questions: every owner name of the zones with every record type, names that do not exist, empty
 * non-terminals, wildcard matches, CNAME chains across zones, names outside the zones. The answers
 * must be identical, TTLs and negative TTLs included. NSD must be installed (Debian: `nsd`); without
 * it this test fails, saying so.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetworkResolver } from '../../src/dns/network-resolver.js';
import { startDnsServer, type RunningDnsServer } from '../../src/dns/server.js';
import type { DnsAnswer, RecordType } from '../../src/dns/types.js';
import { ZoneResolver } from '../../src/dns/zone-resolver.js';
import { loadZoneDirectory } from '../../src/zones/load.js';

const NSD = '/usr/sbin/nsd';
const FIXTURE_ZONES = fileURLToPath(new URL('../../fixtures/zones/', import.meta.url));
/** Zones with apex data, CNAMEs within and across zones, wildcards, deep names, a long TXT. */
const ZONES = ['p-reject.example', 'dmarc-cname.example', 'dmarc-saas.example', 'deep-name.example', 'rua-wildcard.example', 'mx-cname.example', 'spf-long-record.example'];
const TYPES: RecordType[] = ['A', 'AAAA', 'MX', 'TXT', 'CNAME', 'NS', 'SOA', 'PTR'];
/** How long NSD may take to start answering. */
const START_TIMEOUT_MS = 10_000;

let dir: string;
let nsd: ChildProcess | undefined;
let nsdLog = '';
let embedded: RunningDnsServer;
let viaNsd: NetworkResolver;
let viaEmbedded: NetworkResolver;
let owners: string[] = [];

/** A port free on loopback for TCP now (NSD binds UDP and TCP on it). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  if (spawnSync(NSD, ['-v']).error) throw new Error(`this test needs NSD at ${NSD} (Debian package "nsd"); it is not installed`);
  dir = await mkdtemp(join(tmpdir(), 'nsd-test-'));
  for (const zone of ZONES) await copyFile(join(FIXTURE_ZONES, `${zone}.zone`), join(dir, `${zone}.zone`));
  const port = await freePort();
  const config = [
    'server:',
    `  ip-address: 127.0.0.1@${port}`,
    `  port: ${port}`,
    '  username: ""',
    '  chroot: ""',
    `  zonesdir: "${dir}"`,
    `  pidfile: "${dir}/nsd.pid"`,
    '  database: ""',
    `  zonelistfile: "${dir}/zone.list"`,
    `  xfrdfile: "${dir}/xfrd.state"`,
    `  xfrdir: "${dir}"`,
    '  server-count: 1',
    '  verbosity: 1',
    'remote-control:',
    '  control-enable: no',
    ...ZONES.flatMap((zone) => ['zone:', `  name: "${zone}"`, `  zonefile: "${zone}.zone"`]),
  ].join('\n');
  await writeFile(join(dir, 'nsd.conf'), `${config}\n`);
  nsd = spawn(NSD, ['-d', '-c', join(dir, 'nsd.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
  nsd.stdout?.on('data', (chunk) => (nsdLog += String(chunk)));
  nsd.stderr?.on('data', (chunk) => (nsdLog += String(chunk)));

  const zones = await loadZoneDirectory(dir);
  owners = [...new Set(zones.flatMap((zone) => zone.records.map((record) => record.name.toLowerCase().replace(/\.$/, ''))))];
  embedded = await startDnsServer({ resolver: new ZoneResolver(zones) });
  viaEmbedded = new NetworkResolver({ servers: [`127.0.0.1:${embedded.address.port}`], timeoutMs: 2000, attempts: 1 });
  viaNsd = new NetworkResolver({ servers: [`127.0.0.1:${port}`], timeoutMs: 500, attempts: 1 });
  const started = Date.now();
  while ((await viaNsd.resolve('p-reject.example', 'SOA')).kind !== 'records') {
    if (Date.now() - started > START_TIMEOUT_MS || nsd.exitCode !== null) {
      throw new Error(`NSD did not start answering on 127.0.0.1:${port}:\n${nsdLog}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}, 30_000);

/** NSD writes its state files as it stops: wait for it to exit (then force it) before removing them. */
async function stopNsd(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(timer);
}

afterAll(async () => {
  if (nsd) await stopNsd(nsd);
  await embedded?.close();
  if (dir) await rm(dir, { recursive: true, force: true, maxRetries: 3 });
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
