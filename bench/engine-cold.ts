/**
 * Benchmark 2, the engine cold over real DNS on loopback: the embedded DNS server
 * (`startDnsServer` over the synthetic zones) runs in a child process; the engine asks it through
 * the `NetworkResolver` behind a `ConcurrencyLimitedResolver`, with no shared cache, so
 * every check sends every query it needs. Checks run at concurrency 1, 16 and 64.
 *
 * Baseline, in the same run: the ceiling. The same queries the checks send (recorded from one pass)
 * are fired at the server, pre-encoded, over one UDP socket with a fixed number in flight, as fast as
 * it answers; that many queries per second divided by the queries one check sends is the most checks
 * per second the server could serve.
 */
import { createSocket } from 'node:dgram';
import { Resolver as CaresResolver } from 'node:dns/promises';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import type { RecordType, Resolver } from '../packages/engine/src/dns/types.js';
import { engineArgs, type EngineModules } from './engine.js';
import { measured, MIN_RUNS, startChild, type Measured } from './stats.js';
import { smokeOr } from './smoke.js';
import { createKeyPool, syntheticDomainName, type KeyPool } from './synthetic.js';

/** The target: checks per second at least this share of the ceiling. */
export const ENGINE_COLD_TARGET_RATIO = 0.8;
/** Concurrency levels measured. */
export const COLD_CONCURRENCY = [1, 16, 64] as const;
/** Domains the server holds and the checks cycle through. */
export const COLD_DOMAINS = 2000;
export const QUICK_COLD_DOMAINS = smokeOr(50, 1000);
/** Time per measured run. */
export const COLD_RUN_MS = 2000;
export const QUICK_COLD_RUN_MS = smokeOr(50, 300);
/** Measured runs per concurrency level and for the ceiling. */
export const COLD_RUNS = 5;
/**
 * Queries in flight when measuring the ceiling, and the UDP sockets they are spread over: every pair
 * is tried and the best is the ceiling, so that it is the server's capacity at its best, never a
 * client's limit that the engine (4 sockets per server) could beat. `--quick` tries the same pairs
 * with shorter runs: a ceiling measured another way would not be the same figure.
 */
export const CEILING_CONCURRENCY = [64, 256] as const;
export const CEILING_SOCKETS = [1, 16, 64] as const;
/** c-ares queries in flight for the context figure (the engine's own cap on outstanding queries). */
export const CARES_CONCURRENCY = 64;
/** Checks in flight during the first pass, which records the queries and counts them at both ends. */
export const RECORDING_CONCURRENCY = 16;
/** Per-query timeout of the engine's resolver; a query slower than this on loopback is a failure. */
export const COLD_QUERY_TIMEOUT_MS = 3000;

/** Options of the cold engine benchmark. */
export interface EngineColdOptions {
  engine: EngineModules;
  quick?: boolean;
  keys?: KeyPool;
}

/** One concurrency level's figures. */
export interface ColdLevelResult {
  concurrency: number;
  checksPerSec: Measured;
  /** checks per second ÷ the ceiling's checks per second. */
  ratioToCeiling: number;
  /** Median milliseconds per check. */
  p50Ms: number;
  /**
   * Microseconds of this process's CPU (the engine and its DNS client, user and system) per check
   * over the measured runs: what the engine takes from the server it shares the cores with.
   */
  cpuUsPerCheck: number;
  failedChecks: number;
}

/** The cold engine benchmark's figures. */
export interface EngineColdResult {
  domains: number;
  /** Distinct queries the engine sent per check (its own count, `details.dns.queries`). */
  queriesPerCheck: number;
  /** Queries the server received per check (retries or TCP fall-backs would show here). */
  serverQueriesPerCheck: number;
  /** Queries the engine's client sent over TCP while the levels were measured (truncated answers retried). */
  tcpQueries: number;
  /**
   * Queries c-ares sent over TCP during its context runs: it asks without EDNS, so any answer over
   * 512 octets (RFC 1035 §4.2.1; the 2048-bit DKIM keys) comes back truncated and is asked again.
   */
  caresTcpQueries: number;
  /** For context: answers per second Node's c-ares alone gets (the engine's former client, without the engine). */
  caresQueriesPerSec: Measured;
  caresChecksPerSec: number;
  /** The server's raw capacity: answers per second to pre-encoded UDP queries, best of `CEILING_CONCURRENCY`. */
  rawQueriesPerSec: Measured;
  rawConcurrency: number;
  /** The UDP sockets the best ceiling run spread its queries over. */
  rawSockets: number;
  /** rawQueriesPerSec ÷ queriesPerCheck. */
  ceilingChecksPerSec: number;
  levels: ColdLevelResult[];
  /** The best level's ratio to the ceiling (the target applies to it). */
  ratioToCeiling: number;
  runMs: number;
  runs: number;
  target: number;
}

type Lookup = readonly [name: string, type: RecordType];

/** RFC 1035 §3.2.2 and RFC 3596 §2.1 type codes of the queries the engine sends. */
const QTYPE: Readonly<Record<RecordType, number>> = { A: 1, NS: 2, CNAME: 5, SOA: 6, PTR: 12, MX: 15, TXT: 16, AAAA: 28 };

/** RFC 6891 §6.1.2: the OPT pseudo-record the engine's queries carry (root owner, type 41, class = UDP payload 1232, TTL 0, no options). */
const OPT_RECORD = Buffer.from([0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0]);

/**
 * One query message (RFC 1035 §4.1) as the engine's client sends it: a 12-octet header with RD set,
 * one question and an EDNS0 OPT record advertising 1232 octets (RFC 6891; so the server does the same
 * work for it, answers over 512 octets included, as for the engine's query), id 0 (patched per send).
 * Built once per lookup, so the ceiling client spends almost nothing per query.
 */
export function encodeQuery(name: string, type: RecordType): Buffer {
  const labels = name === '' ? [] : name.split('.');
  const question = Buffer.alloc(labels.reduce((sum, label) => sum + 1 + Buffer.byteLength(label), 1) + 4);
  let offset = 0;
  for (const label of labels) {
    offset = question.writeUInt8(Buffer.byteLength(label), offset);
    offset += question.write(label, offset);
  }
  offset = question.writeUInt8(0, offset); // the root label ends the name
  offset = question.writeUInt16BE(QTYPE[type], offset);
  question.writeUInt16BE(1, offset); // class IN
  const header = Buffer.from([0, 0, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 1]); // RD; QDCOUNT 1; ARCOUNT 1 (the OPT record)
  return Buffer.concat([header, question, OPT_RECORD]);
}

/**
 * The server's capacity: pre-encoded queries over `socketCount` UDP sockets taken in turn, `inFlight`
 * outstanding at all times, for `ms`; answers per second. Each answer (whatever its RCODE) frees its
 * slot for the next query. A query unanswered for a second is written off and replaced, so a lost
 * datagram cannot stall the window.
 */
async function rawQueriesPerSecond(port: number, queries: readonly Buffer[], cursor: Cursor, inFlight: number, ms: number, socketCount = 1): Promise<number> {
  const sockets = Array.from({ length: socketCount }, () => createSocket('udp4'));
  await Promise.all(sockets.map((one) => new Promise<void>((resolve) => one.bind(0, '127.0.0.1', () => resolve()))));
  let turn = 0;
  // One query id space over all the sockets: an id names one query, whichever socket its answer comes back on.
  const socket = {
    send: (message: Buffer, to: number, host: string) => (sockets[turn++ % sockets.length] as ReturnType<typeof createSocket>).send(message, to, host),
    on: (event: 'message', listener: (message: Buffer) => void) => {
      for (const one of sockets) one.on(event, listener);
    },
    close: () => {
      for (const one of sockets) one.close();
    },
  };
  const sentAt = new Map<number, number>();
  let nextId = 1;
  let answered = 0;
  const started = performance.now();
  const end = started + ms;
  const send = () => {
    const id = nextId;
    nextId = (nextId % 0xffff) + 1;
    const message = Buffer.from(queries[cursor.next++ % queries.length] as Buffer);
    message.writeUInt16BE(id, 0);
    sentAt.set(id, performance.now());
    socket.send(message, port, '127.0.0.1');
  };
  let watchdog: NodeJS.Timeout | undefined;
  const done = new Promise<void>((resolve) => {
    socket.on('message', (message) => {
      if (message.length < 2 || !sentAt.delete(message.readUInt16BE(0))) return;
      answered++;
      if (performance.now() < end) send();
      else if (sentAt.size === 0) resolve();
    });
    watchdog = setInterval(() => {
      const now = performance.now();
      for (const [id, at] of sentAt) {
        if (now - at < 1000) continue;
        sentAt.delete(id);
        if (now < end) send();
      }
      if (now >= end && sentAt.size === 0) resolve();
    }, 100);
  });
  for (let index = 0; index < inFlight; index++) send();
  await done;
  clearInterval(watchdog);
  const elapsed = performance.now() - started;
  socket.close();
  return answered / (elapsed / 1000);
}

/** Bare c-ares, one call per record type; NXDOMAIN and NODATA reject, and that is an answer too. */
function caresRawQuery(client: CaresResolver, [name, type]: Lookup): Promise<unknown> {
  switch (type) {
    case 'TXT':
      return client.resolveTxt(name);
    case 'MX':
      return client.resolveMx(name);
    case 'A':
      return client.resolve4(name);
    case 'AAAA':
      return client.resolve6(name);
    default:
      return client.resolve(name, type);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Where a stream of items goes on from. Every measurement continues where the previous one of its
 * kind stopped, so the server sees the whole set of questions cycle (more than its 10,000 encoded
 * answers) rather than the same first few thousand each run, which it would answer from memory.
 */
interface Cursor {
  next: number;
}

/**
 * `workers` loops, each taking the next item, until stopped. `window(ms)` counts the completions
 * during the next `ms` and returns them per second.
 */
function sustain<T>(items: readonly T[], cursor: Cursor, workers: number, task: (item: T) => Promise<void>) {
  let completed = 0;
  let running = true;
  let cpuAt = process.cpuUsage();
  let completedAt = 0;
  const done = Promise.all(
    Array.from({ length: workers }, async () => {
      while (running) {
        await task(items[cursor.next++ % items.length] as T);
        completed++;
      }
    }),
  );
  return {
    async window(ms: number): Promise<number> {
      const before = completed;
      const started = performance.now();
      await sleep(ms);
      return (completed - before) / ((performance.now() - started) / 1000);
    },
    /** Starts counting CPU and completions for `cpuPerCompletion`. */
    markCpu(): void {
      cpuAt = process.cpuUsage();
      completedAt = completed;
    },
    /** Microseconds of this process's CPU per completion since `markCpu`. */
    cpuPerCompletion(): number {
      const used = process.cpuUsage(cpuAt);
      return (used.user + used.system) / Math.max(1, completed - completedAt);
    },
    async stop(): Promise<void> {
      running = false;
      await done;
    },
  };
}

/**
 * `workers` loops, each taking the next item until `ms` has passed (or, with `limit`, until `limit`
 * items were taken); returns completions per second.
 */
async function drive<T>(
  items: readonly T[],
  cursor: Cursor,
  workers: number,
  ms: number,
  task: (item: T) => Promise<void>,
  limit?: number,
): Promise<{ rate: number; completed: number }> {
  const first = cursor.next;
  let completed = 0;
  const started = performance.now();
  const end = started + ms;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (limit === undefined ? performance.now() < end : cursor.next - first < limit) {
        await task(items[cursor.next++ % items.length] as T);
        completed++;
      }
    }),
  );
  return { rate: completed / ((performance.now() - started) / 1000), completed };
}

/** Runs the cold engine benchmark (starts and stops the server process). */
export async function runEngineColdBenchmark(options: EngineColdOptions): Promise<EngineColdResult> {
  const { api } = options.engine;
  const quick = options.quick ?? false;
  const keys = options.keys ?? createKeyPool();
  const domainCount = quick ? QUICK_COLD_DOMAINS : COLD_DOMAINS;
  const runMs = quick ? QUICK_COLD_RUN_MS : COLD_RUN_MS;
  const runs = quick ? MIN_RUNS : COLD_RUNS;
  const domains = Array.from({ length: domainCount }, (_, index) => syntheticDomainName(index));

  const child = startChild(fileURLToPath(new URL('./dns-server-child.ts', import.meta.url)), engineArgs(options.engine));
  try {
    child.send({ start: { domains: domainCount, keys } });
    const { port } = await child.next<{ port: number }>();
    const server = `127.0.0.1:${port}`;
    const serverStats = async () => {
      child.send({ stats: true });
      return child.next<{ udp: number; tcp: number }>();
    };
    const serverQueries = async () => {
      const stats = await serverStats();
      return stats.udp + stats.tcp;
    };

    // The engine's resolver: the service's stack without the shared cache (a cold check asks everything).
    const network = new api.NetworkResolver({ servers: [server], timeoutMs: COLD_QUERY_TIMEOUT_MS });
    const limited = new api.ConcurrencyLimitedResolver(network);

    // One pass over every domain records the queries the checks send (and warms the JIT). The
    // ceiling replays all of them, so the server sees the same set of distinct questions as under
    // the checks (its encoded-answer cache holds 10,000, fewer than the checks ask: a shorter
    // replay would be served from that cache and overstate the ceiling).
    const lookups: Lookup[] = [];
    const recorder: Resolver = {
      resolve: (name, type) => {
        lookups.push([name, type]);
        return limited.resolve(name, type);
      },
    };
    let engineQueries = 0;
    let checked = 0;
    const before = await serverQueries();
    await drive(domains, { next: 0 }, RECORDING_CONCURRENCY, 0, async (domain) => {
      const result = await api.checkDomain(domain, { resolver: recorder }).catch(() => null);
      if (result) engineQueries += (result.details.dns as { queries: number }).queries;
      checked++;
    }, domains.length);
    const serverQueriesPerCheck = ((await serverQueries()) - before) / checked;
    const queriesPerCheck = engineQueries / checked;

    // The ceiling: the same queries, pre-encoded, from the cheapest client there is, at the number
    // in flight and of sockets that gets the most answers from the server.
    const encoded = lookups.map(([name, type]) => encodeQuery(name, type));
    const rawCursor: Cursor = { next: 0 };
    let best: { concurrency: number; sockets: number; rates: number[] } | undefined;
    for (const concurrency of CEILING_CONCURRENCY) {
      for (const sockets of CEILING_SOCKETS) {
        await rawQueriesPerSecond(port, encoded, rawCursor, concurrency, runMs / 2, sockets); // warm-up
        const rates: number[] = [];
        for (let run = 0; run < runs; run++) rates.push(await rawQueriesPerSecond(port, encoded, rawCursor, concurrency, runMs, sockets));
        if (!best || measured(rates).median > measured(best.rates).median) best = { concurrency, sockets, rates };
      }
    }
    const rawQueriesPerSec = measured(best!.rates);

    // For context: what c-ares alone (the engine's former client, without the engine) gets from the server.
    const cares = new CaresResolver({ timeout: COLD_QUERY_TIMEOUT_MS, tries: 1 });
    cares.setServers([server]);
    const caresQuery = (lookup: Lookup) => caresRawQuery(cares, lookup).then(
      () => {},
      () => {},
    );
    const caresTcpBefore = (await serverStats()).tcp;
    const caresCursor: Cursor = { next: 0 };
    await drive(lookups, caresCursor, CARES_CONCURRENCY, runMs / 2, caresQuery);
    const caresRates: number[] = [];
    for (let run = 0; run < runs; run++) caresRates.push((await drive(lookups, caresCursor, CARES_CONCURRENCY, runMs, caresQuery)).rate);
    const caresQueriesPerSec = measured(caresRates);
    const caresTcpQueries = (await serverStats()).tcp - caresTcpBefore;
    const ceilingChecksPerSec = rawQueriesPerSec.median / queriesPerCheck;

    const tcpBefore = (await serverStats()).tcp;
    const levels: ColdLevelResult[] = [];
    const domainCursor: Cursor = { next: 0 };
    for (const concurrency of COLD_CONCURRENCY) {
      const rates: number[] = [];
      const latencies: number[] = [];
      let failedChecks = 0;
      const check = async (domain: string) => {
        const started = performance.now();
        try {
          await api.checkDomain(domain, { resolver: limited });
        } catch {
          failedChecks++;
        }
        latencies.push(performance.now() - started);
      };
      // The load runs without a break; the runs are consecutive windows of it, so that no run
      // pays for filling the pipeline or waits for its last checks (at 64 a check takes ~0.2 s).
      const load = sustain(domains, domainCursor, concurrency, check);
      await sleep(runMs / 2); // warm-up at this level
      latencies.length = 0;
      failedChecks = 0;
      load.markCpu();
      for (let run = 0; run < runs; run++) rates.push(await load.window(runMs));
      const cpuUsPerCheck = load.cpuPerCompletion();
      await load.stop();
      const checksPerSec = measured(rates);
      levels.push({
        concurrency,
        checksPerSec,
        ratioToCeiling: checksPerSec.median / ceilingChecksPerSec,
        p50Ms: measured(latencies).median,
        cpuUsPerCheck,
        failedChecks,
      });
    }
    return {
      domains: domainCount,
      queriesPerCheck,
      serverQueriesPerCheck,
      tcpQueries: (await serverStats()).tcp - tcpBefore,
      caresTcpQueries,
      caresQueriesPerSec,
      caresChecksPerSec: caresQueriesPerSec.median / queriesPerCheck,
      rawQueriesPerSec,
      rawConcurrency: best!.concurrency,
      rawSockets: best!.sockets,
      ceilingChecksPerSec,
      levels,
      ratioToCeiling: Math.max(...levels.map((level) => level.ratioToCeiling)),
      runMs,
      runs,
      target: ENGINE_COLD_TARGET_RATIO,
    };
  } finally {
    await child.stop();
  }
}
