/**
 * The fault matrix, over the network and in memory. Every fault the server can inject, on every key
 * lookup of a few fixture domains (their DMARC record, SPF record, MX, and every type of the domain
 * at once), run two ways:
 * - on the wire: the embedded server applies the fault, `NetworkResolver` asks it over UDP/TCP;
 * - in memory: `FaultyResolver` applies the same plan over the `ZoneResolver`.
 * Both must classify every fault the same (identical `DnsAnswer` kind and error reason), give the
 * same check outcome, and no fault may turn a check into a verdict other than the fault-free one:
 * a failure must surface as an error, never as a confident wrong verdict. (The network path once
 * read "TC set even over TCP" as NODATA, and so called protected domains spoofable.)
 */
import dgram from 'node:dgram';
import { fileURLToPath } from 'node:url';
import pLimit from 'p-limit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDomain } from '../../src/check.js';
import { FaultyResolver, type Fault, type FaultPlan, type FaultRule } from '../../src/dns/faults.js';
import { NetworkResolver } from '../../src/dns/network-resolver.js';
import { startDnsServer, type RunningDnsServer } from '../../src/zones/server.js';
import type { DnsAnswer, RecordType, Resolver } from '../../src/dns/types.js';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { isSpoofCheckError } from '../../src/errors.js';
import { loadZoneDirectory } from '../../src/zones/load.js';

const FIXTURE_ZONES = fileURLToPath(new URL('../../../../fixtures/zones/', import.meta.url));
/**
 * Per attempt. Nothing should time out but what is dropped, so the other faults get a wide margin
 * (the matrix runs several pipelines at once on a shared machine); a dropped query costs
 * DROP_TIMEOUT_MS × ATTEMPTS.
 */
const TIMEOUT_MS = 3000;
const DROP_TIMEOUT_MS = 250;
const ATTEMPTS = 1;
/** Pipelines (one server each) running at once. */
const PARALLEL_PIPELINES = 7;
/** Shorter than the timeout: a late answer is still an answer. */
const DELAY_MS = 30;

/** Every fault the server and `FaultyResolver` know. */
const FAULTS: [string, Fault][] = [
  ['servfail', { kind: 'servfail' }],
  ['refused', { kind: 'refused' }],
  ['drop', { kind: 'drop' }],
  ['delay', { kind: 'delay', ms: DELAY_MS }],
  ['truncate over UDP', { kind: 'truncate' }],
  ['truncate over TCP too', { kind: 'truncate', tcp: true }],
  ['malformed', { kind: 'malformed' }],
];

/** Protected, partially protected and spoofable domains, so a fault could move a verdict either way. */
const DOMAINS = ['p-reject.example', 'p-quarantine.example', 'p-none.example', 'no-dmarc.example'];

/** The lookups a verdict rests on; a rule without a type faults every type of the name. */
function targets(domain: string): { name: string; type?: RecordType }[] {
  return [{ name: `_dmarc.${domain}`, type: 'TXT' }, { name: domain, type: 'TXT' }, { name: domain, type: 'MX' }, { name: domain }];
}

type Outcome = { verdict: string } | { error: string };

async function outcome(domain: string, resolver: Resolver): Promise<Outcome> {
  try {
    return { verdict: (await checkDomain(domain, { resolver })).verdict };
  } catch (error) {
    if (isSpoofCheckError(error)) return { error: error.code };
    throw error;
  }
}

function kindOf(answer: DnsAnswer): string {
  return answer.kind === 'error' ? `error: ${answer.reason}` : answer.kind;
}

interface Cell {
  fault: string;
  domain: string;
  target: string;
  /** The answer kind of the faulted lookup itself, each way. */
  networkAnswer: string;
  memoryAnswer: string;
  network: Outcome;
  memory: Outcome;
  faultFree: Outcome;
}

let zones: ZoneResolver;
const servers: RunningDnsServer[] = [];
const cells: Cell[] = [];

beforeAll(async () => {
  zones = new ZoneResolver(await loadZoneDirectory(FIXTURE_ZONES));
  const faultFree = new Map<string, Outcome>();
  for (const domain of DOMAINS) faultFree.set(domain, await outcome(domain, zones));
  // One server per fault and domain, a few side by side (the slow drops first); each pipeline's cells run in turn.
  const pipelines = FAULTS.flatMap(([label, fault]) => DOMAINS.map((domain) => ({ label, fault, domain })));
  pipelines.sort((a, b) => Number(b.fault.kind === 'drop') - Number(a.fault.kind === 'drop'));
  const limit = pLimit(PARALLEL_PIPELINES);
  const results = await Promise.all(
    pipelines.map(({ label, fault, domain }) => limit(async () => {
      const server = await startDnsServer({ resolver: zones, outsideZones: 'nxdomain' });
      servers.push(server);
      const timeoutMs = fault.kind === 'drop' ? DROP_TIMEOUT_MS : TIMEOUT_MS;
      const network = new NetworkResolver({ servers: [`127.0.0.1:${server.address.port}`], timeoutMs, attempts: ATTEMPTS });
      const rows: Cell[] = [];
      for (const target of targets(domain)) {
        const rule: FaultRule = target.type ? { name: target.name, type: target.type, fault } : { name: target.name, fault };
        const plan: FaultPlan = [rule];
        server.setFaults(plan);
        const memory = new FaultyResolver(zones, plan);
        const type = target.type ?? 'TXT';
        const [networkAnswer, memoryAnswer] = await Promise.all([network.resolve(target.name, type), memory.resolve(target.name, type)]);
        const [networkOutcome, memoryOutcome] = await Promise.all([outcome(domain, network), outcome(domain, memory)]);
        rows.push({
          fault: label,
          domain,
          target: `${target.name} ${target.type ?? 'every type'}`,
          networkAnswer: kindOf(networkAnswer),
          memoryAnswer: kindOf(memoryAnswer),
          network: networkOutcome,
          memory: memoryOutcome,
          faultFree: faultFree.get(domain) as Outcome,
        });
      }
      return rows;
    })),
  );
  cells.push(...results.flat());
}, 30_000);

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

describe('the fault matrix over the network and in memory', () => {
  it('covers every fault on every target of every domain', () => {
    expect(cells).toHaveLength(FAULTS.length * DOMAINS.length * 4);
    // The domains differ in verdict, so a fault that flipped one could be seen.
    expect(new Set(DOMAINS.map((domain) => JSON.stringify(cells.find((cell) => cell.domain === domain)?.faultFree))).size).toBeGreaterThan(1);
  });

  it.each(FAULTS.map(([label]) => label))('%s: the faulted lookup gets the same answer kind both ways', (label) => {
    const rows = cells.filter((cell) => cell.fault === label);
    expect(rows.map((cell) => `${cell.target}: ${cell.networkAnswer}`)).toEqual(rows.map((cell) => `${cell.target}: ${cell.memoryAnswer}`));
  });

  it.each(FAULTS.map(([label]) => label))('%s: every check ends the same both ways', (label) => {
    const rows = cells.filter((cell) => cell.fault === label);
    expect(rows.map((cell) => [cell.target, cell.network])).toEqual(rows.map((cell) => [cell.target, cell.memory]));
  });

  it('never gives a confident wrong verdict: a faulted check gives the fault-free verdict or an error', () => {
    const wrong = cells.flatMap((cell) =>
      [cell.network, cell.memory]
        .filter((result) => 'verdict' in result && JSON.stringify(result) !== JSON.stringify(cell.faultFree))
        .map((result) => `${cell.fault} on ${cell.target}: ${JSON.stringify(result)} instead of ${JSON.stringify(cell.faultFree)}`),
    );
    expect(wrong).toEqual([]);
  });

  it.each([
    ['servfail', 'error: servfail'],
    ['refused', 'error: refused'],
    ['drop', 'error: timeout'],
    ['truncate over TCP too', 'error: malformed'],
    ['malformed', 'error: malformed'],
  ])('%s reads as %s on the wire, never as a missing record', (label, kind) => {
    for (const cell of cells.filter((row) => row.fault === label)) expect(cell.networkAnswer).toBe(kind);
  });
});

describe('a resolver that never answers', () => {
  it('makes the check fail with dns_timeout after timeout × attempts, never hang and never give a verdict', async () => {
    // A UDP socket that receives and never replies (and nothing on TCP): a dead resolver.
    const silent = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    const timeoutMs = 150;
    const attempts = 2;
    try {
      const resolver = new NetworkResolver({ servers: [`127.0.0.1:${silent.address().port}`], timeoutMs, attempts });
      const started = Date.now();
      const result = await outcome('p-reject.example', resolver);
      const elapsed = Date.now() - started;
      expect(result).toEqual({ error: 'dns_timeout' });
      expect(elapsed).toBeGreaterThanOrEqual(timeoutMs * attempts - 5);
      // The check's lookups run side by side, so the whole check costs about one lookup's budget.
      expect(elapsed).toBeLessThan(timeoutMs * attempts * 3 + 500);
    } finally {
      silent.close();
    }
  });
});
