/**
 * Store benchmark: template versions created per second on SQLite (a temp dir, WAL,
 * synchronous=NORMAL, as `serve --data` runs it) and on PostgreSQL (a throw-away server started here with its durable defaults,
 * the same way the test setup starts one), each as a ratio of the in-memory store measured in the
 * same run. `createVersion` is the store's heaviest write: a transaction that locks the template,
 * reads its versions, inserts one and updates the template.
 *
 *   npx tsx bench/store.ts [--quick]      alone
 *   npm run bench -- --only store         from the suite (bench/run.ts)
 *
 * WORKERS requests are in flight at once, each on a template of its own (a server's shape: many
 * clients, different templates); every template gets a fresh successor after VERSIONS_PER_TEMPLATE
 * versions so that the per-call work stays flat. Backends take turns run by run.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMemoryStores } from '../src/store/memory.js';
import { openPostgresStores } from '../src/store/postgres.js';
import { openSqliteStores } from '../src/store/sqlite.js';
import type { KeyOwner, Stores } from '../src/store/types.js';
import { startPostgres } from '../test/setup/postgres.js';
import { formatCount, measured, MIN_RUNS, ratePerSecond, type Measured } from './stats.js';
import { SMOKE, smokeOr } from './smoke.js';

/** Requests in flight at once. */
export const WORKERS = 8;
/** Versions per template before a worker moves to a new one. */
export const VERSIONS_PER_TEMPLATE = 50;

/** What the store benchmark measured. */
export interface StoreBenchResult {
  workers: number;
  runs: number;
  runMs: number;
  memory: Measured;
  sqlite: Measured;
  postgres: Measured | null;
  /** Why PostgreSQL could not be measured (not installed, did not start). */
  postgresError: string | null;
  sqliteRatio: number;
  postgresRatio: number | null;
  postgresVersion: string | null;
}

const owner: KeyOwner = { id: 'bench', name: 'Bench', email: 'bench@example.test', image: '' };

/** One timed run: WORKERS loops creating versions for `ms` milliseconds; versions per second. */
async function versionsPerSecond(stores: Stores, prefix: string, ms: number): Promise<number> {
  let next = 0;
  const newTemplate = async (): Promise<string> => {
    const id = `${prefix}-${next++}`;
    const at = new Date().toISOString();
    await stores.templates.addTemplate({
      id,
      organizationId: 'org_bench',
      name: id,
      description: null,
      subject: 'Subject',
      fromEmail: 'from@example.test',
      replyTo: null,
      previewText: null,
      status: 'draft',
      currentVersion: null,
      variables: [],
      createdAt: at,
      updatedAt: at,
    });
    return id;
  };
  const rates = await Promise.all(
    Array.from({ length: WORKERS }, async () => {
      let template = await newTemplate();
      let made = 0;
      return ratePerSecond(ms, 1, async () => {
        if (made++ === VERSIONS_PER_TEMPLATE) {
          template = await newTemplate();
          made = 1;
        }
        await stores.templates.createVersion('org_bench', template, { content: [{ type: 'text', text: 'Hello {{first}}' }], createdBy: owner, createdAt: new Date().toISOString() });
      });
    }),
  );
  return rates.reduce((sum, rate) => sum + rate, 0);
}

/** Measures memory, SQLite and PostgreSQL side by side. */
export async function runStoreBenchmark(options: { quick: boolean; say?: (text: string) => void }): Promise<StoreBenchResult> {
  const say = options.say ?? (() => undefined);
  const runMs = options.quick ? smokeOr(50, 500) : 2_000;
  const runs = MIN_RUNS;
  const dir = await mkdtemp(join(tmpdir(), 'bench-store-'));
  const memory = createMemoryStores();
  const sqlite = (await openSqliteStores(dir, { pruneAutomatically: false })).stores;
  let postgresError: string | null = null;
  let server: Awaited<ReturnType<typeof startPostgres>> | undefined;
  let postgres: Stores | undefined;
  let postgresVersion: string | null = null;
  try {
    say('starting PostgreSQL (durable defaults: fsync on) …');
    server = await startPostgres({ durable: true });
    postgres = (await openPostgresStores(server.url, { pruneAutomatically: false, poolSize: WORKERS })).stores;
    postgresVersion = /\/postgresql\/(\d+)\//.exec(server.binDir)?.[1] ?? null;
  } catch (error) {
    postgresError = error instanceof Error ? error.message : String(error);
    say(`PostgreSQL not measured: ${postgresError}`);
  }
  const backends: [string, Stores, number[]][] = [
    ['memory', memory, []],
    ['sqlite', sqlite, []],
    ...(postgres ? [['postgres', postgres, []] as [string, Stores, number[]]] : []),
  ];
  try {
    // Warm-up: one short run each (JIT, connections, the schema in cache).
    for (const [name, stores] of backends) await versionsPerSecond(stores, `warm-${name}`, runMs / 2);
    for (let run = 0; run < runs; run++) {
      // The order rotates, so that no backend always runs right after the same other one.
      for (let i = 0; i < backends.length; i++) {
        const [name, stores, rates] = backends[(run + i) % backends.length]!;
        rates.push(await versionsPerSecond(stores, `run${run}-${name}`, runMs));
      }
      say(`run ${run + 1}/${runs}: ${backends.map(([name, , rates]) => `${name} ${formatCount(rates[rates.length - 1]!)}/s`).join(', ')}`);
    }
  } finally {
    await Promise.all([memory.close(), sqlite.close(), postgres?.close()]);
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  }
  const [memoryRates, sqliteRates, postgresRates] = backends.map(([, , rates]) => rates);
  const memoryMeasured = measured(memoryRates!);
  const sqliteMeasured = measured(sqliteRates!);
  const postgresMeasured = postgresRates ? measured(postgresRates) : null;
  return {
    workers: WORKERS,
    runs,
    runMs,
    memory: memoryMeasured,
    sqlite: sqliteMeasured,
    postgres: postgresMeasured,
    postgresError,
    sqliteRatio: sqliteMeasured.median / memoryMeasured.median,
    postgresRatio: postgresMeasured ? postgresMeasured.median / memoryMeasured.median : null,
    postgresVersion,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = await runStoreBenchmark({ quick: process.argv.includes('--quick') || SMOKE, say: (text) => process.stderr.write(`${text}\n`) });
  const line = (name: string, m: Measured | null, ratio: number | null) =>
    m ? `${name.padEnd(10)} ${formatCount(m.median).padStart(8)} versions/s (${formatCount(m.min)}–${formatCount(m.max)})${ratio === null ? '' : `  ${(ratio * 100).toFixed(1)}% of memory`}` : `${name.padEnd(10)} not measured: ${result.postgresError}`;
  console.log(line('memory', result.memory, null));
  console.log(line('sqlite', result.sqlite, result.sqliteRatio));
  console.log(line(`postgres${result.postgresVersion ?? ''}`, result.postgres, result.postgresRatio));
  console.log(`${result.workers} in flight, ${result.runs} runs of ${result.runMs} ms each, median (min–max).`);
}
