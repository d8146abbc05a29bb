/**
 * The cost of `--transport`: the same scan with and without the transport check, side by side,
 * each run in a child process of its own so that its peak RSS is its own. Two sets of names:
 *
 * - `fixtures`: every domain of fixtures/zones (the spoof check's corpus), a few rounds over them.
 *   The probe's defaults hold: the fixtures' MX hosts have no address in the zones or resolve to
 *   documentation addresses, which the address guard refuses, so this measures what the transport
 *   check adds in lookups, parsing and judging, with no connection.
 * - `lab`: the transport lab (test/transport/lab.ts: a test CA, an HTTPS policy host and SMTP
 *   servers on loopback) with `allowPrivateAddresses`: real SMTP sessions, STARTTLS and TLS
 *   handshakes for every MX address, and HTTPS policy fetches; no probe cache (each check probes).
 *
 * Each child checks every name through `checkDomain` (the library under `check` and `scan`) with
 * `SCAN_CONCURRENCY` checks in flight, and reports names per second and its peak RSS
 * (process.resourceUsage().maxRSS). The spoof-only run is the control: its figures are the spoof
 * check's own, unchanged by the opt-in.
 *
 *   npx tsx bench/transport.ts            full run
 *   npx tsx bench/transport.ts --quick    fewer rounds
 *   npx tsx bench/transport.ts --smoke    one round of each (bench/smoke.ts)
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

/** Checks in flight, as `scan` runs them by default. */
export const SCAN_CONCURRENCY = 32;
/** Rounds over the fixture domains (full / quick). */
export const FIXTURE_ROUNDS = { full: 20, quick: 4, smoke: 1 } as const;
/** Rounds over the lab domains (full / quick). */
export const LAB_ROUNDS = { full: 10, quick: 2, smoke: 1 } as const;

type Set = 'fixtures' | 'lab';
type Mode = 'spoof' | 'transport';

interface ChildReport {
  set: Set;
  mode: Mode;
  names: number;
  failed: number;
  /** Probe outcomes over the measured rounds (fixtures: only refused-private, so nothing left the machine). */
  outcomes: Record<string, number>;
  seconds: number;
  namesPerSecond: number;
  peakRssMb: number;
}

const FIXTURE_ZONES = fileURLToPath(new URL('../fixtures/zones/', import.meta.url));

async function child(set: Set, mode: Mode, rounds: number): Promise<void> {
  const { checkDomain } = await import('../packages/engine/src/check.js');
  const { ZoneResolver } = await import('../packages/engine/src/zones/zone-resolver.js');
  const { loadZoneDirectory } = await import('../packages/engine/src/zones/load.js');
  let names: string[];
  let resolver;
  let transport: Record<string, unknown> = {};
  let close = async (): Promise<void> => undefined;
  if (set === 'fixtures') {
    resolver = new ZoneResolver(await loadZoneDirectory(FIXTURE_ZONES));
    names = readdirSync(FIXTURE_ZONES)
      .filter((file) => file.endsWith('.zone'))
      .map((file) => file.slice(0, -'.zone'.length));
  } else {
    const { startLab, LAB_DOMAINS } = await import('../test/transport/lab.js');
    const lab = await startLab();
    close = lab.close;
    resolver = lab.resolver;
    names = LAB_DOMAINS;
    transport = { tlsCa: lab.caPem, connectPorts: { smtp: lab.smtpPort, https: lab.httpsPort }, allowPrivateAddresses: true, ehloName: 'bench.lab.example' };
  }
  let failed = 0;
  const outcomes: Record<string, number> = {};
  const scan = async (queue: string[]): Promise<void> => {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < queue.length) {
        const name = queue[next++] as string;
        try {
          const result = await checkDomain(name, { resolver, ...(mode === 'transport' ? { transport } : {}) });
          for (const mx of result.transport?.mx ?? []) for (const a of mx.addresses) outcomes[a.outcome] = (outcomes[a.outcome] ?? 0) + 1;
        } catch {
          failed++; // a refusal (domain not found, DNS failure) is an answer too: the corpus has some
        }
      }
    };
    await Promise.all(Array.from({ length: SCAN_CONCURRENCY }, worker));
  };
  await scan(names); // one unmeasured round: the JIT warmed, as in a long scan
  failed = 0;
  for (const key of Object.keys(outcomes)) delete outcomes[key];
  const queue = Array.from({ length: rounds }, () => names).flat();
  const started = performance.now();
  await scan(queue);
  const seconds = (performance.now() - started) / 1000;
  await close();
  const report: ChildReport = { set, mode, names: queue.length, failed, outcomes, seconds, namesPerSecond: queue.length / seconds, peakRssMb: process.resourceUsage().maxRSS / 1024 };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

function runChild(set: Set, mode: Mode, rounds: number): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--child', set, mode, String(rounds)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    proc.on('close', (code) => {
      const line = out.trim().split('\n').at(-1) ?? '';
      if (code !== 0 || line === '') return reject(new Error(`bench child ${set}/${mode} exited ${code}`));
      resolve(JSON.parse(line) as ChildReport);
    });
  });
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args[0] === '--child') return child(args[1] as Set, args[2] as Mode, Number(args[3]));
  const { SMOKE } = await import('./smoke.js');
  const quick = args.includes('--quick') || SMOKE;
  const size = SMOKE ? 'smoke' : quick ? 'quick' : 'full';
  const rows: ChildReport[] = [];
  for (const set of ['fixtures', 'lab'] as const) {
    const rounds = set === 'fixtures' ? FIXTURE_ROUNDS[size] : LAB_ROUNDS[size];
    for (const mode of ['spoof', 'transport'] as const) rows.push(await runChild(set, mode, rounds));
  }
  const lines = [
    `Transport benchmark (${size} run, ${SCAN_CONCURRENCY} checks in flight, Node ${process.version}):`,
    '',
    '| names | scan | checks | names/s | peak RSS (MB) |',
    '| --- | --- | ---: | ---: | ---: |',
    ...rows.map((r) => `| ${r.set} | ${r.mode === 'spoof' ? 'spoof check only' : 'with --transport'} | ${r.names} | ${r.namesPerSecond.toFixed(1)} | ${r.peakRssMb.toFixed(0)} |`),
    '',
    ...rows.filter((r) => r.mode === 'transport').map((r) => `${r.set} probe outcomes: ${Object.entries(r.outcomes).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}`),
  ];
  for (const set of ['fixtures', 'lab'] as const) {
    const [spoof, transport] = [rows.find((r) => r.set === set && r.mode === 'spoof'), rows.find((r) => r.set === set && r.mode === 'transport')];
    if (spoof && transport) lines.push('', `${set}: --transport runs at ${((transport.namesPerSecond / spoof.namesPerSecond) * 100).toFixed(0)}% of the spoof-only rate, peak RSS ${transport.peakRssMb - spoof.peakRssMb >= 0 ? '+' : ''}${(transport.peakRssMb - spoof.peakRssMb).toFixed(0)} MB.`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  // The figures as one JSON line, last.
  process.stdout.write(`${JSON.stringify({ transport: rows })}\n`);
}

await main();
