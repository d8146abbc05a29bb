/**
 * What does the network resolver's own client cost against Node's c-ares? Starts the embedded DNS
 * server on loopback (in a child process) and measures queries per second of c-ares
 * (`dns.promises.Resolver`, what NetworkResolver used before) and of NetworkResolver (our stub
 * client on dns-packet: a pool of up to 4 sockets per server on random ports, taken in turn and renewed, and a random ID per query, EDNS0, the answer checked against
 * the question and mapped onto `DnsAnswer` with TTLs) over the same TXT names, at concurrency 1
 * and 32.
 *
 *   npx tsx bench/dns-clients.ts [queries-per-run] [--quick | --smoke]   (--quick: 1,000 queries a run; --smoke: 100, one run)
 *
 * The server runs in a child process, so that it does not share the clients' event loop and CPU.
 * Each figure is the median of RUNS runs, the clients taking turns within each run so that drift on
 * a busy machine touches them all alike. The server answers from its encoded-answer cache, so it is
 * not the bottleneck it would be if every answer were encoded again.
 */
import { spawn } from 'node:child_process';
import { Resolver as CaresResolver } from 'node:dns/promises';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { NetworkResolver } from '../packages/engine/src/dns/network-resolver.js';
import { startDnsServer } from '../packages/engine/src/zones/server.js';
import { ZoneResolver } from '../packages/engine/src/zones/zone-resolver.js';
import type { Zone } from '../packages/engine/src/zones/types.js';
import { SMOKE, smokeOr } from './smoke.js';

/** Distinct names queried in turn. */
const NAME_COUNT = 200;
/** Runs per figure; the median is reported. */
const RUNS = smokeOr(1, 5);
const CONCURRENCY_LEVELS = [1, 32] as const;
const DEFAULT_QUERIES_PER_RUN = 4000;
/** Queries per run with --quick, and with --smoke. */
const QUICK_QUERIES_PER_RUN = 1000;
const SMOKE_QUERIES_PER_RUN = 100;

/** The flag the child process is started with. */
const SERVE_FLAG = '--serve';

const names = Array.from({ length: NAME_COUNT }, (_, i) => `host${i}.bench.test`);
const zone: Zone = {
  origin: 'bench.test',
  records: [
    {
      name: 'bench.test',
      type: 'SOA',
      ttl: 3600,
      data: { mname: 'ns.bench.test', rname: 'hostmaster.bench.test', serial: 1, refresh: 3600, retry: 600, expire: 86400, minimum: 60 },
    },
    ...names.map((name, i) => ({ name, type: 'TXT' as const, ttl: 300, data: [`v=spf1 ip4:192.0.2.${i % 250} include:_spf.example.com ~all`] })),
  ],
};

type Query = (name: string) => Promise<unknown>;

/** Queries per second for `total` queries spread over `concurrency` workers. */
async function measure(query: Query, concurrency: number, total: number): Promise<number> {
  let next = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const name = names[next++ % names.length] as string;
        try {
          await query(name);
        } catch {
          failures++;
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  if (failures > 0) console.error(`  (${failures} queries failed)`);
  return total / seconds;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** In the child: serve the zone, print the port, stop when stdin closes. */
async function serve(): Promise<void> {
  const server = await startDnsServer({ resolver: new ZoneResolver([zone]) });
  process.stdout.write(`${server.address.port}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => void server.close().then(() => process.exit(0)));
}

/** Starts the server in a child process (the same loader flags, so tsx runs it too). */
async function startServerProcess(): Promise<{ port: number; stop: () => void }> {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), SERVE_FLAG], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const first = await createInterface({ input: child.stdout })[Symbol.asyncIterator]().next();
  const line = first.done ? undefined : String(first.value);
  const port = Number(line);
  if (!Number.isInteger(port) || port <= 0) throw new Error(`the server process did not start (said ${JSON.stringify(line)})`);
  return { port, stop: () => child.stdin.end() };
}

/** Measures every client at every concurrency level and prints the table. */
async function compare(queriesPerRun: number): Promise<void> {
  const server = await startServerProcess();
  const host = '127.0.0.1';
  const { port } = server;
  const cares = new CaresResolver({ timeout: 2000, tries: 1 });
  cares.setServers([`${host}:${port}`]);
  const network = new NetworkResolver({ servers: [`${host}:${port}`], timeoutMs: 2000, attempts: 1 });
  const clients: [string, Query][] = [
    ['c-ares (dns.promises.Resolver)', (name) => cares.resolveTxt(name)],
    [
      'NetworkResolver (dns-packet stub + mapping)',
      async (name) => {
        const answer = await network.resolve(name, 'TXT');
        if (answer.kind !== 'records') throw new Error(answer.kind);
      },
    ],
  ];

  console.log(`DNS clients against the embedded server on ${host}:${port}, ${queriesPerRun} TXT queries per run, median of ${RUNS}`);
  console.log(`node ${process.version}, c-ares ${process.versions.ares}\n`);
  const results = new Map<string, number[]>(clients.map(([label]) => [label, []]));
  for (const concurrency of CONCURRENCY_LEVELS) {
    for (const [, query] of clients) await measure(query, concurrency, Math.min(500, queriesPerRun)); // warm-up
    const samples = new Map<string, number[]>(clients.map(([label]) => [label, []]));
    for (let run = 0; run < RUNS; run++) {
      for (const [label, query] of clients) samples.get(label)?.push(await measure(query, concurrency, queriesPerRun));
    }
    for (const [label, rates] of samples) results.get(label)?.push(median(rates));
  }
  server.stop();

  const caresRates = results.get(clients[0]![0]) ?? [];
  const ownRates = results.get(clients[1]![0]) ?? [];
  const header = ['client', ...CONCURRENCY_LEVELS.map((c) => `q/s @ ${c}`)];
  const rows = [...results].map(([label, rates]) => [label, ...rates.map((rate) => Math.round(rate).toString())]);
  rows.push(['ratio NetworkResolver / c-ares', ...ownRates.map((rate, i) => `${(rate / (caresRates[i] ?? Number.NaN)).toFixed(2)}×`)]);
  const widths = header.map((_, column) => Math.max(...[header, ...rows].map((row) => (row[column] ?? '').length)));
  const line = (row: string[]) =>
    row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0))).join('  ');
  console.log(line(header));
  console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const row of rows) console.log(line(row));
  // The figures as one JSON line, last.
  console.log(JSON.stringify({ dnsClients: Object.fromEntries([...results].map(([label, rates]) => [label, Object.fromEntries(rates.map((rate, i) => [String(CONCURRENCY_LEVELS[i]), Math.round(rate)]))])) }));
}

if (process.argv[2] === SERVE_FLAG) {
  await serve();
} else {
  const given = process.argv.slice(2).find((arg) => !arg.startsWith('--'));
  const queriesPerRun = Number(given ?? (SMOKE ? SMOKE_QUERIES_PER_RUN : process.argv.includes('--quick') ? QUICK_QUERIES_PER_RUN : DEFAULT_QUERIES_PER_RUN));
  if (!Number.isInteger(queriesPerRun) || queriesPerRun < 1) {
    console.error('usage: npx tsx bench/dns-clients.ts [queries-per-run] [--quick | --smoke]');
    process.exit(2);
  }
  await compare(queriesPerRun);
}
