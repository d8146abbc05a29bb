/**
 * Runs NSD (a real authoritative DNS server) on a free loopback port from a temporary directory of
 * zone files, for the acceptance tests. NSD must be installed (Debian: `nsd`): without it `startNsd`
 * throws, saying so, and the test fails.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NetworkResolver } from '../../src/dns/network-resolver.js';

const NSD = '/usr/sbin/nsd';
/** How long NSD may take to start answering, or to load changed zone files. */
const NSD_READY_TIMEOUT_MS = 15_000;

/** A running NSD. */
export interface RunningNsd {
  /** `127.0.0.1:<port>`, for `--resolver`. */
  address: string;
  port: number;
  /** Rewrites the zone files and makes NSD read them (SIGHUP), resolving once `probe` answers `expect`. */
  reload(zones: Map<string, string>, probe: { name: string; type: 'TXT'; includes: string }): Promise<void>;
  stop(): Promise<void>;
}

/** A port free on loopback for TCP now (NSD binds UDP and TCP on it). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function writeZones(dir: string, zones: Map<string, string>): Promise<void> {
  for (const [origin, text] of zones) await writeFile(join(dir, `${origin}.zone`), text);
}

/** Starts NSD serving `zones` (origin → zone file text), and waits until it answers for `readyName`. */
export async function startNsd(zones: Map<string, string>, readyName: string): Promise<RunningNsd> {
  if (spawnSync(NSD, ['-v']).error) throw new Error(`this test needs NSD at ${NSD} (Debian package "nsd"); it is not installed`);
  const dir = await mkdtemp(join(tmpdir(), 'nsd-acceptance-'));
  await writeZones(dir, zones);
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
    ...[...zones.keys()].flatMap((origin) => ['zone:', `  name: "${origin}"`, `  zonefile: "${origin}.zone"`]),
  ].join('\n');
  await writeFile(join(dir, 'nsd.conf'), `${config}\n`);
  let log = '';
  const child: ChildProcess = spawn(NSD, ['-d', '-c', join(dir, 'nsd.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (chunk) => (log += String(chunk)));
  child.stderr?.on('data', (chunk) => (log += String(chunk)));
  const client = new NetworkResolver({ servers: [`127.0.0.1:${port}`], timeoutMs: 500, attempts: 1 });

  const waitFor = async (what: string, ready: () => Promise<boolean>) => {
    const started = Date.now();
    while (!(await ready())) {
      if (Date.now() - started > NSD_READY_TIMEOUT_MS || child.exitCode !== null) {
        throw new Error(`NSD on 127.0.0.1:${port} did not ${what}:\n${log}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  };
  try {
    await waitFor('start answering', async () => (await client.resolve(readyName, 'SOA')).kind === 'records');
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    address: `127.0.0.1:${port}`,
    port,
    stop,
    async reload(next, probe) {
      await writeZones(dir, next);
      child.kill('SIGHUP'); // NSD: "Scans zone files and if changed (mtime) reads them in."
      await waitFor(`load the changed zones (${probe.name} ${probe.type} should include ${probe.includes})`, async () => {
        const answer = await client.resolve(probe.name, probe.type);
        return answer.kind === 'records' && answer.records.some((strings) => strings.join('').includes(probe.includes));
      });
    },
  };
}
