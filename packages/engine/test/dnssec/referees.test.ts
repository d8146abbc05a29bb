/**
 * The referees: every fixture question goes to our validator, to unbound (a validating resolver in
 * forward mode to the embedded server, the fixture trust anchor, `ede: yes`) and to BIND's delv
 * (`-a` anchor file, `+root`), all on loopback, all with the real clock (the fixtures are valid from
 * 2025 to 2035). The rule: never `secure` where a referee says bogus; every other disagreement is
 * listed in `KNOWN_DISAGREEMENTS` and argued in docs/dnssec.md.
 *
 * Needs Debian `unbound` and `bind9-dnsutils` (delv): without them these tests fail and say so.
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningDnsServer } from '../../src/zones/server.js';
import { createRawQuery } from '../../src/dnssec/query.js';
import type { DnssecStatus } from '../../src/dnssec/types.js';
import { Validator } from '../../src/dnssec/validate.js';
import { TYPE } from '../../src/dns/canonical.js';
import { CASES, fixtureAnchors, ROOT_ANCHOR_FILE, startSignedServer } from './helpers.js';

const UNBOUND = '/usr/sbin/unbound';
const DELV = 'delv';

/** What a referee says. `failure`: it could not resolve the name at all (not a validation verdict). */
type RefereeState = 'secure' | 'insecure' | 'bogus' | 'failure';

/**
 * Cases where a referee and we differ on purpose, each argued in docs/dnssec.md ("Disagreements").
 * Key: `referee name type`.
 */
const KNOWN_DISAGREEMENTS: Readonly<Record<string, { ours: DnssecStatus; theirs: RefereeState }>> = {
  // RFC 5155 §9.2: an opt-out span proves nothing about the name; unbound says insecure, delv secure.
  'delv nope.optout.test A': { ours: 'insecure', theirs: 'secure' },
  // delv re-asks the same server after a referral to a child it does not host ("non-improving referral").
  'delv x.deleg.secure-nsec.test A': { ours: 'insecure', theirs: 'failure' },
  'delv x.deleg.secure-nsec3.test A': { ours: 'insecure', theirs: 'failure' },
};

function requireBinary(command: string, args: string[], pkg: string): void {
  const probe = spawnSync(command, args, { encoding: 'utf8' });
  if (probe.error) throw new Error(`${command} is missing: install the Debian package ${pkg} (apt-get install ${pkg})`);
}

async function freeUdpPort(): Promise<number> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

let server: RunningDnsServer;
let dir: string;
let unbound: ChildProcess | undefined;
let unboundPort = 0;
const ours = new Map<string, { status: DnssecStatus; code: number | null }>();

beforeAll(async () => {
  requireBinary(UNBOUND, ['-h'], 'unbound');
  requireBinary(DELV, ['-v'], 'bind9-dnsutils');
  server = await startSignedServer();
  dir = mkdtempSync(join(tmpdir(), 'dnssec-referees-'));
  writeFileSync(join(dir, 'anchor.ds'), readFileSync(ROOT_ANCHOR_FILE));
  const [ds] = readFileSync(ROOT_ANCHOR_FILE, 'utf8').trim().split(/\s+/).slice(4).join(' ').split('\n');
  const [tag, alg, digestType, digest] = (ds as string).split(' ');
  writeFileSync(join(dir, 'delv.conf'), `trust-anchors { "." static-ds ${tag} ${alg} ${digestType} "${digest}"; };\n`);
  unboundPort = await freeUdpPort();
  writeFileSync(
    join(dir, 'unbound.conf'),
    [
      'server:',
      '  interface: 127.0.0.1',
      `  port: ${unboundPort}`,
      '  do-daemonize: no',
      '  username: ""',
      '  chroot: ""',
      `  directory: "${dir}"`,
      '  pidfile: ""',
      '  use-syslog: no',
      `  logfile: "${join(dir, 'unbound.log')}"`,
      '  do-ip6: no',
      '  access-control: 127.0.0.0/8 allow',
      '  do-not-query-localhost: no',
      '  local-zone: "test." nodefault', // .test is a special-use zone unbound answers itself otherwise
      `  trust-anchor-file: "${join(dir, 'anchor.ds')}"`,
      '  ede: yes',
      '  val-log-level: 2',
      '  cache-max-ttl: 0',
      '  cache-max-negative-ttl: 0',
      '  module-config: "validator iterator"',
      'forward-zone:',
      '  name: "."',
      `  forward-addr: 127.0.0.1@${server.address.port}`,
      '',
    ].join('\n'),
  );
  unbound = spawn(UNBOUND, ['-c', join(dir, 'unbound.conf')], { stdio: 'ignore' });
  const probe = createRawQuery([{ host: '127.0.0.1', port: unboundPort }], { checkingDisabled: false, timeoutMs: 500, attempts: 1 });
  for (let i = 0; i < 40; i++) {
    if ((await probe('test', TYPE.SOA)).kind === 'response') break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const query = createRawQuery([server.address]);
  for (const c of CASES) {
    const result = await new Validator({ query, anchors: fixtureAnchors() }).validate(c.name, TYPE[c.type]);
    ours.set(`${c.name} ${c.type}`, { status: result.status, code: result.reason.code });
  }
}, 60_000);

afterAll(async () => {
  unbound?.kill();
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function askUnbound(name: string, type: number): Promise<{ state: RefereeState; ede: number | null }> {
  const response = await createRawQuery([{ host: '127.0.0.1', port: unboundPort }], { checkingDisabled: false, timeoutMs: 5000, attempts: 1 })(name, type);
  if (response.kind === 'error') return { state: 'failure', ede: null };
  const { message } = response;
  const ede = message.opt?.ede?.code ?? null;
  if (message.rcode === 2) return { state: 'bogus', ede };
  return { state: (message.flags & 0x0020) !== 0 ? 'secure' : 'insecure', ede };
}

/** delv runs asynchronously: the embedded server it asks lives in this process's event loop. */
async function askDelv(name: string, type: string): Promise<RefereeState> {
  const out = await new Promise<string>((resolve) => {
    execFile(DELV, ['@127.0.0.1', '-p', String(server.address.port), '-a', join(dir, 'delv.conf'), '+root=.', name || '.', type], { encoding: 'utf8', timeout: 15_000 }, (_error, stdout, stderr) => resolve(`${stdout}\n${stderr}`));
  });
  // The weakest marker wins when a CNAME chain prints several.
  if (/broken trust chain|no valid RRSIG|insecurity proof failed|resolution failed: (?!ncache)/.test(out)) {
    return /FORMERR|non-improving referral/.test(out) ? 'failure' : 'bogus';
  }
  if (/unsigned answer/.test(out)) return 'insecure';
  if (/fully validated/.test(out)) return 'secure';
  return 'failure';
}

describe('unbound as the referee (forward mode, ede: yes)', () => {
  it.each(CASES.map((c) => [`${c.name} ${c.type}`, c] as const))('%s', async (key, c) => {
    const theirs = await askUnbound(c.name, TYPE[c.type]);
    const mine = ours.get(key) as { status: DnssecStatus; code: number | null };
    expect(theirs.state, 'the case table records what unbound says').toBe(c.unbound);
    // The rule: never secure where unbound says bogus.
    if (theirs.state === 'bogus') expect(mine.status).not.toBe('secure');
    const known = KNOWN_DISAGREEMENTS[`unbound ${key}`];
    expect(mine.status).toBe(known ? known.ours : theirs.state);
    // A bogus answer carries the same RFC 8914 code unbound gives.
    if (theirs.state === 'bogus') expect(mine.code).toBe(theirs.ede);
  });
});

describe('delv as the second referee', () => {
  it.each(CASES.map((c) => [`${c.name} ${c.type}`, c] as const))('%s', async (key, c) => {
    const theirs = await askDelv(c.name, c.type);
    const mine = ours.get(key) as { status: DnssecStatus };
    if (theirs === 'bogus') expect(mine.status).not.toBe('secure');
    const known = KNOWN_DISAGREEMENTS[`delv ${key}`];
    if (known) {
      expect([mine.status, theirs]).toEqual([known.ours, known.theirs]);
      return;
    }
    expect(mine.status).toBe(theirs);
  });
});
